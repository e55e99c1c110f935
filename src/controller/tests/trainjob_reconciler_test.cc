// The TrainJob lifecycle at the controller level: a fake clock, an
// in-memory store, and the test playing the JobSet controller.
#include "controller/trainjob_reconciler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/validation.h"
#include "api/yaml.h"
#include "store/sqlite_store.h"

namespace trainyard::controller {
namespace {

using api::Json;
using std::chrono::seconds;
using ::testing::HasSubstr;

constexpr const char* kRuntime = R"(
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: torch}
spec:
  mlPolicy: {numNodes: 1, torch: {}}
  template:
    spec:
      replicatedJobs:
      - name: node
        template:
          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
          spec: {template: {spec: {containers: [{name: node, image: torch}]}}}
)";

class TrainJobReconcilerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = std::move(*store::SqliteStore::Open({.clock = &clock_}));
    reconciler_ = std::make_unique<TrainJobReconciler>(TrainJobReconcilerOptions{
        .store = store_.get(), .clock = &clock_, .replicas = {.ports = &ports_}});
  }
  void Apply(const std::string& yaml) {
    auto docs = api::ParseManifests(yaml, "x.yaml");
    ASSERT_TRUE(docs.ok()) << docs.status().ToString();
    api::CheckedObject checked = api::DecodeAndValidate((*docs)[0].value);
    ASSERT_TRUE(checked.result.ok()) << checked.result.errors[0].ToString();
    ASSERT_TRUE(store_->Create(api::EncodeObject(*checked.object)).ok());
  }
  void Submit(const std::string& extra_spec = "") {
    Apply(
        "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\n"
        "metadata: {name: tj, namespace: default}\nspec:\n  runtimeRef: {name: torch}\n"
        "  trainer: {numNodes: 2, command: [torchrun, train.py]}\n" +
        extra_spec);
  }
  ReconcileResult Reconcile() {
    Result<ReconcileResult> r = reconciler_->Reconcile({"TrainJob", "default", "tj"});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : ReconcileResult{};
  }
  Json TrainJob() { return *store_->Get({"TrainJob", "default", "tj"}); }
  Result<Json> JobSet() { return store_->Get({"JobSet", "default", "tj"}); }
  std::string Condition(const std::string& type) {
    Json job = TrainJob();
    for (const Json& c : api::ArrayRefAt(job, {"status", "conditions"})) {
      if (api::StringAt(c, "type") == type) {
        return api::StringAt(c, "status") + " " + api::StringAt(c, "reason") + ": " +
               api::StringAt(c, "message");
      }
    }
    return "";
  }
  void SetJobSetStatus(const Json& status) {
    Json jobset = *JobSet();
    jobset["status"] = status;
    ASSERT_TRUE(store_->UpdateStatus(jobset).ok());
  }
  void Patch(const char* field, Json value) {
    Json job = TrainJob();
    job["spec"][field] = std::move(value);
    ASSERT_TRUE(store_->Update(job).ok());
  }

  FakeClock clock_;
  FakePortAllocator ports_{31000};
  std::unique_ptr<store::ObjectStore> store_;
  std::unique_ptr<TrainJobReconciler> reconciler_;
};

std::map<std::string, std::string> NodeEnv(const Json& jobset) {
  std::map<std::string, std::string> env;
  const Json& node =
      jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0];
  for (const Json& var : node["env"]) env[var["name"]] = var.value("value", "<from>");
  return env;
}

TEST_F(TrainJobReconcilerTest, TheRuntimeMakesAJobSetWhoseRendezvousIsAPortOfTheJobs) {
  Apply(kRuntime);
  Submit();
  Reconcile();
  Result<Json> jobset = JobSet();
  ASSERT_TRUE(jobset.ok()) << jobset.status().ToString();
  EXPECT_EQ(jobset->at("metadata").at("ownerReferences")[0]["kind"], "TrainJob");
  std::map<std::string, std::string> env = NodeEnv(*jobset);
  EXPECT_EQ(env["PET_MASTER_ADDR"], "127.0.0.1");
  EXPECT_EQ(env["PET_MASTER_PORT"], "31000");
  EXPECT_EQ(env["PET_NNODES"], "2");
  // Reconciling again keeps the port and writes nothing new.
  std::string version = api::StringAt(*jobset, {"metadata", "resourceVersion"});
  Reconcile();
  EXPECT_EQ(api::StringAt(*JobSet(), {"metadata", "resourceVersion"}), version);
}

