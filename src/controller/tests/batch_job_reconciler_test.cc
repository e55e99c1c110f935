// The batch/v1 Job lifecycle at the controller level: a fake clock, an
// in-memory store, and the test playing the node agent.
#include "controller/batch_job_reconciler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/object.h"
#include "api/pod_object.h"
#include "api/yaml.h"
#include "controller/owned.h"
#include "controller/tests/finished_pod.h"
#include "store/sqlite_store.h"
#include "store/tests/counting_store.h"

namespace trainyard::controller {
namespace {

using std::chrono::seconds;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::MatchesRegex;
using ::testing::SizeIs;
using ::testing::UnorderedElementsAre;

class BatchJobReconcilerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = std::move(*store::SqliteStore::Open({.clock = &clock_}));
    reconciler_ = std::make_unique<BatchJobReconciler>(
        BatchJobReconcilerOptions{.store = store_.get(), .clock = &clock_});
  }

  // A Job whose spec is `spec` (YAML lines at two spaces) plus a template.
  void Submit(const std::string& spec, const std::string& restart_policy = "Never") {
    std::string yaml =
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: t, namespace: default}\n"
        "spec:\n" +
        spec + "  template:\n    spec:\n      restartPolicy: " + restart_policy +
        "\n      containers: [{name: main, image: i, command: [run]}]\n";
    auto docs = api::ParseManifests(yaml, "job.yaml");
    ASSERT_TRUE(docs.ok()) << docs.status().ToString();
    ASSERT_TRUE(store_->Create((*docs)[0].value).ok());
  }
  ReconcileResult Reconcile() {
    Result<ReconcileResult> r = reconciler_->Reconcile({"Job", "default", "t"});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : ReconcileResult{};
  }
  api::BatchJob Job() {
    return std::get<api::BatchJob>(
        *api::DecodeObject(*store_->Get({"Job", "default", "t"})).object);
  }
  std::vector<api::Pod> Pods() {
    std::vector<api::Pod> pods;
    store::ObjectStore::ListResult list = *store_->List("Pod", "default");
    for (const api::Json& doc : list.items) pods.push_back(*api::DecodePod(doc));
    return pods;
  }
  std::vector<std::string> ActivePods() {
    std::vector<std::string> names;
    for (const api::Pod& p : Pods()) {
      if (p.status.phase != "Succeeded" && p.status.phase != "Failed")
        names.push_back(p.metadata.name);
    }
    return names;
  }
  void SetPod(const std::string& name, const std::string& phase, int exit_code = 0,
              int restarts = 0) {
    api::Pod pod = *api::DecodePod(*store_->Get({"Pod", "default", name}));
    pod.status.phase = phase;
    api::ContainerStatus c;
    c.name = "main";
    c.restart_count = restarts;
    if (phase == "Succeeded" || phase == "Failed") {
      c.state.terminated = api::ContainerStateTerminated{.exit_code = exit_code};
    } else {
      c.state.running = api::ContainerStateRunning{};
    }
    pod.status.container_statuses = {c};
    ASSERT_TRUE(store_->UpdateStatus(api::EncodePod(pod)).ok());
  }
  // "Complete True CompletionsReached: Reached ..." for the last condition.
  std::string Last() {
    const auto& c = Job().status.conditions;
    if (c.empty()) return "";
    return c.back().type + " " + c.back().status + " " + c.back().reason + ": " + c.back().message;
  }

  FakeClock clock_;
  std::unique_ptr<store::SqliteStore> store_;
  std::unique_ptr<BatchJobReconciler> reconciler_;
};

