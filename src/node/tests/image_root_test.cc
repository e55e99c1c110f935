#include "node/image_root.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "common/tests/test_dir.h"

namespace trainyard::node {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

class ImageRootTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = FreshTestDir("trainyard-image-root");
    root_ = {.layers = {(dir_ / "top").string(), (dir_ / "base").string()},
             .upper = (dir_ / "upper").string(),
             .work = (dir_ / "work").string(),
             .merged = (dir_ / "merged").string()};
    for (const char* d : {"top", "base/etc", "base/tmp", "upper"}) fs::create_directories(dir_ / d);
    fs::permissions(dir_ / "base/tmp", fs::perms(01777));
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path dir_;
  ImageRoot root_;
};

TEST(AsksForHostRootTest, OnlyTheHostValueAsksForTheMachinesFiles) {
  api::Pod pod;
  EXPECT_FALSE(AsksForHostRoot(pod));
  pod.metadata.annotations["trainyard.dev/root"] = "image";
  EXPECT_FALSE(AsksForHostRoot(pod));
  pod.metadata.annotations["trainyard.dev/root"] = "host";
  EXPECT_TRUE(AsksForHostRoot(pod));
}

TEST_F(ImageRootTest, TheOverlayStacksTheLayersTopFirstUnderTheRunsOwn) {
  EXPECT_EQ(root_.OverlayData(), fmt::format("lowerdir={0}/top:{0}/base,upperdir={0}/upper,"
                                             "workdir={0}/work",
                                             dir_.string()));
}

TEST_F(ImageRootTest, MountParentsAreMadePassableAndTheImagesKeepTheirModes) {
  ASSERT_TRUE(MakeMountParents(root_, {{.mount_path = "/data/scratch", .host_path = "/x"},
                                       {.mount_path = "/tmp/out/job", .host_path = "/y"}})
                  .ok());
  EXPECT_EQ(fs::status(dir_ / "upper/data").permissions(), fs::perms(0755));
  EXPECT_FALSE(fs::exists(dir_ / "upper/data/scratch")) << "the mount point is bwrap's to make";
  // /tmp is the image's: its copy in the writable layer keeps its mode.
  EXPECT_EQ(fs::status(dir_ / "upper/tmp").permissions(), fs::perms(01777));
  EXPECT_EQ(fs::status(dir_ / "upper/tmp/out").permissions(), fs::perms(0755));
}

TEST_F(ImageRootTest, TheSandboxBindsTheRootThenItsMountsShallowestFirst) {
  Result<std::vector<std::string>> args = ImageSandboxArgs(
      "/usr/bin/bwrap", "/opt/trainyard-shim",
      {.hostname = "job-0",
       .mounts = {{.mount_path = "/data/a/b", .host_path = "/h/b"},
                  {.mount_path = "/data", .host_path = "/h/data", .read_only = true}},
       .hosts_file = "/h/hosts"},
      root_);
  ASSERT_TRUE(args.ok()) << args.status().ToString();
  std::string joined = fmt::format("{}", fmt::join(*args, " "));
  EXPECT_THAT(joined, HasSubstr("/usr/bin/bwrap --bind " + root_.merged +
                                " / --proc /proc --dev "
                                "/dev --ro-bind /opt/trainyard-shim /dev/.trainyard-shim"));
  EXPECT_LT(joined.find("--ro-bind /h/data /data"), joined.find("--bind /h/b /data/a/b"));
  EXPECT_THAT(joined, HasSubstr("--ro-bind /h/hosts /etc/hosts"));
  EXPECT_THAT(joined, HasSubstr("--hostname job-0 --die-with-parent"));
  Result<std::vector<std::string>> bad = ImageSandboxArgs(
      "bwrap", "shim",
      {.hostname = "h", .mounts = {{.mount_path = "/a/../etc", .host_path = "/x"}}}, root_);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("must be an absolute path"));
  EXPECT_THAT(joined, Not(HasSubstr("--remount-ro")));
}

// readOnlyRootFilesystem: "/" remounted read-only after every bind, so
// the volumes bound into it stay writable.
TEST_F(ImageRootTest, AReadOnlyRootIsRemountedOnceEverythingIsBound) {
  Result<std::vector<std::string>> args =
      ImageSandboxArgs("bwrap", "shim",
                       {.hostname = "h",
                        .mounts = {{.mount_path = "/data", .host_path = "/h/data"}},
                        .read_only_root = true},
                       root_);
  ASSERT_TRUE(args.ok());
  std::string joined = fmt::format("{}", fmt::join(*args, " "));
  EXPECT_LT(joined.find("--bind /h/data /data"), joined.find("--remount-ro /"));
  EXPECT_THAT(joined, HasSubstr("--remount-ro / --unshare-uts"));
}

TEST_F(ImageRootTest, AnImageTheStoreLacksSaysHowToPullIt) {
  image::ImageStore store((dir_ / "images").string(), {});
  api::Container container;
  container.name = "main";
  container.image = "busybox:1.36";
  Result<ImageRoot> root = PrepareImageRoot(store, container, (dir_ / "run").string());
  ASSERT_FALSE(root.ok());
  EXPECT_THAT(root.status().message(),
              HasSubstr("image \"docker.io/library/busybox:1.36\" is not on this machine: pull it "
                        "(trainyard images pull busybox:1.36)"));
}

}  // namespace
}  // namespace trainyard::node