// On a cluster a runtime's podGroupPolicy gets its PodGroup, as upstream's
// plugins build it: every pod of the JobSet, and what they ask together.
TEST_F(TrainJobReconcilerTest, OnAClusterTheRuntimesGangPolicyGetsItsPodGroup) {
  reconciler_ = std::make_unique<TrainJobReconciler>(TrainJobReconcilerOptions{
      .store = store_.get(), .clock = &clock_, .replicas = {.cluster = ReplicaOptions::Cluster{}}});
  std::string runtime = kRuntime;
  runtime.replace(runtime.find("  template:"), 0,
                  "  podGroupPolicy: {coscheduling: {scheduleTimeoutSeconds: 120}}\n");
  Apply(runtime);
  Submit("  suspend: true\n");
  Json job = TrainJob();
  job["spec"]["trainer"]["resourcesPerNode"] = {
      {"requests", {{"cpu", "1500m"}, {"memory", "1Gi"}}}};
  ASSERT_TRUE(store_->Update(job).ok());
  Reconcile();
  Result<Json> group = store_->Get({"PodGroup.scheduling.x-k8s.io", "default", "tj"});
  ASSERT_TRUE(group.ok()) << group.status().ToString();
  EXPECT_EQ((*group)["spec"], Json::parse(R"({"minMember": 2,
                                              "minResources": {"cpu": "3", "memory": "2Gi"},
                                              "scheduleTimeoutSeconds": 120})"));
  EXPECT_EQ((*group)["metadata"]["ownerReferences"][0]["kind"], "TrainJob");
  EXPECT_EQ(NodeEnv(*JobSet())["PET_NNODES"], "2");
  // While suspended it follows the job (here, what each node asks for).
  job = TrainJob();
  job["spec"]["trainer"]["resourcesPerNode"] = {{"requests", {{"cpu", "1"}}}};
  ASSERT_TRUE(store_->Update(job).ok());
  Reconcile();
  EXPECT_EQ(
      (*store_->Get({"PodGroup.scheduling.x-k8s.io", "default", "tj"}))["spec"]["minResources"],
      Json::parse(R"({"cpu": "2"})"));
}

// On a cluster nothing of trainyard's admits TrainJobs: what admission
// would refuse fails the job at its field, instead of a retry for ever.
TEST_F(TrainJobReconcilerTest, AJobNoAdmissionCheckedFailsAtItsInvalidField) {
  Apply(kRuntime);
  ASSERT_TRUE(store_
                  ->Create(Json::parse(R"({"apiVersion": "trainer.kubeflow.org/v1alpha1",
                     "kind": "TrainJob", "metadata": {"name": "tj", "namespace": "default"},
                     "spec": {"runtimeRef": {}, "trainer": {"numNodes": 2}}})"))
                  .ok());
  Reconcile();
  EXPECT_THAT(Condition("Failed"), HasSubstr("True TrainJobResourcesCreationFailed: "));
  EXPECT_THAT(Condition("Failed"), HasSubstr("spec.runtimeRef.name: Required value"));
  EXPECT_FALSE(JobSet().ok());
}

TEST_F(TrainJobReconcilerTest, ARunningJobKeepsItsJobSetWhateverBecomesOfTheRuntime) {
  Apply(kRuntime);
  Submit();
  Reconcile();
  std::string version = api::StringAt(*JobSet(), {"metadata", "resourceVersion"});
  ASSERT_TRUE(store_->Delete({"ClusterTrainingRuntime", "", "torch"}).ok());
  Reconcile();
  EXPECT_EQ(Condition("Failed"), "");
  EXPECT_EQ(api::StringAt(*JobSet(), {"metadata", "resourceVersion"}), version);
}

TEST_F(TrainJobReconcilerTest, AJobSetOfItsNameThatIsAnothersIsLeftAlone) {
  Apply(kRuntime);
  Apply(R"(
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: tj, namespace: default}
spec:
  replicatedJobs:
  - name: mine
    template: {spec: {template: {spec: {containers: [{name: c, image: i}]}}}}
)");
  Submit();
  EXPECT_EQ(Reconcile().requeue_after, seconds(5));
  EXPECT_EQ((*JobSet())["spec"]["replicatedJobs"][0]["name"], "mine");
  EXPECT_EQ(Condition("Complete"), "");
}

TEST_F(TrainJobReconcilerTest, AJobSetThatEndedInTimeIsNotPastTheDeadline) {
  Apply(kRuntime);
  Submit("  activeDeadlineSeconds: 10\n");
  Reconcile();
  SetJobSetStatus(Json::parse(R"({"conditions": [{"type": "Completed", "status": "True",
    "reason": "AllJobsCompleted", "message": "jobset completed successfully"}]})"));
  clock_.Advance(seconds(11));  // the reconcile comes late
  Reconcile();
  EXPECT_EQ(Condition("Complete"), "True AllJobsCompleted: jobset completed successfully");
  EXPECT_EQ(Condition("Failed"), "");
}

