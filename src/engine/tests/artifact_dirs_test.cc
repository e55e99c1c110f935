// Output folders go with their jobs, once the deletion is durable.
#include "engine/artifact_dirs.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

#include "api/tests/test_util.h"
#include "api/tracking.h"
#include "common/artifact_files.h"
#include "common/tests/test_dir.h"
#include "store/sqlite_store.h"

namespace trainyard::engine {
namespace {

namespace fs = std::filesystem;

// Removing is a thread's of its own: whether `done` is soon.
bool Eventually(const std::function<bool()>& done) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
  return true;
}
bool TrashEmptied(const fs::path& root) {
  return Eventually([&] { return fs::is_empty(root / ".trash"); });
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
    EXPECT_TRUE(
        WriteArtifactOwner(folder.string(), {.kind = "PyTorchJob",
                                             .name = name,
                                             .uid = api::StringAt(*job, {"metadata", "uid"}),
                                             .deleted = std::nullopt})
            .ok());
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

TEST_F(ArtifactDirsTest, AJobsFolderOutlivesItForItsRetentionOnceItsDeletionIsCommitted) {
  ArtifactDirs dirs(root(), &clock_, std::chrono::minutes(1));
  api::Json kept = Job("kept");
  api::Json gone = Job("gone");
  dirs.OnDeleted(gone);
  dirs.Committed();
  // Kept, noted as deleted, and found by its kind and name.
  ASSERT_TRUE(fs::exists(FolderOf(gone) / "model.pt"));
  std::optional<ArtifactOwner> owner = ReadArtifactOwner(FolderOf(gone).string());
  ASSERT_TRUE(owner && owner->deleted);
  EXPECT_EQ(*owner->deleted, clock_.Now());
  EXPECT_EQ(DeletedOwnersFolder((fs::path(root()) / "ml").string(), "PyTorchJob", "gone"),
            FolderOf(gone).string());
  // A deletion taken back changes nothing.
  dirs.OnDeleted(kept);
  dirs.Abandon();
  dirs.Committed();
  EXPECT_FALSE(ReadArtifactOwner(FolderOf(kept).string())->deleted);
  // Its time out, it goes (by the removing thread, when it is due: not
  // minutes later); the live job's stays.
  clock_.Advance(std::chrono::minutes(2));
  dirs.Committed();
  EXPECT_TRUE(Eventually([&] { return !fs::exists(FolderOf(gone)); }));
  EXPECT_FALSE(fs::exists(FolderOf(gone).string() + ".owner"));
  EXPECT_TRUE(TrashEmptied(root()));
  EXPECT_TRUE(fs::exists(FolderOf(kept) / "model.pt"));
  // What owns no folder is passed over.
  api::Json pod = {{"kind", "Pod"}, {"metadata", {{"namespace", "ml"}, {"uid", "u"}}}};
  fs::create_directories(fs::path(root()) / "ml" / "u");
  dirs.OnDeleted(pod);
  dirs.Committed();
  EXPECT_TRUE(fs::exists(fs::path(root()) / "ml" / "u"));
}

TEST_F(ArtifactDirsTest, WithoutRetentionAFolderGoesWithItsJob) {
  ArtifactDirs dirs(root(), &clock_, Duration::zero());
  api::Json gone = Job("gone");
  dirs.OnDeleted(gone);
  dirs.Committed();
  EXPECT_FALSE(fs::exists(FolderOf(gone)));  // renamed away at once
  EXPECT_TRUE(TrashEmptied(root()));
}

TEST_F(ArtifactDirsTest, AtStartAFolderWhoseJobIsGoneIsNotedSoAndOneOfNoOwnerGoes) {
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
  fs::path stray = fs::path(root()) / "ml" / "stray";  // no record, no owner
  fs::create_directories(stray);
  ArtifactDirs dirs(root(), &clock_, std::chrono::hours(1));
  dirs.Sweep(*store_);
  EXPECT_TRUE(ReadArtifactOwner(FolderOf(gone).string())->deleted.has_value());
  EXPECT_TRUE(fs::exists(FolderOf(gone) / "model.pt"));
  EXPECT_FALSE(ReadArtifactOwner(FolderOf(kept).string())->deleted.has_value());
  EXPECT_TRUE(fs::exists(run));
  EXPECT_FALSE(fs::exists(stray));
  // A client's run deleted: its folder has no record to keep it by.
  Result<api::Json> deleted = store_->Delete({std::string(api::kTrackingRunKind), "ml", "0a1b2c"});
  ASSERT_TRUE(deleted.ok());
  dirs.OnDeleted(*deleted);
  dirs.Committed();
  EXPECT_FALSE(fs::exists(run));
}

}  // namespace
}  // namespace trainyard::engine
