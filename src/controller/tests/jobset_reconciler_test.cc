// The JobSet lifecycle at the controller level: a fake clock, an in-memory
// store, and the test playing the batch/v1 Job controller.
#include "controller/jobset_reconciler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/object.h"
#include "api/validation.h"
#include "api/yaml.h"
#include "store/sqlite_store.h"

namespace trainyard::controller {
namespace {

using api::Json;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

class JobSetReconcilerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = std::move(*store::SqliteStore::Open({.clock = &clock_}));
    reconciler_ = std::make_unique<JobSetReconciler>(
        JobSetReconcilerOptions{.store = store_.get(), .clock = &clock_});
  }

  void Submit(const std::string& spec) {
    auto docs = api::ParseManifests(
        "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\n"
        "metadata: {name: js, namespace: default}\nspec:\n" +
            spec,
        "jobset.yaml");
    ASSERT_TRUE(docs.ok()) << docs.status().ToString();
    api::CheckedObject checked = api::DecodeAndValidate((*docs)[0].value);
    ASSERT_TRUE(checked.result.ok()) << checked.result.errors[0].ToString();
    ASSERT_TRUE(store_->Create(api::EncodeObject(*checked.object)).ok());
  }
  void Reconcile() {
    Result<ReconcileResult> r = reconciler_->Reconcile({"JobSet", "default", "js"});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }
  Json JobSet() { return *store_->Get({"JobSet", "default", "js"}); }
  std::vector<std::string> Jobs() {
    std::vector<std::string> names;
    store::ObjectStore::ListResult list = *store_->List("Job", "default");
    for (const Json& doc : list.items) {
      names.push_back(api::StringAt(doc, {"metadata", "name"}));
    }
    return names;
  }
  Json Job(const std::string& name) { return *store_->Get({"Job", "default", name}); }
  // Plays the Job controller: a condition, or pods counted ready.
  void SetJob(const std::string& name, const std::string& condition, int ready = 0,
              const std::string& reason = "BackoffLimitExceeded") {
    Json job = Job(name);
    job["status"] = {{"ready", ready}, {"active", ready}};
    if (!condition.empty()) {
      job["status"]["conditions"] = Json::array(
          {{{"type", condition}, {"status", "True"}, {"reason", reason}, {"message", "m"}}});
    }
    ASSERT_TRUE(store_->UpdateStatus(job).ok());
  }
  std::string Condition(const std::string& type) {
    Json jobset = JobSet();  // held: a range-for keeps no temporary alive
    for (const Json& c : api::ArrayRefAt(jobset, {"status", "conditions"})) {
      if (api::StringAt(c, "type") == type) {
        return api::StringAt(c, "status") + " " + api::StringAt(c, "reason") + ": " +
               api::StringAt(c, "message");
      }
    }
    return "";
  }

  FakeClock clock_;
  std::unique_ptr<store::ObjectStore> store_;
  std::unique_ptr<JobSetReconciler> reconciler_;
};

constexpr const char* kTwoSteps = R"(  replicatedJobs:
  - name: init
    template: {spec: {template: {spec: {containers: [{name: c, image: i}]}}}}
  - name: workers
    replicas: 2
    dependsOn: [{name: init, status: Complete}]
    template:
      metadata: {labels: {step: train}}
      spec:
        parallelism: 3
        completions: 3
        template: {spec: {containers: [{name: c, image: i}]}}
)";