TEST_F(TrainJobReconcilerTest, ASuspendedJobReconciledAgainWritesNothing) {
  Apply(kRuntime);
  Submit("  suspend: true\n");
  Reconcile();
  std::string job = api::StringAt(TrainJob(), {"metadata", "resourceVersion"});
  std::string jobset = api::StringAt(*JobSet(), {"metadata", "resourceVersion"});
  Reconcile();
  EXPECT_EQ(api::StringAt(TrainJob(), {"metadata", "resourceVersion"}), job);
  EXPECT_EQ(api::StringAt(*JobSet(), {"metadata", "resourceVersion"}), jobset);
}

TEST_F(TrainJobReconcilerTest, AMissingRuntimeFailsUntilItComes) {
  Submit();
  ReconcileResult result = Reconcile();
  EXPECT_THAT(Condition("Failed"),
              HasSubstr("True TrainingRuntimeNotSupported: unsupported "
                        "runtime: ClusterTrainingRuntime torch was not found"));
  EXPECT_EQ(result.requeue_after, seconds(5));
  EXPECT_FALSE(JobSet().ok());
  Apply(kRuntime);
  Reconcile();
  EXPECT_EQ(Condition("Failed"), "");
  EXPECT_TRUE(JobSet().ok());
}

TEST_F(TrainJobReconcilerTest, CompleteAndJobsStatusComeFromTheJobSet) {
  Apply(kRuntime);
  Submit();
  Reconcile();
  SetJobSetStatus(Json::parse(R"({
    "conditions": [{"type": "Completed", "status": "True", "reason": "AllJobsCompleted",
                    "message": "jobset completed successfully"}],
    "replicatedJobsStatus": [{"name": "node", "ready": 0, "succeeded": 1, "failed": 0,
                              "active": 0, "suspended": 0}]})"));
  Reconcile();
  EXPECT_EQ(Condition("Complete"), "True AllJobsCompleted: jobset completed successfully");
  EXPECT_EQ(TrainJob()["status"]["jobsStatus"][0]["succeeded"], 1);
  EXPECT_EQ(ports_.released(), std::set<int>{31000});
}

TEST_F(TrainJobReconcilerTest, AJobDeletedWhileItRunsGivesItsPortBack) {
  Apply(kRuntime);
  Submit();
  Reconcile();
  EXPECT_TRUE(ports_.released().empty());
  ASSERT_TRUE(store_->Delete({"TrainJob", "default", "tj"}).ok());
  Reconcile();
  EXPECT_EQ(ports_.released(), std::set<int>{31000});
}

TEST_F(TrainJobReconcilerTest, SuspendAndResumeReachTheJobSetInUpstreamsWords) {
  Apply(kRuntime);
  Submit("  suspend: true\n");
  Reconcile();
  EXPECT_EQ(Condition("Suspended"), "True Suspended: TrainJob is suspended");
  EXPECT_EQ((*JobSet())["spec"]["suspend"], true);
  Patch("suspend", false);
  Reconcile();
  EXPECT_EQ(Condition("Suspended"), "False Resumed: TrainJob is resumed");
  EXPECT_EQ((*JobSet())["spec"]["suspend"], false);
}

TEST_F(TrainJobReconcilerTest, TheDeadlineFiresFromATimerAndRestartsOnResume) {
  Apply(kRuntime);
  Submit("  activeDeadlineSeconds: 10\n");
  EXPECT_EQ(Reconcile().requeue_after, seconds(10));
  clock_.Advance(seconds(5));
  Patch("suspend", true);
  Reconcile();
  clock_.Advance(seconds(60));
  Patch("suspend", false);
  EXPECT_EQ(Reconcile().requeue_after, seconds(10));  // counted from the resume
  clock_.Advance(seconds(10));
  Reconcile();
  EXPECT_EQ(Condition("Failed"), "True DeadlineExceeded: TrainJob exceeded its active deadline");
  EXPECT_FALSE(JobSet().ok());
}

TEST_F(TrainJobReconcilerTest, AJobManagedByAnotherControllerIsLeftAlone) {
  Apply(kRuntime);
  Submit("  managedBy: kueue.x-k8s.io/multikueue\n");
  Reconcile();
  EXPECT_FALSE(JobSet().ok());
  EXPECT_EQ(Condition("Suspended"), "");
}

TEST_F(TrainJobReconcilerTest, WhatTheRuntimeCannotGiveFailsTheJobWithTheReasons) {
  Apply(kRuntime);
  Submit("  initializer: {dataset: {storageUri: 'hf://org/data'}}\n");
  Reconcile();
  EXPECT_THAT(Condition("Failed"),
              HasSubstr("True TrainJobResourcesCreationFailed: TrainJob resources reconciliation "
                        "failed: spec.runtimeRef: Invalid value: must have dataset-initializer "
                        "job"));
  EXPECT_FALSE(JobSet().ok());
}

}  // namespace
}  // namespace trainyard::controller