// The node agent gives a pod's replicas their job's MLflow run and output
// folder from the mark the controller puts on the pod: a trial's Job's
// pods are its trial's, whatever mark the template carried.
TEST_F(BatchJobReconcilerTest, EachPodIsMarkedWithTheJobOrTrialItsReplicasLogTo) {
  api::Json trial = {{"apiVersion", "kubeflow.org/v1beta1"},
                     {"kind", "Trial"},
                     {"metadata", {{"name", "x"}, {"namespace", "default"}}},
                     {"spec", api::Json::object()}};
  Result<api::Json> stored_trial = store_->Create(trial);
  ASSERT_TRUE(stored_trial.ok()) << stored_trial.status().ToString();
  std::string yaml =
      "apiVersion: batch/v1\nkind: Job\nmetadata: {name: t, namespace: default, labels: "
      "{katib.kubeflow.org/trial: x}}\nspec:\n  template:\n    metadata: {annotations: "
      "{trainyard.dev/tracked-owner: PyTorchJob/other/u}}\n    spec:\n      restartPolicy: "
      "Never\n      containers: [{name: main, image: i, command: [run]}]\n";
  auto docs = api::ParseManifests(yaml, "job.yaml");
  ASSERT_TRUE(docs.ok()) << docs.status().ToString();
  ASSERT_TRUE(store_->Create((*docs)[0].value).ok());
  Reconcile();
  std::vector<api::Pod> pods = Pods();
  ASSERT_THAT(pods, SizeIs(1));
  EXPECT_EQ(pods[0].metadata.annotations["trainyard.dev/tracked-owner"],
            "Trial/x/" + api::StringAt(*stored_trial, {"metadata", "uid"}));
}

// As Kubernetes' job controller reads a job's pods from an informer index by
// owner: a reconcile reads its own pods, however many finished jobs' pods
// the namespace holds.
TEST_F(BatchJobReconcilerTest, AReconcileReadsOnlyItsOwnPods) {
  for (int i = 0; i < 200; ++i) ASSERT_TRUE(store_->Create(testing::FinishedPod(i)).ok());
  Submit("  parallelism: 2\n  completions: 2\n");
  store::testing::CountingStore counting(*store_);
  BatchJobReconciler reconciler(BatchJobReconcilerOptions{.store = &counting, .clock = &clock_});
  ASSERT_TRUE(reconciler.Reconcile({"Job", "default", "t"}).ok());
  EXPECT_THAT(ActivePods(), SizeIs(2));
  counting.Reset();
  ASSERT_TRUE(reconciler.Reconcile({"Job", "default", "t"}).ok());
  EXPECT_LE(counting.Shown("Pod"), 2);
}

TEST_F(BatchJobReconcilerTest, RunsParallelismPodsUntilCompletionsSucceed) {
  Submit("  completions: 3\n  parallelism: 2\n");
  Reconcile();
  std::vector<std::string> first = ActivePods();
  ASSERT_THAT(first, SizeIs(2));
  EXPECT_THAT(first[0], MatchesRegex("t-[bcdfghjklmnpqrstvwxz2456789]{5}"));
  api::Pod pod = Pods()[0];
  EXPECT_EQ(pod.metadata.labels["batch.kubernetes.io/job-name"], "t");
  EXPECT_EQ(pod.metadata.labels["job-name"], "t");
  EXPECT_EQ(pod.metadata.owner_references.at(0).kind, "Job");
  EXPECT_EQ(Job().status.active, 2);
  EXPECT_FALSE(Job().status.start_time.empty());

  SetPod(first[0], "Succeeded");
  SetPod(first[1], "Succeeded");
  Reconcile();
  ASSERT_THAT(ActivePods(), SizeIs(1)) << "one more for the third completion, not two";
  SetPod(ActivePods()[0], "Succeeded");
  Reconcile();
  EXPECT_EQ(Last(), "Complete True CompletionsReached: Reached expected number of succeeded pods");
  EXPECT_EQ(Job().status.succeeded, 3);
  EXPECT_EQ(Job().status.active, 0);
  EXPECT_FALSE(Job().status.completion_time.empty());
}

