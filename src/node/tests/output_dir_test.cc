// A job's output folder, as a replica is given it.
#include "node/output_dir.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "common/artifact_files.h"
#include "common/tests/test_dir.h"
#include "node/tracking_env.h"

namespace trainyard::node {
namespace {

namespace fs = std::filesystem;

int ModeOf(const fs::path& path) {
  struct stat st {};
  EXPECT_EQ(stat(path.c_str(), &st), 0) << path;
  return static_cast<int>(st.st_mode & 07777);
}

TEST(OutputDirTest, AJobsFolderIsItsReplicasAloneAndPassedThroughAbove) {
  fs::path dir = FreshTestDir("output-dir");
  std::string root = (dir / "artifacts").string();
  Result<Mount> mount = PrepareOutputDir(
      root, "ml", {.kind = "PyTorchJob", .name = "mnist", .uid = "0f3c-uid"}, std::nullopt);
  ASSERT_TRUE(mount.ok()) << mount.status().ToString();
  EXPECT_EQ(mount->host_path, root + "/ml/0f3c-uid");
  EXPECT_EQ(mount->mount_path, mount->host_path);  // the same path in a sandbox
  EXPECT_FALSE(mount->read_only);
  EXPECT_EQ(ModeOf(mount->host_path), 0700);
  EXPECT_EQ(ModeOf(root + "/ml"), 0711);
  EXPECT_EQ(ModeOf(root), 0711);
  // Whose it is, beside it, where its replicas cannot write.
  std::optional<ArtifactOwner> owner = ReadArtifactOwner(mount->host_path);
  ASSERT_TRUE(owner.has_value());
  EXPECT_EQ(owner->kind, "PyTorchJob");
  EXPECT_EQ(owner->name, "mnist");
  EXPECT_FALSE(owner->deleted.has_value());
  for (std::string bad : {"", "../x", "a/b", "UP"}) {
    EXPECT_EQ(
        PrepareOutputDir(root, "ml", {.kind = "PyTorchJob", .name = "x", .uid = bad}, std::nullopt)
            .status()
            .code(),
        StatusCode::kInvalidArgument)
        << bad;
  }
  fs::remove_all(dir);
}

TEST(OutputDirTest, TheVariableIsTheJobsUnlessTheContainerSetsItsOwn) {
  EnvList env = {{"TRAINYARD_OUTPUT_DIR", "/from/trainyards/own/env"}};
  api::Container plain;
  AddOutputDirEnv(plain, "/state/artifacts/ml/u", env);
  EXPECT_EQ(env, (EnvList{{"TRAINYARD_OUTPUT_DIR", "/state/artifacts/ml/u"}}));
  api::Container own;
  own.env.push_back({.name = "TRAINYARD_OUTPUT_DIR", .value = "/mine"});
  EnvList with_own = {{"TRAINYARD_OUTPUT_DIR", "/mine"}};
  AddOutputDirEnv(own, "/state/artifacts/ml/u", with_own);
  EXPECT_EQ(with_own, (EnvList{{"TRAINYARD_OUTPUT_DIR", "/mine"}}));
}

// The job a replica writes for is the one its controller marked; a pod
// made by hand (no controller) cannot claim one by the annotation alone.
TEST(OutputDirTest, TheOwnerIsTheControllersMarkOnAControlledPodOnly) {
  api::Pod pod;
  pod.metadata.annotations["trainyard.dev/tracked-owner"] = "PyTorchJob/mnist/0f3c-uid";
  EXPECT_FALSE(TrackedOwnerOf(pod).has_value());
  pod.metadata.owner_references.push_back({.api_version = "kubeflow.org/v1",
                                           .kind = "PyTorchJob",
                                           .name = "mnist",
                                           .controller = true});
  std::optional<TrackedOwner> owner = TrackedOwnerOf(pod);
  ASSERT_TRUE(owner.has_value());
  EXPECT_EQ(owner->kind, "PyTorchJob");
  EXPECT_EQ(owner->uid, "0f3c-uid");
  pod.metadata.annotations["trainyard.dev/tracked-owner"] = "../../x";
  EXPECT_FALSE(TrackedOwnerOf(pod).has_value());
}

}  // namespace
}  // namespace trainyard::node
