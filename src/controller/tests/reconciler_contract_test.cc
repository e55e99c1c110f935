// The contract every reconciler keeps (controller/reconciler.h), checked
// for each one the engine drives (every job kind, JobSet and TrainJob,
// Katib's experiment and trial): from a new object, reconciling again and
// again converges to no writes at all (idempotence); once its replicas
// finish it converges again; and once the object is deleted, reconciling
// removes what it owned and then writes nothing more.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <memory>
#include <set>

#include "api/tests/trainer_samples.h"
#include "api/yaml.h"
#include "common/clock.h"
#include "common/tests/test_dir.h"
#include "controller/batch_job_reconciler.h"
#include "controller/experiment_reconciler.h"
#include "controller/job_reconciler.h"
#include "controller/jobset_reconciler.h"
#include "controller/owned.h"
#include "controller/trainjob_reconciler.h"
#include "controller/trial_reconciler.h"
#include "store/sqlite_store.h"

namespace trainyard::controller {
namespace {

struct Case {
  const char* name;
  std::string manifest;
};

const Case kCases[] = {
    {"PyTorchJob", R"(apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: subject, namespace: default}
spec:
  pytorchReplicaSpecs:
    Master: {replicas: 1, template: {spec: {containers: [{name: pytorch, image: i, command: [run]}]}}}
    Worker: {replicas: 2, template: {spec: {containers: [{name: pytorch, image: i, command: [run]}]}}}
)"},
    {"MPIJob", R"(apiVersion: kubeflow.org/v1
kind: MPIJob
metadata: {name: subject, namespace: default}
spec:
  mpiReplicaSpecs:
    Launcher: {replicas: 1, template: {spec: {containers: [{name: mpi, image: i, command: [mpirun, run]}]}}}
    Worker: {replicas: 2, template: {spec: {containers: [{name: mpi, image: i, command: [sleep]}]}}}
)"},
    {"TFJob", R"(apiVersion: kubeflow.org/v1
kind: TFJob
metadata: {name: subject, namespace: default}
spec:
  tfReplicaSpecs:
    PS: {replicas: 1, template: {spec: {containers: [{name: tensorflow, image: i, command: [run]}]}}}
    Worker: {replicas: 2, template: {spec: {containers: [{name: tensorflow, image: i, command: [run]}]}}}
)"},
    {"XGBoostJob", R"(apiVersion: kubeflow.org/v1
kind: XGBoostJob
metadata: {name: subject, namespace: default}
spec:
  xgbReplicaSpecs:
    Master: {replicas: 1, template: {spec: {containers: [{name: xgboost, image: i, command: [run]}]}}}
    Worker: {replicas: 1, template: {spec: {containers: [{name: xgboost, image: i, command: [run]}]}}}
)"},
    {"PaddleJob", R"(apiVersion: kubeflow.org/v1
kind: PaddleJob
metadata: {name: subject, namespace: default}
spec:
  paddleReplicaSpecs:
    Master: {replicas: 1, template: {spec: {containers: [{name: paddle, image: i, command: [run]}]}}}
    Worker: {replicas: 1, template: {spec: {containers: [{name: paddle, image: i, command: [run]}]}}}
)"},
    {"JAXJob", R"(apiVersion: kubeflow.org/v1
kind: JAXJob
metadata: {name: subject, namespace: default}
spec:
  jaxReplicaSpecs:
    Worker: {replicas: 2, template: {spec: {containers: [{name: jax, image: i, command: [run]}]}}}
)"},
    {"JobSet", R"(apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: subject, namespace: default}
spec:
  replicatedJobs:
  - name: node
    replicas: 2
    template: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: i, command: [run]}]}}}}
)"},
    // A TrainJob after the runtime it names.
    {"TrainJob", std::string(api::testing::kTorchDistributedRuntime) + "---\n" +
                     R"(apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: subject, namespace: default}
spec:
  runtimeRef: {name: torch-distributed}
  trainer: {command: [run]}
)"},
    {"Job", R"(apiVersion: batch/v1
kind: Job
metadata: {name: subject, namespace: default}
spec:
  completions: 2
  parallelism: 2
  template: {spec: {restartPolicy: Never, containers: [{name: main, image: i, command: [run]}]}}
)"},
    {"Experiment", R"(apiVersion: kubeflow.org/v1beta1
kind: Experiment
metadata: {name: subject, namespace: default}
spec:
  objective: {type: minimize, objectiveMetricName: loss}
  algorithm: {algorithmName: random}
  parallelTrialCount: 2
  maxTrialCount: 2
  parameters:
  - {name: lr, parameterType: double, feasibleSpace: {min: "0.01", max: "0.1"}}
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
)"},
    {"Trial", R"(apiVersion: kubeflow.org/v1beta1
kind: Trial
metadata: {name: subject, namespace: default}
spec:
  objective: {type: minimize, objectiveMetricName: loss}
  primaryContainerName: main
  metricsCollector: {collector: {kind: StdOut}}
  runSpec:
    apiVersion: batch/v1
    kind: Job
    spec:
      template: {spec: {restartPolicy: Never, containers: [{name: main, image: i, command: [run]}]}}
)"},
};