TEST_F(BatchJobReconcilerTest, RecordsEventsAsKubernetesJobControllerDoes) {
  Submit("  completions: 1\n");
  Reconcile();
  std::string pod = ActivePods().at(0);
  SetPod(pod, "Succeeded");
  Reconcile();
  std::vector<std::string> events;
  store::ObjectStore::ListResult listed = *store_->List("Event", "default");
  for (const api::Json& e : listed.items) {
    EXPECT_EQ(e["involvedObject"]["apiVersion"], "batch/v1");
    events.push_back(e["reason"].get<std::string>() + ": " + e["message"].get<std::string>());
  }
  EXPECT_THAT(events, ::testing::ElementsAre("SuccessfulCreate: Created pod: " + pod,
                                             "Completed: Job completed"));
  ASSERT_TRUE(store_->Delete({"Job", "default", "t"}).ok());
  Reconcile();
  EXPECT_TRUE(store_->List("Event", "default")->items.empty());
}

TEST_F(BatchJobReconcilerTest, IndexedPodsCarryTheirIndex) {
  Submit("  completions: 2\n  parallelism: 2\n  completionMode: Indexed\n");
  Reconcile();
  std::vector<api::Pod> pods = Pods();
  ASSERT_THAT(pods, SizeIs(2));
  std::vector<std::string> indexes;
  for (const api::Pod& p : pods) {
    std::string index = p.metadata.annotations.at("batch.kubernetes.io/job-completion-index");
    indexes.push_back(index);
    EXPECT_THAT(p.metadata.name, MatchesRegex("t-" + index + "-[a-z0-9]{5}"));
    EXPECT_EQ(p.spec.extra["hostname"], "t-" + index);
    const api::EnvVar& env = p.spec.containers[0].env.back();
    EXPECT_EQ(env.name, "JOB_COMPLETION_INDEX");
    EXPECT_EQ(env.value, index);
  }
  EXPECT_THAT(indexes, UnorderedElementsAre("0", "1"));
  // Index 1 fails and is replaced by a pod of the same index.
  for (const api::Pod& p : pods) {
    bool is_one = p.metadata.annotations.at("batch.kubernetes.io/job-completion-index") == "1";
    SetPod(p.metadata.name, is_one ? "Failed" : "Succeeded", is_one ? 1 : 0);
  }
  Reconcile();
  std::vector<std::string> active = ActivePods();
  ASSERT_THAT(active, SizeIs(1));
  EXPECT_THAT(active[0], MatchesRegex("t-1-.*"));
}

TEST_F(BatchJobReconcilerTest, EveryFailureCountsAgainstTheBackoffLimit) {
  Submit("  backoffLimit: 2\n", "OnFailure");
  Reconcile();
  std::string pod = ActivePods().at(0);
  SetPod(pod, "Running", 0, /*restarts=*/2);
  Reconcile();
  EXPECT_THAT(ActivePods(), ElementsAre(pod)) << "2 restarts: at the limit, not past it";
  SetPod(pod, "Running", 0, /*restarts=*/3);
  Reconcile();
  EXPECT_EQ(Last(),
            "Failed True BackoffLimitExceeded: Job has reached the specified backoff limit");
  EXPECT_THAT(ActivePods(), IsEmpty()) << "a failed job stops what still runs";
}

TEST_F(BatchJobReconcilerTest, FailedPodsAreReplacedUntilTheLimit) {
  Submit("  backoffLimit: 1\n");
  Reconcile();
  SetPod(ActivePods().at(0), "Failed", 3);
  Reconcile();
  ASSERT_THAT(ActivePods(), SizeIs(1)) << "a replacement";
  EXPECT_EQ(Job().status.failed, 1);
  SetPod(ActivePods().at(0), "Failed", 3);
  Reconcile();
  EXPECT_THAT(Last(), ::testing::StartsWith("Failed True BackoffLimitExceeded: Job has reached "
                                            "the specified backoff limit (last failure: pod t-"));
  EXPECT_THAT(Last(), ::testing::EndsWith(", container main, exit code 3)"));
  EXPECT_THAT(Pods(), SizeIs(2)) << "finished pods stay, for their logs";
}

