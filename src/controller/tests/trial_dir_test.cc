// A trial's own directory (pbt's checkpoints): where it is, what it starts
// with, and that the trial's job mounts it.
#include "controller/trial_dir.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "api/object.h"
#include "api/yaml.h"
#include "common/tests/test_dir.h"
#include "controller/trial_reconciler.h"
#include "store/sqlite_store.h"
#include "tune/sampler.h"

namespace trainyard::controller {
namespace {

namespace fs = std::filesystem;
using ::testing::Contains;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class TrialDirTest : public ::testing::Test {
 protected:
  void SetUp() override { root_ = FreshTestDir("trainyard-trial-dir"); }
  void TearDown() override { fs::remove_all(root_); }

  fs::path root_;
};

TEST_F(TrialDirTest, ACopyOfTheParentsDirectoryNotShared) {
  fs::create_directories(root_ / "parent" / "sub");
  std::ofstream(root_ / "parent" / "sub" / "model.pt") << "weights";
  TrialDir dir{.mount_path = "/ckpt",
               .host_path = (root_ / "child").string(),
               .parent_path = (root_ / "parent").string()};
  bool parent_missing = true;
  ASSERT_TRUE(PrepareTrialDir(dir, &parent_missing).ok());
  EXPECT_FALSE(parent_missing);
  EXPECT_EQ(ReadFile(root_ / "child" / "sub" / "model.pt"), "weights");
  // The child writes its own; the parent's stays as it was.
  std::ofstream(root_ / "child" / "sub" / "model.pt") << "trained on";
  EXPECT_EQ(ReadFile(root_ / "parent" / "sub" / "model.pt"), "weights");
  // Again (a reconcile after a crash): what is there is kept.
  ASSERT_TRUE(PrepareTrialDir(dir, &parent_missing).ok());
  EXPECT_EQ(ReadFile(root_ / "child" / "sub" / "model.pt"), "trained on");
}

TEST_F(TrialDirTest, AHalfMadeCopyIsMadeAgain) {
  fs::create_directories(root_ / "parent");
  std::ofstream(root_ / "parent" / "model.pt") << "weights";
  fs::create_directories(root_ / "child.copying");  // a crash mid-copy
  std::ofstream(root_ / "child.copying" / "junk") << "x";
  TrialDir dir{.mount_path = "/ckpt",
               .host_path = (root_ / "child").string(),
               .parent_path = (root_ / "parent").string()};
  bool parent_missing = false;
  ASSERT_TRUE(PrepareTrialDir(dir, &parent_missing).ok());
  EXPECT_EQ(ReadFile(root_ / "child" / "model.pt"), "weights");
  EXPECT_FALSE(fs::exists(root_ / "child" / "junk"));
  EXPECT_FALSE(fs::exists(root_ / "child.copying"));
}

TEST_F(TrialDirTest, WithoutAParentOrWithItsDirectoryGoneItStartsEmpty) {
  bool parent_missing = true;
  ASSERT_TRUE(PrepareTrialDir({.mount_path = "/c", .host_path = (root_ / "a" / "first").string()},
                              &parent_missing)
                  .ok());
  EXPECT_FALSE(parent_missing);
  EXPECT_TRUE(fs::is_empty(root_ / "a" / "first"));
  ASSERT_TRUE(PrepareTrialDir({.mount_path = "/c",
                               .host_path = (root_ / "a" / "orphan").string(),
                               .parent_path = (root_ / "a" / "gone").string()},
                              &parent_missing)
                  .ok());
  EXPECT_TRUE(parent_missing);
  EXPECT_TRUE(fs::is_empty(root_ / "a" / "orphan"));
}

TEST_F(TrialDirTest, AParentLabelThatIsNotATrialsNameIsNoParent) {
  api::Experiment experiment;
  experiment.metadata = {.name = "e", .namespace_ = "ns"};
  experiment.spec.algorithm =
      api::AlgorithmSpec{.algorithm_name = "pbt",
                         .algorithm_settings = {{.name = "suggestion_trial_dir", .value = "/c"}}};
  api::Trial trial;
  trial.metadata.name = "e-x";
  for (std::string parent : {"..", "../../etc", "a/b", ""}) {
    trial.spec.labels[std::string(tune::kPbtParentLabel)] = parent;
    std::optional<TrialDir> dir = TrialDirOf(experiment, trial, "/root");
    ASSERT_TRUE(dir.has_value());
    EXPECT_EQ(dir->host_path, "/root/ns/e/e-x");
    EXPECT_EQ(dir->parent_path, "") << parent;
  }
  trial.spec.labels[std::string(tune::kPbtParentLabel)] = "e-parent";
  EXPECT_EQ(TrialDirOf(experiment, trial, "/root")->parent_path, "/root/ns/e/e-parent");
}

TEST_F(TrialDirTest, TheMakerCopiesOffTheCallersThreadAndSaysWhenItIsReady) {
  fs::create_directories(root_ / "parent");
  std::ofstream(root_ / "parent" / "model.pt") << "weights";
  TrialDirMaker maker;
  TrialDir dir{.mount_path = "/ckpt",
               .host_path = (root_ / "child").string(),
               .parent_path = (root_ / "parent").string()};
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  Result<TrialDirMaker::Readiness> ready = maker.Ensure(dir);
  while (ready.ok() && !ready->ready && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // the next poll
    ready = maker.Ensure(dir);
  }
  ASSERT_TRUE(ready.ok()) << ready.status().ToString();
  EXPECT_TRUE(ready->ready);
  EXPECT_EQ(ReadFile(root_ / "child" / "model.pt"), "weights");
  // A directory that cannot be made is reported, then tried again.
  TrialDir blocked{.mount_path = "/c", .host_path = (root_ / "child" / "model.pt" / "x").string()};
  Result<TrialDirMaker::Readiness> failed = maker.Ensure(blocked);
  while (failed.ok() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // the next poll
    failed = maker.Ensure(blocked);
  }
  EXPECT_FALSE(failed.ok());
}

// The trial controller: a pbt trial's job mounts its directory, made from
// its parent's.
class PbtTrialJobTest : public TrialDirTest {
 protected:
  void SetUp() override {
    TrialDirTest::SetUp();
    store_ = std::move(*store::SqliteStore::Open({.clock = &clock_}));
    reconciler_ = std::make_unique<TrialReconciler>(
        TrialReconcilerOptions{.store = store_.get(),
                               .observations = store_.get(),
                               .clock = &clock_,
                               .metrics_dir = (root_ / "metrics").string(),
                               .trial_dirs = (root_ / "trials").string()});
  }