TEST_F(JobSetReconcilerTest, EachStepBecomesIndexedJobsOnceWhatItDependsOnCompletes) {
  Submit(kTwoSteps);
  Reconcile();
  EXPECT_THAT(Jobs(), ElementsAre("js-init-0"));
  Json service = *store_->Get({"Service", "default", "js"});
  EXPECT_EQ(service["spec"]["clusterIP"], "None");
  SetJob("js-init-0", "Complete");
  Reconcile();
  EXPECT_THAT(Jobs(), UnorderedElementsAre("js-init-0", "js-workers-0", "js-workers-1"));
  Json job = Job("js-workers-1");
  EXPECT_EQ(job["spec"]["completionMode"], "Indexed");
  EXPECT_EQ(job["spec"]["parallelism"], 3);
  EXPECT_EQ(job["metadata"]["labels"]["step"], "train");
  const Json& pod = job["spec"]["template"];
  EXPECT_EQ(pod["spec"]["subdomain"], "js");
  EXPECT_EQ(pod["metadata"]["labels"]["jobset.sigs.k8s.io/jobset-name"], "js");
  EXPECT_EQ(pod["metadata"]["labels"]["jobset.sigs.k8s.io/replicatedjob-name"], "workers");
  EXPECT_EQ(pod["metadata"]["labels"]["jobset.sigs.k8s.io/job-index"], "1");
  EXPECT_EQ(pod["metadata"]["labels"]["jobset.sigs.k8s.io/restart-attempt"], "0");
  EXPECT_EQ(JobSet()["status"]["replicatedJobsStatus"],
            Json::parse(R"([{"name": "init", "ready": 0, "succeeded": 1, "failed": 0,
                             "active": 0, "suspended": 0},
                            {"name": "workers", "ready": 0, "succeeded": 0, "failed": 0,
                             "active": 0, "suspended": 0}])"));
}

TEST_F(JobSetReconcilerTest, ReadyMeansEveryPodOfEveryJobIsUp) {
  Submit(R"(  replicatedJobs:
  - name: node
    template: {spec: {parallelism: 2, completions: 2,
                      template: {spec: {containers: [{name: c, image: i}]}}}}
  - name: launcher
    dependsOn: [{name: node, status: Ready}]
    template: {spec: {template: {spec: {containers: [{name: c, image: i}]}}}}
)");
  Reconcile();
  SetJob("js-node-0", "", 1);
  Reconcile();
  EXPECT_THAT(Jobs(), ElementsAre("js-node-0"));
  SetJob("js-node-0", "", 2);
  Reconcile();
  EXPECT_THAT(Jobs(), UnorderedElementsAre("js-node-0", "js-launcher-0"));
}

TEST_F(JobSetReconcilerTest, WithoutAFailurePolicyOneFailedJobFailsTheJobSet) {
  Submit(kTwoSteps);
  Reconcile();
  SetJob("js-init-0", "Failed");
  Reconcile();
  EXPECT_EQ(Condition("Failed"), "True FailedJobs: jobset failed due to one or more job failures");
  EXPECT_EQ(JobSet()["status"]["terminalState"], "Failed");
}

TEST_F(JobSetReconcilerTest, AFailedJobRestartsEveryJobUntilMaxRestarts) {
  Submit(std::string("  failurePolicy: {maxRestarts: 1}\n") + kTwoSteps);
  Reconcile();
  SetJob("js-init-0", "Failed");
  Reconcile();
  EXPECT_EQ(JobSet()["status"]["restarts"], 1);
  Reconcile();  // the engine reconciles again on the status write
  EXPECT_THAT(Jobs(), ElementsAre("js-init-0"));
  EXPECT_EQ(Job("js-init-0")["metadata"]["labels"]["jobset.sigs.k8s.io/restart-attempt"], "1");
  SetJob("js-init-0", "Failed");
  Reconcile();
  EXPECT_EQ(Condition("Failed"),
            "True ReachedMaxRestarts: jobset failed due to reaching max number of restarts");
}

