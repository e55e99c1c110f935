// Claims on their own: bound at once to a folder of their own that
// outlives them, protected while a pod that has not ended uses them.
#include "engine/claim_reconciler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "api/tests/test_util.h"
#include "common/tests/test_dir.h"
#include "store/sqlite_store.h"

namespace trainyard::engine {
namespace {

namespace fs = std::filesystem;

class ClaimReconcilerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = FreshTestDir("claim-reconciler");
    store_ = std::move(*store::SqliteStore::Open({.clock = &clock_}));
    reconciler_ = std::make_unique<ClaimReconciler>(ClaimReconcilerOptions{
        .store = store_.get(), .clock = &clock_, .claims_dir = (dir_ / "claims").string()});
    ASSERT_TRUE(store_
                    ->Create(api::testing::ParseOne(R"(
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: ckpt, namespace: ml}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: fast
  resources: {requests: {storage: 5Gi}}
status: {phase: Pending}
)"))
                    .ok());
  }
  void TearDown() override { fs::remove_all(dir_); }

  api::Json Claim() { return *store_->Get(kClaim); }
  void Reconcile(const store::ObjectKey& key) {
    Result<controller::ReconcileResult> result = reconciler_->Reconcile(key);
    ASSERT_TRUE(result.ok()) << result.status().ToString();
  }
  void CreatePod(const std::string& name, const std::string& phase) {
    api::Json pod = api::testing::ParseOne(R"(
apiVersion: v1
kind: Pod
metadata: {namespace: ml}
spec:
  containers: [{name: c, image: i}]
  volumes: [{name: data, persistentVolumeClaim: {claimName: ckpt}}]
)");
    pod["metadata"]["name"] = name;
    pod["spec"]["nodeName"] = "box";
    ASSERT_TRUE(store_->Create(pod).ok());
    SetPhase(name, phase);
  }
  void SetPhase(const std::string& pod, const std::string& phase) {
    api::Json doc = {{"apiVersion", "v1"},
                     {"kind", "Pod"},
                     {"metadata", {{"name", pod}, {"namespace", "ml"}}},
                     {"status", {{"phase", phase}}}};
    ASSERT_TRUE(store_->UpdateStatus(doc).ok());
  }
  // What the API server does on a DELETE of an object with finalizers.
  void MarkDeleted() {
    api::Json claim = Claim();
    claim["metadata"]["deletionTimestamp"] = "2026-11-26T00:00:00Z";
    ASSERT_TRUE(store_->Update(claim).ok());
  }

  const store::ObjectKey kClaim{"PersistentVolumeClaim", "ml", "ckpt"};
  fs::path dir_;
  FakeClock clock_;
  std::unique_ptr<store::SqliteStore> store_;
  std::unique_ptr<ClaimReconciler> reconciler_;
};

TEST_F(ClaimReconcilerTest, AClaimIsBoundToAFolderOfItsOwnWithItsSizeAndModes) {
  Reconcile(kClaim);
  api::Json claim = Claim();
  EXPECT_EQ(api::StringAt(claim, {"status", "phase"}), "Bound");
  EXPECT_EQ(api::StringAt(claim, {"status", "capacity", "storage"}), "5Gi");
  EXPECT_EQ(claim["status"]["accessModes"], api::Json({"ReadWriteOnce"}));
  EXPECT_EQ(claim["metadata"]["finalizers"], api::Json({"kubernetes.io/pvc-protection"}));
  fs::path folder = dir_ / "claims" / "ml" / "ckpt";
  ASSERT_TRUE(fs::is_directory(folder));
  // Its namespace's alone: others may pass through, never list or read.
  EXPECT_EQ(fs::status(folder).permissions() & fs::perms::all, fs::perms::owner_all);
  EXPECT_EQ(fs::status(folder.parent_path()).permissions() & fs::perms::all,
            fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec);
  // Said where, once: a second look changes nothing.
  int64_t version = store_->CurrentResourceVersion();
  Reconcile(kClaim);
  EXPECT_EQ(store_->CurrentResourceVersion(), version);
  Result<store::ObjectReader::ListResult> events = store_->List("Event", "ml");
  ASSERT_TRUE(events.ok());
  ASSERT_EQ(events->items.size(), 1u);
  EXPECT_EQ(api::StringAt(events->items[0], "reason"), "ProvisioningSucceeded");
}

TEST_F(ClaimReconcilerTest, AClaimInUseStaysUntilItsPodEndsAndItsDataStaysAfter) {
  Reconcile(kClaim);
  std::ofstream(dir_ / "claims" / "ml" / "ckpt" / "step-100.pt") << "weights";
  CreatePod("trainer-0", "Running");
  CreatePod("old-0", "Succeeded");  // ended: holds nothing
  MarkDeleted();
  Reconcile(kClaim);
  EXPECT_TRUE(store_->Get(kClaim).ok()) << "a running pod holds it";
  SetPhase("trainer-0", "Failed");
  Reconcile({"Pod", "ml", "trainer-0"});
  EXPECT_EQ(store_->Get(kClaim).status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(fs::exists(dir_ / "claims" / "ml" / "ckpt" / "step-100.pt"))
      << "the data is kept, as under the Retain reclaim policy";
  EXPECT_TRUE(store_->List("Event", "ml")->items.empty()) << "its events went with it";
}

TEST_F(ClaimReconcilerTest, ADeletedPodFreesTheClaimItHeld) {
  Reconcile(kClaim);
  CreatePod("trainer-0", "Pending");
  MarkDeleted();
  Reconcile(kClaim);
  ASSERT_TRUE(store_->Get(kClaim).ok());
  ASSERT_TRUE(store_->Delete({"Pod", "ml", "trainer-0"}).ok());
  Reconcile({"Pod", "ml", "trainer-0"});
  EXPECT_EQ(store_->Get(kClaim).status().code(), StatusCode::kNotFound);
}

// A pod still waiting for room is placed nowhere, and holds nothing.
TEST_F(ClaimReconcilerTest, APodNotYetPlacedDoesNotHoldTheClaim) {
  Reconcile(kClaim);
  CreatePod("queued-0", "Pending");
  api::Json pod = *store_->Get({"Pod", "ml", "queued-0"});
  pod["spec"].erase("nodeName");
  ASSERT_TRUE(store_->Update(pod).ok());
  MarkDeleted();
  Reconcile(kClaim);
  EXPECT_EQ(store_->Get(kClaim).status().code(), StatusCode::kNotFound);
}

TEST_F(ClaimReconcilerTest, AnotherFinalizerStillHoldsTheClaim) {
  Reconcile(kClaim);
  api::Json claim = Claim();
  claim["metadata"]["finalizers"].push_back("example.com/backup");
  ASSERT_TRUE(store_->Update(claim).ok());
  MarkDeleted();
  Reconcile(kClaim);
  ASSERT_TRUE(store_->Get(kClaim).ok());
  EXPECT_EQ(Claim()["metadata"]["finalizers"], api::Json({"example.com/backup"}));
}

}  // namespace
}  // namespace trainyard::engine
