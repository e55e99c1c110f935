// Output folders go with their jobs, once the deletion is durable.
#include "engine/artifact_dirs.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "api/tests/test_util.h"
#include "api/tracking.h"
#include "common/tests/test_dir.h"
#include "store/sqlite_store.h"

namespace trainyard::engine {
namespace {

namespace fs = std::filesystem;

// The trash is emptied by a thread of its own: whether it is soon.
bool TrashEmptied(const fs::path& root) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!fs::is_empty(root / ".trash")) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

class ArtifactDirsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = FreshTestDir("artifact-dirs");
    store_ = std::move(*store::SqliteStore::Open({.clock = &clock_}));
  }
  void TearDown() override { fs::remove_all(dir_); }
  // A stored job and its folder, with a file in it.
  api::Json Job(const std::string& name) {
    Result<api::Json> job = store_->Create(api::testing::ParseOne(
        "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: " + name +
        ", namespace: ml}\nspec: {pytorchReplicaSpecs: {}}\n"));
    EXPECT_TRUE(job.ok()) << job.status().ToString();
    fs::path folder = FolderOf(*job);
    fs::create_directories(folder);
    std::ofstream(folder / "model.pt") << "weights";
    return *job;
  }
  fs::path FolderOf(const api::Json& job) {
    return api::ArtifactsDirOf(root(), "ml", api::StringAt(job, {"metadata", "uid"}));
  }
  std::string root() const { return (dir_ / "artifacts").string(); }

  FakeClock clock_;
  fs::path dir_;
  std::unique_ptr<store::SqliteStore> store_;
};

TEST_F(ArtifactDirsTest, AFolderGoesOnlyOnceItsJobsDeletionIsCommitted) {
  ArtifactDirs dirs(root());
  api::Json kept = Job("kept");
  api::Json gone = Job("gone");
  dirs.OnDeleted(gone);
  EXPECT_TRUE(fs::exists(FolderOf(gone)));  // not yet durable
  dirs.Committed();
  EXPECT_FALSE(fs::exists(FolderOf(gone)));  // renamed away at once
  EXPECT_TRUE(TrashEmptied(root()));
  EXPECT_TRUE(fs::exists(FolderOf(kept) / "model.pt"));
  // A deletion taken back keeps the job's files.
  dirs.OnDeleted(kept);
  dirs.Abandon();
  dirs.Committed();
  EXPECT_TRUE(fs::exists(FolderOf(kept) / "model.pt"));
  // What owns no folder is passed over.
  api::Json pod = {{"kind", "Pod"}, {"metadata", {{"namespace", "ml"}, {"uid", "u"}}}};
  fs::create_directories(fs::path(root()) / "ml" / "u");
  dirs.OnDeleted(pod);
  dirs.Committed();
  EXPECT_TRUE(fs::exists(fs::path(root()) / "ml" / "u"));
}

TEST_F(ArtifactDirsTest, AtStartAFolderWhoseJobIsGoneIsSwept) {
  api::Json kept = Job("kept");
  api::Json gone = Job("gone");
  ASSERT_TRUE(store_->Delete({"PyTorchJob", "ml", "gone"}).ok());
  // A client's MLflow run's folder is named by its run id.
  ASSERT_TRUE(store_
                  ->Create({{"apiVersion", "trainyard.dev/v1"},
                            {"kind", api::kTrackingRunKind},
                            {"metadata", {{"name", "0a1b2c"}, {"namespace", "ml"}}},
                            {"spec", api::Json::object()}})
                  .ok());
  fs::path run = fs::path(root()) / "ml" / "0a1b2c";
  fs::create_directories(run);
  ArtifactDirs dirs(root());
  dirs.Sweep(*store_);
  EXPECT_FALSE(fs::exists(FolderOf(gone)));
  EXPECT_TRUE(TrashEmptied(root()));
  EXPECT_TRUE(fs::exists(FolderOf(kept) / "model.pt"));
  EXPECT_TRUE(fs::exists(run));
  // Deleted, it goes with its run.
  Result<api::Json> deleted = store_->Delete({std::string(api::kTrackingRunKind), "ml", "0a1b2c"});
  ASSERT_TRUE(deleted.ok());
  dirs.OnDeleted(*deleted);
  dirs.Committed();
  EXPECT_FALSE(fs::exists(run));
}

}  // namespace
}  // namespace trainyard::engine