TEST_F(JobSetReconcilerTest, ARuleCanFailAtOnceOrRestartWithoutCounting) {
  Submit(std::string(R"(  failurePolicy:
    maxRestarts: 0
    rules:
    - {name: deadline, action: FailJobSet, onJobFailureReasons: [DeadlineExceeded]}
    - {name: oom, action: FailJobSet, onJobFailureMessagePatterns: ["exit code 13[7]"]}
    - {name: flaky, action: RestartJobSetAndIgnoreMaxRestarts}
)") + kTwoSteps);
  Reconcile();
  SetJob("js-init-0", "Failed");  // message "m": neither FailJobSet rule matches
  Reconcile();
  Reconcile();
  EXPECT_EQ(JobSet()["status"]["restarts"], 1);
  EXPECT_EQ(JobSet()["status"]["restartsCountTowardsMax"], nullptr);
  SetJob("js-init-0", "Failed", 0, "DeadlineExceeded");
  Reconcile();
  EXPECT_EQ(Condition("Failed"),
            "True FailJobSetFailurePolicyAction: applying FailJobSet failure policy action");
}

TEST_F(JobSetReconcilerTest, AMessagePatternPicksItsRule) {
  Submit(std::string(R"(  failurePolicy:
    maxRestarts: 5
    rules:
    - {name: oom, action: FailJobSet, onJobFailureMessagePatterns: ["exit code 13[7]"]}
)") + kTwoSteps);
  Reconcile();
  Json job = Job("js-init-0");
  job["status"]["conditions"] = Json::array({{{"type", "Failed"},
                                              {"status", "True"},
                                              {"reason", "PodFailurePolicy"},
                                              {"message", "failed with exit code 137"}}});
  ASSERT_TRUE(store_->UpdateStatus(job).ok());
  Reconcile();
  EXPECT_THAT(Condition("Failed"), ::testing::HasSubstr("FailJobSetFailurePolicyAction"));
}

TEST_F(JobSetReconcilerTest, TtlDeletesTheFinishedJobSet) {
  Submit(std::string("  ttlSecondsAfterFinished: 30\n") + kTwoSteps);
  Reconcile();
  SetJob("js-init-0", "Failed");
  Result<ReconcileResult> r = reconciler_->Reconcile({"JobSet", "default", "js"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->requeue_after, std::chrono::seconds(30));
  clock_.Advance(std::chrono::seconds(30));
  Reconcile();
  EXPECT_FALSE(store_->Get({"JobSet", "default", "js"}).ok());
}

TEST_F(JobSetReconcilerTest, AJobOfItsNameThatIsAnothersIsLeftAloneAndWaitedFor) {
  auto docs = api::ParseManifests(R"(
apiVersion: batch/v1
kind: Job
metadata: {name: js-init-0, namespace: default}
spec:
  template: {spec: {restartPolicy: Never, containers: [{name: c, image: i}]}}
)",
                                  "job.yaml");
  ASSERT_TRUE(store_->Create((*docs)[0].value).ok());
  Submit(kTwoSteps);
  Result<ReconcileResult> r = reconciler_->Reconcile({"JobSet", "default", "js"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->requeue_after, std::chrono::seconds(5));
  EXPECT_EQ(Job("js-init-0")["metadata"].value("ownerReferences", Json()), Json());
}

TEST_F(JobSetReconcilerTest, SuccessPolicyTargetsCompleteItAndTheRestStop) {
  Submit(R"(  successPolicy: {operator: All, targetReplicatedJobs: [launcher]}
  replicatedJobs:
  - name: node
    template: {spec: {template: {spec: {containers: [{name: c, image: i}]}}}}
  - name: launcher
    template: {spec: {template: {spec: {containers: [{name: c, image: i}]}}}}
)");
  Reconcile();
  SetJob("js-launcher-0", "Complete");
  Reconcile();
  EXPECT_EQ(Condition("Completed"), "True AllJobsCompleted: jobset completed successfully");
  EXPECT_THAT(Jobs(), ElementsAre("js-launcher-0"));  // the node Job still running is stopped
}

TEST_F(JobSetReconcilerTest, SuspendReachesEveryJobAndResumeLetsThemGo) {
  Submit(std::string("  suspend: true\n") + kTwoSteps);
  Reconcile();
  EXPECT_EQ(Job("js-init-0")["spec"]["suspend"], true);
  EXPECT_EQ(Condition("Suspended"), "True SuspendedJobs: jobset is suspended");
  // While suspended, Kueue (say) places it: the resumed Job's pods go there.
  Json js = JobSet();
  js["spec"]["suspend"] = false;
  js["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["nodeSelector"] = {
      {"pool", "a"}};
  ASSERT_TRUE(store_->Update(js).ok());
  Reconcile();
  EXPECT_EQ(Job("js-init-0")["spec"]["suspend"], false);
  EXPECT_EQ(Job("js-init-0")["spec"]["template"]["spec"]["nodeSelector"]["pool"], "a");
  EXPECT_EQ(Condition("Suspended"), "False ResumeJobs: jobset is resumed");
}

}  // namespace
}  // namespace trainyard::controller
