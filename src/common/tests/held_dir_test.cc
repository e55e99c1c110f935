// Root's writes where a user shapes the files: nothing a user plants there
// (a link, a link for a folder, a tree too deep) turns one into a write,
// an ownership change or a removal elsewhere.
#include "common/held_dir.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/tests/test_dir.h"

namespace trainyard {
namespace {

namespace fs = std::filesystem;

std::string Read(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

uid_t OwnerOf(const fs::path& p) {
  struct stat st {};
  lstat(p.c_str(), &st);
  return st.st_uid;
}

class HeldDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = FreshTestDir("trainyard-held-dir");
    std::ofstream(dir_ / "precious") << "keep";
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(HeldDirTest, AFileWrittenOverALinkReplacesTheLinkNotWhatItNames) {
  Result<HeldDir> held = HeldDir::OpenOwn((dir_ / "pod").string(), 0711);
  ASSERT_TRUE(held.ok()) << held.status().ToString();
  fs::create_symlink(dir_ / "precious", dir_ / "pod/etc-hosts");
  ASSERT_TRUE(held->WriteFile("etc-hosts", "127.0.0.1 a\n", 0644).ok());
  EXPECT_EQ(Read(dir_ / "precious"), "keep");
  EXPECT_FALSE(fs::is_symlink(dir_ / "pod/etc-hosts"));
  EXPECT_EQ(Read(dir_ / "pod/etc-hosts"), "127.0.0.1 a\n");
  EXPECT_EQ(fs::status(dir_ / "pod/etc-hosts").permissions(),
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                fs::perms::others_read);
  // No temporary file is left behind.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_ / "pod"), fs::directory_iterator()), 1);
}

TEST_F(HeldDirTest, AFolderThatIsALinkIsRefusedNotFollowed) {
  Result<HeldDir> held = HeldDir::OpenOwn((dir_ / "pod").string(), 0711);
  ASSERT_TRUE(held.ok());
  fs::create_directory(dir_ / "elsewhere");
  fs::create_directory_symlink(dir_ / "elsewhere", dir_ / "pod/volume");
  EXPECT_FALSE(held->Child("volume", 0755).ok());
  EXPECT_FALSE(held->Descend("volume/sub", 0755).ok());
  EXPECT_FALSE(fs::exists(dir_ / "elsewhere/sub"));
  EXPECT_FALSE(held->Child("../escape", 0755).ok());
  // The folder itself may be no link either.
  fs::create_directory_symlink(dir_ / "elsewhere", dir_ / "linked");
  EXPECT_FALSE(HeldDir::OpenOwn((dir_ / "linked").string(), 0711).ok());
}

TEST_F(HeldDirTest, RemovingATreeRemovesLinksNotWhatTheyNameAndAnyDepth) {
  fs::path tree = dir_ / "tree";
  fs::create_directories(tree / "a/b");
  fs::create_directory(dir_ / "outside");
  std::ofstream(dir_ / "outside/file") << "keep";
  fs::create_directory_symlink(dir_ / "outside", tree / "a/b/dirlink");
  fs::create_symlink(dir_ / "precious", tree / "a/filelink");
  // Deeper than any walk holds open at once.
  fs::path deep = tree / "deep";
  for (int i = 0; i < 200; ++i) deep /= "d";
  fs::create_directories(deep);
  std::ofstream(deep / "f") << "x";
  Status removed = RemoveTree(tree.string());
  ASSERT_TRUE(removed.ok()) << removed.ToString();
  EXPECT_FALSE(fs::exists(fs::symlink_status(tree)));
  EXPECT_EQ(Read(dir_ / "outside/file"), "keep");
  EXPECT_EQ(Read(dir_ / "precious"), "keep");
  EXPECT_TRUE(RemoveTree((dir_ / "absent").string()).ok());
}

TEST_F(HeldDirTest, GivingATreeHandsOverNoLinkTargetNorAnotherFilesHardLink) {
  if (geteuid() != 0) GTEST_SKIP() << "changing owners needs root";
  fs::create_directories(dir_ / "tree/sub");
  std::ofstream(dir_ / "tree/sub/file") << "x";
  fs::create_symlink(dir_ / "precious", dir_ / "tree/link");
  fs::create_hard_link(dir_ / "precious", dir_ / "tree/hard");
  ASSERT_TRUE(GiveTree((dir_ / "tree").string(), {4000123, 4000456}).ok());
  EXPECT_EQ(OwnerOf(dir_ / "tree"), 4000123u);
  EXPECT_EQ(OwnerOf(dir_ / "tree/sub/file"), 4000123u);
  EXPECT_EQ(OwnerOf(dir_ / "tree/link"), 4000123u);  // the link itself
  EXPECT_EQ(OwnerOf(dir_ / "precious"), 0u);         // neither what it names nor its hard link
}

TEST_F(HeldDirTest, AFolderAUserOwnedIsTakenBackAndWhatIsMadeIsHandedOver) {
  if (geteuid() != 0) GTEST_SKIP() << "changing owners needs root";
  fs::create_directory(dir_ / "pod");
  ASSERT_EQ(chown((dir_ / "pod").c_str(), 4000123, 4000456), 0);
  Result<HeldDir> held = HeldDir::OpenOwn((dir_ / "pod").string(), 0711);
  ASSERT_TRUE(held.ok());
  EXPECT_EQ(OwnerOf(dir_ / "pod"), 0u);
  ASSERT_TRUE(held->Child("scratch", 0750, FileOwner{4000123, 4000456}).ok());
  EXPECT_EQ(OwnerOf(dir_ / "pod/scratch"), 4000123u);
  ASSERT_TRUE(held->WriteFile("key", "v", 0400, FileOwner{4000123, 4000456}).ok());
  EXPECT_EQ(OwnerOf(dir_ / "pod/key"), 4000123u);
}

}  // namespace
}  // namespace trainyard