TEST_F(BatchJobReconcilerTest, PodFailurePolicyFailsOrIgnoresByExitCode) {
  Submit(
      "  backoffLimit: 0\n  podFailurePolicy:\n    rules:\n"
      "      - {action: Ignore, onExitCodes: {operator: In, values: [137]}}\n"
      "      - {action: FailJob, onExitCodes: {containerName: main, operator: In, values: "
      "[42]}}\n");
  Reconcile();
  std::string first = ActivePods().at(0);
  SetPod(first, "Failed", 137);
  Reconcile();
  EXPECT_THAT(ActivePods(), SizeIs(1)) << "ignored: not counted against backoffLimit 0";
  std::string second = ActivePods().at(0);
  SetPod(second, "Failed", 42);
  Reconcile();
  EXPECT_EQ(Last(), "Failed True PodFailurePolicy: Container main for pod default/" + second +
                        " failed with exit code 42 matching FailJob rule at index 1");
}

TEST_F(BatchJobReconcilerTest, TheDeadlineFiresFromATimer) {
  Submit("  activeDeadlineSeconds: 30\n");
  ReconcileResult r = Reconcile();
  ASSERT_TRUE(r.requeue_after.has_value());
  EXPECT_EQ(*r.requeue_after, seconds(30));
  clock_.Advance(seconds(30));
  Reconcile();
  EXPECT_EQ(Last(), "Failed True DeadlineExceeded: Job was active longer than specified deadline");
  EXPECT_THAT(ActivePods(), IsEmpty());
}

TEST_F(BatchJobReconcilerTest, SuspendStopsPodsAndResumeRestartsTheDeadline) {
  Submit("  activeDeadlineSeconds: 30\n");
  Reconcile();
  api::Json job = *store_->Get({"Job", "default", "t"});
  job["spec"]["suspend"] = true;
  ASSERT_TRUE(store_->Update(job).ok());
  Reconcile();
  EXPECT_EQ(Last(), "Suspended True JobSuspended: Job suspended");
  EXPECT_THAT(ActivePods(), IsEmpty());
  clock_.Advance(seconds(60));
  job = *store_->Get({"Job", "default", "t"});
  job["spec"]["suspend"] = false;
  ASSERT_TRUE(store_->Update(job).ok());
  ReconcileResult r = Reconcile();
  EXPECT_EQ(Last(), "Suspended False JobResumed: Job resumed");
  EXPECT_THAT(ActivePods(), SizeIs(1));
  EXPECT_EQ(r.requeue_after, seconds(30)) << "the deadline counts from the resume";
}

TEST_F(BatchJobReconcilerTest, TtlDeletesTheFinishedJobAndItsPods) {
  Submit("  ttlSecondsAfterFinished: 10\n");
  Reconcile();
  SetPod(ActivePods().at(0), "Succeeded");
  ReconcileResult r = Reconcile();
  EXPECT_EQ(r.requeue_after, seconds(10));
  clock_.Advance(seconds(10));
  Reconcile();
  EXPECT_FALSE(store_->Get({"Job", "default", "t"}).ok());
  EXPECT_THAT(Pods(), IsEmpty());
}

TEST_F(BatchJobReconcilerTest, WithoutCompletionsOneSuccessEndsTheJobOnceOthersStop) {
  Submit("  parallelism: 2\n");
  Reconcile();
  std::vector<std::string> pods = ActivePods();
  ASSERT_THAT(pods, SizeIs(2));
  SetPod(pods[0], "Succeeded");
  Reconcile();
  EXPECT_THAT(ActivePods(), ElementsAre(pods[1])) << "no new pod after a success";
  EXPECT_EQ(Last(), "");
  SetPod(pods[1], "Succeeded");
  Reconcile();
  EXPECT_EQ(Last(), "Complete True CompletionsReached: Reached expected number of succeeded pods");
}

TEST_F(BatchJobReconcilerTest, ADeletedJobTakesItsPods) {
  Submit("  parallelism: 1\n");
  Reconcile();
  ASSERT_THAT(Pods(), SizeIs(1));
  Result<api::Json> deleted = store_->Delete({"Job", "default", "t"});
  ASSERT_TRUE(deleted.ok());
  // As the engine does for every deletion: its dependents by its uid.
  ASSERT_TRUE(DeleteDependents(*store_, (*deleted)["metadata"]["uid"]).ok());
  EXPECT_THAT(Pods(), IsEmpty());
}

}  // namespace
}  // namespace trainyard::controller
