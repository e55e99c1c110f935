// `trainyard initialize`, in-process: what a storage URI may name, and a
// copy that follows links, refuses loops and overlaps, and can be rerun
// over read-only data.
#include "cli/initialize_command.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/tests/test_dir.h"

namespace trainyard::cli {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class InitializeCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = FreshTestDir("trainyard-initialize-test");
    fs::create_directories(dir_ / "data" / "sub");
    std::ofstream(dir_ / "data" / "rows.csv") << "1,2,3\n";
    std::ofstream(dir_ / "data" / "sub" / "more.csv") << "4\n";
  }
  void TearDown() override {
    std::error_code ec;
    for (const auto& entry : fs::recursive_directory_iterator(dir_, ec)) {
      fs::permissions(entry.path(), fs::perms::owner_all, fs::perm_options::add, ec);
    }
    fs::remove_all(dir_);
    unsetenv("STORAGE_URI");
  }

  // Runs it with STORAGE_URI `uri` into dir_/dest; its exit code, and what
  // it said on stderr in `said`.
  int Initialize(const std::string& uri, const fs::path& dest = {}) {
    setenv("STORAGE_URI", uri.c_str(), 1);
    ::testing::internal::CaptureStderr();
    int code = RunInitialize(
        {.what = "dataset", .destination = (dest.empty() ? dir_ / "dest" : dest).string()});
    said = ::testing::internal::GetCapturedStderr();
    return code;
  }
  static std::string Read(const fs::path& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  fs::path dir_;
  std::string said;
};

TEST_F(InitializeCommandTest, FileUrisLocalhostPlainPathsAndPercentEncodingNameTheSameFolder) {
  fs::rename(dir_ / "data", dir_ / "my data");
  for (const std::string& uri :
       {"file://" + (dir_ / "my%20data").string(),
        "file://localhost" + (dir_ / "my%20data").string(), "file:" + (dir_ / "my%20data").string(),
        (dir_ / "my data").string()}) {
    fs::remove_all(dir_ / "dest");
    EXPECT_EQ(Initialize(uri), 0) << uri << ": " << said;
    EXPECT_EQ(Read(dir_ / "dest" / "sub" / "more.csv"), "4\n") << uri;
  }
  EXPECT_EQ(Initialize("file://elsewhere/data"), 1);
  EXPECT_THAT(said, HasSubstr("a file URI here names this machine"));
  EXPECT_EQ(Initialize("data/x"), 1);
  EXPECT_THAT(said, HasSubstr("data/x is neither a URI nor an absolute path"));
  EXPECT_EQ(Initialize("file:///data%00x"), 1);
  EXPECT_THAT(said, HasSubstr("NUL"));
  EXPECT_EQ(Initialize("s3://bucket/data"), 1);
  EXPECT_THAT(said, HasSubstr("cannot fetch s3://bucket/data: trainyard fetches only file:// "
                              "URIs and paths on this machine (no s3:// store"));
}

TEST_F(InitializeCommandTest, LinksAreFollowedToTheDataTheyName) {
  fs::create_directories(dir_ / "cache" / "blobs");
  std::ofstream(dir_ / "cache" / "blobs" / "abc") << "weights";
  fs::create_directories(dir_ / "cache" / "snapshot");
  fs::create_symlink("../blobs/abc", dir_ / "cache" / "snapshot" / "model.bin");
  fs::create_directory_symlink(dir_ / "cache" / "snapshot", dir_ / "latest");
  EXPECT_EQ(Initialize("file://" + (dir_ / "latest").string()), 0) << said;
  EXPECT_FALSE(fs::is_symlink(dir_ / "dest" / "model.bin"));
  EXPECT_EQ(Read(dir_ / "dest" / "model.bin"), "weights");
}

TEST_F(InitializeCommandTest, ALoopOrAnOverlapIsRefusedNotCopiedForever) {
  fs::create_directory_symlink("..", dir_ / "data" / "sub" / "up");
  EXPECT_EQ(Initialize((dir_ / "data").string()), 1);
  EXPECT_THAT(said, HasSubstr("loops back into a folder above it"));
  fs::remove(dir_ / "data" / "sub" / "up");
  EXPECT_EQ(Initialize((dir_ / "data").string(), dir_ / "data" / "dataset"), 1);
  EXPECT_THAT(said, HasSubstr("overlap: a copy would copy itself"));
  EXPECT_EQ(Initialize(dir_.string(), dir_ / "dest"), 1);
  EXPECT_THAT(said, HasSubstr("overlap"));
  // A link inside the source that leads into the destination: each copy
  // made there would be copied again.
  fs::create_directory_symlink(dir_ / "dest", dir_ / "data" / "out");
  EXPECT_EQ(Initialize((dir_ / "data").string()), 1);
  EXPECT_THAT(said, HasSubstr("leads into the destination"));
  EXPECT_FALSE(fs::exists(dir_ / "dest" / "out" / "out"));
}

TEST_F(InitializeCommandTest, ReadOnlyDataIsCopiedAndCanBeCopiedAgain) {
  fs::permissions(dir_ / "data" / "rows.csv", fs::perms(0444));
  fs::permissions(dir_ / "data" / "sub", fs::perms(0555));
  fs::permissions(dir_ / "data", fs::perms(0555));
  EXPECT_EQ(Initialize((dir_ / "data").string()), 0) << said;
  // Writable by their owner (the replica's user), whatever the source's
  // modes: root, which writes anyway, would not notice otherwise.
  for (const char* path : {"", "sub", "rows.csv", "sub/more.csv"}) {
    fs::perms perms = fs::status(dir_ / "dest" / path).permissions();
    EXPECT_NE(perms & fs::perms::owner_write, fs::perms::none) << path;
  }
  EXPECT_EQ(Initialize((dir_ / "data").string()), 0) << "a rerun over what it wrote: " << said;
  EXPECT_EQ(Read(dir_ / "dest" / "rows.csv"), "1,2,3\n");
}

}  // namespace
}  // namespace trainyard::cli
