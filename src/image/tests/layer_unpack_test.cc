#include "image/layer_unpack.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "common/tests/test_dir.h"
#include "image/tests/layer_tar.h"

namespace trainyard::image {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::TarEntry;
using testing::WriteLayer;

class LayerUnpackTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = FreshTestDir("trainyard-layer"); }
  void TearDown() override { fs::remove_all(dir_); }

  Result<UnpackedLayer> Unpack(const std::vector<TarEntry>& entries) {
    WriteLayer((dir_ / "layer.tar.gz").string(), entries);
    return UnpackLayer((dir_ / "layer.tar.gz").string(), (dir_ / "out").string(),
                       {.privileged = geteuid() == 0});
  }

  static std::string Read(const fs::path& path) {
    std::ifstream in(path);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }

  fs::path dir_;
};

TEST_F(LayerUnpackTest, FilesLinksAndModesLandAsTheLayerHasThem) {
  Result<UnpackedLayer> unpacked =
      Unpack({{.path = "./app", .type = 'd', .mode = 0755},
              {.path = "app/run.sh", .content = "echo hi\n", .mode = 0755},
              {.path = "app/link", .type = 'l', .content = "run.sh"},
              {.path = "app/hard", .type = 'h', .content = "app/run.sh"},
              {.path = "/etc/abs", .content = "rooted"}});
  ASSERT_TRUE(unpacked.ok()) << unpacked.status().ToString();
  fs::path out = dir_ / "out";
  EXPECT_EQ(Read(out / "app/run.sh"), "echo hi\n");
  EXPECT_EQ(fs::status(out / "app/run.sh").permissions() & fs::perms::owner_exec,
            fs::perms::owner_exec);
  EXPECT_EQ(fs::read_symlink(out / "app/link"), "run.sh");
  EXPECT_TRUE(fs::equivalent(out / "app/hard", out / "app/run.sh"));
  // A leading "/" means the layer's root, not the machine's.
  EXPECT_EQ(Read(out / "etc/abs"), "rooted");
  EXPECT_EQ(unpacked->bytes, 8u + 6u);
}

// Debian 12's umoci `insert` ends a layer right after its last file's
// bytes (no padding, no end blocks): read as Go's archive/tar reads it.
// A layer cut inside a file's bytes is still refused.
TEST_F(LayerUnpackTest, ALayerEndingRightAfterItsLastFileIsWhole) {
  fs::path blob = dir_ / "layer.tar";
  WriteLayer(blob.string(), {{.path = "bin/tool", .content = std::string(1000, 'x')}}, false);
  // One header block, then the file's 1,000 bytes: all its maker wrote.
  fs::resize_file(blob, 512 + 1000);
  Result<UnpackedLayer> unpacked =
      UnpackLayer(blob.string(), (dir_ / "out").string(), {.privileged = geteuid() == 0});
  ASSERT_TRUE(unpacked.ok()) << unpacked.status().ToString();
  EXPECT_EQ(Read(dir_ / "out/bin/tool"), std::string(1000, 'x'));

  fs::resize_file(blob, 512 + 999);
  Result<UnpackedLayer> cut =
      UnpackLayer(blob.string(), (dir_ / "cut").string(), {.privileged = geteuid() == 0});
  EXPECT_FALSE(cut.ok());

  // A gzip stream cut before its checksum is no whole layer either.
  fs::path gz = dir_ / "layer.tar.gz";
  WriteLayer(gz.string(), {{.path = "bin/tool", .content = std::string(1000, 'x')}});
  fs::resize_file(gz, fs::file_size(gz) - 4);
  Result<UnpackedLayer> no_checksum =
      UnpackLayer(gz.string(), (dir_ / "gz").string(), {.privileged = geteuid() == 0});
  EXPECT_FALSE(no_checksum.ok());
}

TEST_F(LayerUnpackTest, DirectoriesTheLayerDoesNotListAreEveryonesToPass) {
  mode_t old = umask(077);  // trainyard's own
  Result<UnpackedLayer> unpacked =
      Unpack({{.path = "a/b/file", .content = "x"}, {.path = "c/.wh.gone"}});
  umask(old);
  ASSERT_TRUE(unpacked.ok()) << unpacked.status().ToString();
  for (const char* dir : {"a", "a/b", "c"}) {
    EXPECT_EQ(fs::status(dir_ / "out" / dir).permissions(), fs::perms(0755)) << dir;
  }
}

TEST_F(LayerUnpackTest, WhiteoutsBecomeOverlayfsOnes) {
  ASSERT_TRUE(Unpack({{.path = "app/.wh.old"}, {.path = "data/.wh..wh..opq"}}).ok());
  struct stat st;
  ASSERT_EQ(lstat((dir_ / "out/app/old").c_str(), &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  EXPECT_EQ(st.st_rdev, makedev(0, 0));
  EXPECT_FALSE(fs::exists(dir_ / "out/app/.wh.old"));
  char value[4] = {};
  ASSERT_EQ(getxattr((dir_ / "out/data").c_str(), OpaqueXattr(geteuid() == 0), value, sizeof value),
            1)
      << "the opaque directory's xattr";
  EXPECT_EQ(value[0], 'y');
}

TEST_F(LayerUnpackTest, AnEntryThatWouldLeaveTheLayerRefusesItWhole) {
  Result<UnpackedLayer> unpacked =
      Unpack({{.path = "fine", .content = "x"}, {.path = "a/../../escape", .content = "x"}});
  ASSERT_FALSE(unpacked.ok());
  EXPECT_THAT(unpacked.status().message(), HasSubstr("leaves the layer"));
  EXPECT_FALSE(fs::exists(dir_ / "escape"));
  EXPECT_FALSE(fs::exists(dir_ / "out")) << "nothing of a refused layer is kept";
}

TEST_F(LayerUnpackTest, NothingIsWrittenThroughASymlinkTheLayerMade) {
  fs::create_directories(dir_ / "outside");
  Result<UnpackedLayer> unpacked =
      Unpack({{.path = "lib", .type = 'l', .content = (dir_ / "outside").string()},
              {.path = "lib/planted", .content = "x"}});
  ASSERT_FALSE(unpacked.ok());
  EXPECT_THAT(unpacked.status().message(), HasSubstr("lies past a symlink"));
  EXPECT_FALSE(fs::exists(dir_ / "outside/planted"));
  EXPECT_FALSE(fs::exists(dir_ / "out"));
}

TEST_F(LayerUnpackTest, AWhiteoutPastASymlinkIsRefused) {
  fs::create_directories(dir_ / "outside");
  std::ofstream(dir_ / "outside/keep") << "x";
  Result<UnpackedLayer> unpacked =
      Unpack({{.path = "lib", .type = 'l', .content = (dir_ / "outside").string()},
              {.path = "lib/.wh.keep"}});
  ASSERT_FALSE(unpacked.ok());
  EXPECT_THAT(unpacked.status().message(), HasSubstr("past a symlink"));
  struct stat st;
  ASSERT_EQ(lstat((dir_ / "outside/keep").c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
}

TEST_F(LayerUnpackTest, AnUnpackedLayerIsNeverOverwritten) {
  fs::create_directories(dir_ / "out");
  Result<UnpackedLayer> unpacked = Unpack({{.path = "f", .content = "x"}});
  ASSERT_FALSE(unpacked.ok());
  EXPECT_EQ(unpacked.status().code(), StatusCode::kAlreadyExists);
}

}  // namespace
}  // namespace trainyard::image