  void Create(const std::string& yaml) {
    auto docs = api::ParseManifests(yaml, "object.yaml");
    ASSERT_TRUE(docs.ok()) << docs.status().ToString();
    Result<api::Json> created = store_->Create((*docs)[0].value);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
  }

  FakeClock clock_;
  std::unique_ptr<store::SqliteStore> store_;
  std::unique_ptr<TrialReconciler> reconciler_;
};

TEST_F(PbtTrialJobTest, TheJobMountsTheTrialsCopyOfItsParentsDirectory) {
  Create(R"(apiVersion: kubeflow.org/v1beta1
kind: Experiment
metadata: {name: e, namespace: default}
spec:
  objective: {type: maximize, objectiveMetricName: acc}
  algorithm:
    algorithmName: pbt
    algorithmSettings:
      - {name: suggestion_trial_dir, value: /var/log/katib/checkpoints/}
      - {name: n_population, value: "5"}
      - {name: truncation_threshold, value: "0.2"}
  parameters:
    - {name: lr, parameterType: double, feasibleSpace: {min: "0.1", max: "0.2"}}
  trialTemplate:
    primaryContainerName: main
    trialParameters: [{name: lr, reference: lr}]
    trialSpec:
      apiVersion: batch/v1
      kind: Job
      spec:
        template:
          spec:
            restartPolicy: Never
            containers: [{name: main, image: i, command: [run, "${trialParameters.lr}"]}]
)");
  fs::create_directories(root_ / "trials" / "default" / "e" / "e-parent");
  std::ofstream(root_ / "trials" / "default" / "e" / "e-parent" / "model.pt") << "weights";
  Create(R"(apiVersion: kubeflow.org/v1beta1
kind: Trial
metadata:
  name: e-child
  namespace: default
  ownerReferences: [{apiVersion: kubeflow.org/v1beta1, kind: Experiment, name: e, uid: u}]
spec:
  objective: {type: maximize, objectiveMetricName: acc}
  primaryContainerName: main
  labels: {pbt.suggestion.katib.kubeflow.org/generation: "1",
           pbt.suggestion.katib.kubeflow.org/parent: e-parent}
  runSpec:
    apiVersion: batch/v1
    kind: Job
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{name: main, image: i, command: [run]}]
)");
  // The copy is made off the loop: the trial waits for it, asking again.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!store_->Get({"Job", "default", "e-child"}).ok()) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the job was never created";
    Result<ReconcileResult> r = reconciler_->Reconcile({"Trial", "default", "e-child"});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // the next poll
  }
  fs::path dir = root_ / "trials" / "default" / "e" / "e-child";
  EXPECT_EQ(ReadFile(dir / "model.pt"), "weights");
  api::Json pod = (*store_->Get({"Job", "default", "e-child"}))["spec"]["template"];
  EXPECT_THAT(pod["spec"]["containers"][0]["volumeMounts"],
              Contains(api::Json{{"name", "suggestion-volume"},
                                 {"mountPath", "/var/log/katib/checkpoints/"}}));
  EXPECT_THAT(
      pod["spec"]["volumes"],
      Contains(api::Json{{"name", "suggestion-volume"},
                         {"hostPath", {{"path", dir.string()}, {"type", "DirectoryOrCreate"}}}}));
}

}  // namespace
}  // namespace trainyard::controller
