#include "image/image_user.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "common/tests/test_dir.h"

namespace trainyard::image {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

class ImageUserTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = FreshTestDir("trainyard-image-user");
    Write("base", "passwd",
          "root:x:0:0:root:/root:/bin/sh\n"
          "# a comment\n"
          "broken line\n"
          "app:x:1000:1000::/home/app:/bin/sh\n");
    Write("base", "group", "root:x:0:\napp:x:1000:\nvideo:x:44:app,other\ngpu:x:45:app\n");
  }
  void TearDown() override { fs::remove_all(dir_); }

  void Write(const std::string& layer, const std::string& file, const std::string& text) {
    fs::create_directories(dir_ / layer / "etc");
    std::ofstream(dir_ / layer / "etc" / file) << text;
  }
  std::vector<std::string> Layers(std::vector<std::string> names) const {
    for (std::string& name : names) name = (dir_ / name).string();
    return names;
  }

  fs::path dir_;
};

TEST_F(ImageUserTest, ANameIsReadFromTheImagesPasswdWithItsGroups) {
  Result<ImageUser> user = ResolveImageUser(Layers({"base"}), "app");
  ASSERT_TRUE(user.ok()) << user.status().ToString();
  EXPECT_EQ(*user,
            (ImageUser{
                .name = "app", .uid = 1000, .gid = 1000, .groups = {44, 45}, .home = "/home/app"}));
  // Its group by name or number; a number the image does not list.
  EXPECT_EQ(ResolveImageUser(Layers({"base"}), "app:video")->gid, 44u);
  EXPECT_EQ(ResolveImageUser(Layers({"base"}), "1000:7")->gid, 7u);
  EXPECT_EQ(ResolveImageUser(Layers({"base"}), "1000")->name, "app");
}

TEST_F(ImageUserTest, ANumberNeedsNoEntryAndANameDoes) {
  Result<ImageUser> number = ResolveImageUser(Layers({"base"}), "4242");
  ASSERT_TRUE(number.ok());
  EXPECT_EQ(*number, (ImageUser{.name = "4242", .uid = 4242, .gid = 0, .home = "/"}));
  Result<ImageUser> missing = ResolveImageUser(Layers({"base"}), "nobody-here");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(),
              HasSubstr("unable to find user nobody-here: no matching entries in the image's "
                        "/etc/passwd"));
  EXPECT_EQ(ResolveImageUser(Layers({"base"}), "app:nogroup").status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(ResolveImageUser(Layers({"base"}), ":0").status().code(), StatusCode::kInvalidArgument);
}

TEST_F(ImageUserTest, TheTopLayersFileWinsAndAWhiteoutDeletesIt) {
  Write("top", "passwd", "app:x:2000:2000::/srv:/bin/sh\n");
  EXPECT_EQ(ResolveImageUser(Layers({"top", "base"}), "app")->uid, 2000u);
  // A whiteout (the 0:0 character device) hides the base's: names fail.
  fs::create_directories(dir_ / "gone/etc");
  if (mknod((dir_ / "gone/etc/passwd").c_str(), S_IFCHR | 0600, 0) == 0) {
    EXPECT_EQ(ResolveImageUser(Layers({"gone", "base"}), "app").status().code(),
              StatusCode::kNotFound);
  }
}

// An image's /etc/passwd that is a symlink could point at the machine's
// own: it is not followed.
TEST_F(ImageUserTest, ASymlinkedPasswdIsNotFollowed) {
  fs::create_directories(dir_ / "evil/etc");
  fs::create_symlink("/etc/passwd", dir_ / "evil/etc/passwd");
  EXPECT_EQ(ResolveImageUser(Layers({"evil", "base"}), "root").status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(ResolveImageUser(Layers({"evil", "base"}), "0")->home, "/");
}

}  // namespace
}  // namespace trainyard::image