class ReconcilerContractTest : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    dir_ = FreshTestDir("reconciler-contract").string();
    store_ = std::move(*store::SqliteStore::Open({.clock = &clock_}));
    Add(std::make_unique<JobReconciler>(JobReconcilerOptions{
        .store = store_.get(), .clock = &clock_, .replicas = {.ports = &ports_}}));
    Add(std::make_unique<BatchJobReconciler>(
        BatchJobReconcilerOptions{.store = store_.get(), .clock = &clock_}));
    Add(std::make_unique<JobSetReconciler>(
        JobSetReconcilerOptions{.store = store_.get(), .clock = &clock_}));
    Add(std::make_unique<TrainJobReconciler>(TrainJobReconcilerOptions{
        .store = store_.get(), .clock = &clock_, .replicas = {.ports = &ports_}}));
    Add(std::make_unique<ExperimentReconciler>(
        ExperimentReconcilerOptions{.store = store_.get(),
                                    .observations = store_.get(),
                                    .clock = &clock_,
                                    .trial_dirs = dir_ + "/trials"}));
    watch_ = *store_->Watch(0, [this](const store::WatchEvent& e) { OnEvent(e); });
    Add(std::make_unique<TrialReconciler>(TrialReconcilerOptions{.store = store_.get(),
                                                                 .observations = store_.get(),
                                                                 .clock = &clock_,
                                                                 .metrics_dir = dir_ + "/metrics",
                                                                 .trial_dirs = dir_ + "/trials"}));
  }

  void TearDown() override {
    store_->StopWatch(watch_);
    std::filesystem::remove_all(dir_);
  }

  void Add(std::unique_ptr<Reconciler> reconciler) {
    for (const std::string& kind : reconciler->Kinds()) by_kind_[kind] = reconciler.get();
    reconcilers_.push_back(std::move(reconciler));
  }

  // Queues what the engine would for a change: the object, if reconciled,
  // and its controller (the first owner), if reconciled.
  void OnEvent(const store::WatchEvent& e) {
    Result<store::ObjectKey> key = store::KeyOf(e.object);
    if (!key.ok()) return;
    if (e.type == store::EventType::kDeleted) {
      collect_.push_back(api::StringAt(e.object, {"metadata", "uid"}));
    }
    if (by_kind_.contains(key->kind)) queue_.insert(key->ToString()), keys_[key->ToString()] = *key;
    const api::Json& owners = api::ArrayRefAt(e.object, {"metadata", "ownerReferences"});
    if (owners.empty()) return;
    store::ObjectKey owner{api::StringAt(owners[0], "kind"), key->namespace_,
                           api::StringAt(owners[0], "name")};
    if (by_kind_.contains(owner.kind)) {
      queue_.insert(owner.ToString());
      keys_[owner.ToString()] = owner;
    }
  }

  // Reconciles what the changes queued, as the engine's loop does, until
  // nothing is queued; the rounds it took. Fails past `max_rounds`: a
  // reconciler that keeps writing.
  int Converge(int max_rounds = 8) {
    for (int round = 1; round <= max_rounds; ++round) {
      // The garbage collector first, as the engine runs it.
      while (!collect_.empty()) {
        std::string uid = collect_.back();
        collect_.pop_back();
        EXPECT_TRUE(DeleteDependents(*store_, uid).ok());
      }
      std::set<std::string> queued;
      queued.swap(queue_);
      if (queued.empty()) return round - 1;
      for (const std::string& name : queued) {
        const store::ObjectKey& key = keys_.at(name);
        Result<ReconcileResult> r = by_kind_.at(key.kind)->Reconcile(key);
        EXPECT_TRUE(r.ok()) << name << ": " << r.status().ToString();
      }
    }
    ADD_FAILURE() << "still writing after " << max_rounds << " rounds";
    return max_rounds + 1;
  }

  // Idempotence: reconciling every object once more writes nothing.
  void ExpectNoWritesFromAnotherRound() {
    int64_t before = store_->CurrentResourceVersion();
    for (const auto& [kind, reconciler] : by_kind_) {
      std::vector<std::string> names;
      ASSERT_TRUE(store_
                      ->Scan(kind, "default",
                             [&](const api::Json& o) { names.push_back(o["metadata"]["name"]); })
                      .ok());
      for (const std::string& name : names) {
        ASSERT_TRUE(reconciler->Reconcile({kind, "default", name}).ok());
      }
    }
    EXPECT_EQ(store_->CurrentResourceVersion(), before) << "a reconcile with nothing new wrote";
  }

  // Every pod's containers end with `exit_code`, as the node agent reports.
  void FinishPods(int exit_code) {
    std::vector<api::Json> pods = store_->List("Pod", "default")->items;
    for (api::Json& pod : pods) {
      std::string phase = exit_code == 0 ? "Succeeded" : "Failed";
      api::Json statuses = api::Json::array();
      for (const api::Json& c : pod["spec"]["containers"]) {
        statuses.push_back({{"name", c["name"]},
                            {"ready", false},
                            {"restartCount", 0},
                            {"state",
                             {{"terminated",
                               {{"exitCode", exit_code},
                                {"reason", exit_code == 0 ? "Completed" : "Error"},
                                {"startedAt", "2024-01-01T00:00:00Z"},
                                {"finishedAt", "2024-01-01T00:00:01Z"}}}}}});
      }
      pod["status"] = {{"phase", phase}, {"containerStatuses", statuses}};
      ASSERT_TRUE(store_->UpdateStatus(pod).ok());
    }
  }

  size_t Count(const std::string& kind) { return store_->List(kind, "default")->items.size(); }

  FakeClock clock_;
  std::string dir_;
  LocalPortAllocator ports_;
  std::unique_ptr<store::SqliteStore> store_;
  std::vector<std::unique_ptr<Reconciler>> reconcilers_;
  std::map<std::string, Reconciler*> by_kind_;
  store::WatchId watch_ = 0;
  std::set<std::string> queue_;                   // keys' ToString(), queued
  std::vector<std::string> collect_;              // deleted objects' uids
  std::map<std::string, store::ObjectKey> keys_;  // by ToString()
};

TEST_P(ReconcilerContractTest, ConvergesIsIdempotentAndCleansUpAfterItself) {
  auto docs = api::ParseManifests(GetParam().manifest, "subject.yaml");
  ASSERT_TRUE(docs.ok()) << docs.status().ToString();
  for (const auto& doc : *docs) ASSERT_TRUE(store_->Create(doc.value).ok());

  EXPECT_LE(Converge(), 6);
  EXPECT_GT(Count("Pod"), 0u) << "nothing started";
  ExpectNoWritesFromAnotherRound();

  FinishPods(0);
  EXPECT_LE(Converge(), 6);
  ExpectNoWritesFromAnotherRound();

  ASSERT_TRUE(store_->Delete({GetParam().name, "default", "subject"}).ok());
  EXPECT_LE(Converge(), 6);
  EXPECT_EQ(Count("Pod"), 0u) << "the deleted object's pods are left";
  ExpectNoWritesFromAnotherRound();
}

INSTANTIATE_TEST_SUITE_P(EveryReconciler, ReconcilerContractTest, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace trainyard::controller
