// The OptimizationJob controller on its own, over a real (in-memory) store,
// with the tests ending its trials (TrainJobs) as the TrainJob controller
// and the trainer would: it keeps parallelTrials trials running, gives each
// its parameters as KUBEFLOW_TRAINER_OPT_<NAME>, reads what they report,
// keeps the best (and the Pareto front), and ends after numTrials.
#include "controller/optimization_job_reconciler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/object.h"
#include "api/optimization_job.h"
#include "api/yaml.h"
#include "controller/optimization_trials.h"
#include "store/sqlite_store.h"

namespace trainyard::controller {
namespace {

using ::testing::HasSubstr;

constexpr const char* kJob = R"(apiVersion: trainer.kubeflow.org/v1alpha1
kind: OptimizationJob
metadata: {name: o, namespace: default}
spec:
  objectives: [{metric: loss}]
  numTrials: 4
  parallelTrials: 2
  searchAlgorithm: {random: {seed: 3}}
  parameters:
  - name: learning-rate
    searchSpace: {logUniform: {min: "0.001", max: "0.1"}}
  - name: layers
    searchSpace: {uniform: {min: "1", max: "4", type: Int}}
  trainJobTemplate:
    metadata: {labels: {team: a}}
    spec:
      runtimeRef: {name: torch-distributed}
      trainer: {command: [train], env: [{name: KEEP, value: "1"}]}
)";

class OptimizationJobReconcilerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = std::move(*store::SqliteStore::Open({.clock = &clock_}));
    Restart();
  }
  void Create(const std::string& yaml) {
    auto docs = api::ParseManifests(yaml, "o.yaml");
    ASSERT_TRUE(docs.ok());
    ASSERT_TRUE(store_->Create((*docs)[0].value).ok());
  }
  // A controller made anew, as after a crash: it has only the store.
  void Restart() {
    reconciler_ = std::make_unique<OptimizationJobReconciler>(OptimizationJobReconcilerOptions{
        .store = store_.get(), .observations = store_.get(), .clock = &clock_});
  }
  Result<ReconcileResult> Reconcile() {
    return reconciler_->Reconcile({"OptimizationJob", "default", "o"});
  }
  std::vector<api::Json> Trials() {
    std::vector<api::Json> out = store_->List("TrainJob", "default")->items;
    std::sort(out.begin(), out.end(), [](const api::Json& a, const api::Json& b) {
      return std::stoi(a["metadata"]["labels"]["trainyard.dev/trial-index"].get<std::string>()) <
             std::stoi(b["metadata"]["labels"]["trainyard.dev/trial-index"].get<std::string>());
    });
    return out;
  }
  std::vector<std::string> Running() {
    std::vector<std::string> out;
    for (const api::Json& t : Trials()) {
      if (!api::JobOutcome(t)) out.push_back(t["metadata"]["name"]);
    }
    return out;
  }
  // Ends trial `name` as its TrainJob controller would, with what its
  // trainer pushed (KEP-2779's metrics), if anything.
  void Finish(const std::string& name, const std::string& type,
              std::vector<std::pair<std::string, std::string>> metrics) {
    api::Json trial = *store_->Get({"TrainJob", "default", name});
    trial["status"]["conditions"] = {{{"type", type},
                                      {"status", "True"},
                                      {"reason", type},
                                      {"lastTransitionTime", FormatRfc3339(clock_.Now())}}};
    if (!metrics.empty()) {
      api::Json pushed = api::Json::array();
      for (const auto& [n, v] : metrics) pushed.push_back({{"name", n}, {"value", v}});
      trial["status"]["trainerStatus"] = {{"metrics", pushed},
                                          {"lastUpdatedTime", FormatRfc3339(clock_.Now())}};
    }
    ASSERT_TRUE(store_->UpdateStatus(trial).ok());
  }
  api::OptimizationJobStatus Status() {
    api::DecodeResult d = api::DecodeObject(*store_->Get({"OptimizationJob", "default", "o"}));
    return api::OptimizationJobFieldsOf(std::get<api::CoreObject>(*d.object)).status;
  }
  const api::MetaCondition* Condition(const api::OptimizationJobStatus& s,
                                      const std::string& type) {
    for (const api::MetaCondition& c : s.conditions) {
      if (c.type == type) return &c;
    }
    return nullptr;
  }
  std::string Env(const api::Json& trial, const std::string& name) {
    for (const api::Json& e : trial["spec"]["trainer"]["env"]) {
      if (e["name"] == name) return e["value"];
    }
    return "";
  }

  FakeClock clock_;
  std::unique_ptr<store::SqliteStore> store_;
  std::unique_ptr<OptimizationJobReconciler> reconciler_;
};

TEST_F(OptimizationJobReconcilerTest, TrialsAreTrainJobsGivenTheirParametersAsEnvironment) {
  Create(kJob);
  ASSERT_TRUE(Reconcile().ok());
  std::vector<api::Json> trials = Trials();
  ASSERT_EQ(trials.size(), 2u) << "parallelTrials";
  const api::Json& t = trials[0];
  EXPECT_EQ(t["metadata"]["name"], "o-trial-0");
  EXPECT_EQ(trials[1]["metadata"]["name"], "o-trial-1");
  EXPECT_EQ(t["metadata"]["labels"]["team"], "a") << "the template's labels";
  EXPECT_EQ(t["metadata"]["labels"]["trainyard.dev/optimization-job"], "o");
  EXPECT_EQ(t["metadata"]["ownerReferences"][0]["kind"], "OptimizationJob");
  EXPECT_EQ(t["metadata"]["ownerReferences"][0]["controller"], true);
  EXPECT_EQ(t["spec"]["runtimeRef"]["name"], "torch-distributed");
  EXPECT_EQ(Env(t, "KEEP"), "1") << "the template's env stays";
  double lr = std::stod(Env(t, "KUBEFLOW_TRAINER_OPT_LEARNING_RATE"));
  EXPECT_GE(lr, 0.001);
  EXPECT_LE(lr, 0.1);
  std::string layers = Env(t, "KUBEFLOW_TRAINER_OPT_LAYERS");
  EXPECT_THAT(layers, ::testing::MatchesRegex("[1-4]")) << "an Int parameter is a whole number";
  api::Json parameters = api::Json::parse(
      t["metadata"]["annotations"]["trainyard.dev/trial-parameters"].get<std::string>());
  EXPECT_EQ(parameters["layers"], layers);
  api::OptimizationJobStatus s = Status();
  const api::MetaCondition* created = Condition(s, "Created");
  ASSERT_NE(created, nullptr);
  EXPECT_EQ(created->status, "True");
}

TEST_F(OptimizationJobReconcilerTest, KeepsParallelTrialsAndEndsWithTheBestAfterNumTrials) {
  Create(kJob);
  ASSERT_TRUE(Reconcile().ok());
  ASSERT_TRUE(Reconcile().ok());
  EXPECT_EQ(Trials().size(), 2u) << "nothing ended: no new trial";
  std::vector<std::string> losses = {"0.5", "0.2", "0.9", "0.4"};
  for (size_t round = 0; round < 10 && !Running().empty(); ++round) {
    std::string name = Running().front();
    int index = std::stoi(name.substr(name.rfind('-') + 1));
    Finish(name, "Complete", {{"loss", losses[index]}});
    ASSERT_TRUE(Reconcile().ok());
    EXPECT_LE(Running().size(), 2u);
  }
  EXPECT_EQ(Trials().size(), 4u);
  api::OptimizationJobStatus s = Status();
  ASSERT_TRUE(s.result);
  EXPECT_EQ(s.result->train_job_name, "o-trial-1");
  EXPECT_EQ(s.result->metrics, (std::vector<api::NamedValue>{{"loss", "0.2"}}));
  EXPECT_EQ(s.result->parameters.size(), 2u);
  ASSERT_TRUE(s.trial_counts);
  EXPECT_EQ(s.trial_counts->succeeded, 4);
  const api::MetaCondition* complete = Condition(s, "Complete");
  ASSERT_NE(complete, nullptr);
  EXPECT_EQ(complete->reason, "MaxTrialsReached");
  EXPECT_TRUE(s.pareto_front.empty()) << "one objective: no front";
}

TEST_F(OptimizationJobReconcilerTest, ARestartedControllerResumesFromItsTrainJobs) {
  Create(kJob);
  ASSERT_TRUE(Reconcile().ok());
  std::vector<api::Json> before = Trials();
  Restart();
  ASSERT_TRUE(Reconcile().ok());
  EXPECT_EQ(Trials(), before) << "nothing made twice";
  Finish("o-trial-0", "Complete", {{"loss", "0.3"}});
  Restart();
  ASSERT_TRUE(Reconcile().ok());
  std::vector<api::Json> after = Trials();
  ASSERT_EQ(after.size(), 3u);
  EXPECT_EQ(after[2]["metadata"]["name"], "o-trial-2");
}

// A trial deleted by hand is made again under a name no trial holds.
TEST_F(OptimizationJobReconcilerTest, ATrialDeletedByHandIsReplacedUnderAFreshName) {
  Create(kJob);
  ASSERT_TRUE(Reconcile().ok());
  Finish("o-trial-1", "Complete", {{"loss", "0.3"}});
  ASSERT_TRUE(Reconcile().ok());  // o-trial-2 takes its place
  ASSERT_TRUE(store_->Delete({"TrainJob", "default", "o-trial-0"}).ok());
  ASSERT_TRUE(Reconcile().ok());
  std::vector<std::string> names;
  for (const api::Json& t : Trials()) names.push_back(t["metadata"]["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"o-trial-1", "o-trial-2", "o-trial-3"}));
}

// A trial's name held by a TrainJob the job does not own fails the job
// with the name, where asking again would wait for good.
TEST_F(OptimizationJobReconcilerTest, ANameHeldByAnotherTrainJobFailsTheJobSayingWhich) {
  ASSERT_TRUE(store_
                  ->Create({{"apiVersion", "trainer.kubeflow.org/v1alpha1"},
                            {"kind", "TrainJob"},
                            {"metadata", {{"name", "o-trial-0"}, {"namespace", "default"}}},
                            {"spec", {{"runtimeRef", {{"name", "r"}}}}}})
                  .ok());
  Create(kJob);
  ASSERT_TRUE(Reconcile().ok());
  api::OptimizationJobStatus s = Status();
  const api::MetaCondition* failed = Condition(s, "Failed");
  ASSERT_NE(failed, nullptr);
  EXPECT_EQ(failed->reason, "TrainJobsCreationFailed");
  EXPECT_THAT(failed->message, HasSubstr("TrainJob o-trial-0 exists and is not this job's trial"));
}

TEST_F(OptimizationJobReconcilerTest, APrintedMetricIsReadFromTheCollectedOutput) {
  Create(kJob);
  ASSERT_TRUE(Reconcile().ok());
  ASSERT_TRUE(store_
                  ->AppendObservations(store::JobObservationsId("TrainJob", "default", "o-trial-0"),
                                       {{.time_us = 1, .metric = "loss", .value = "0.7"},
                                        {.time_us = 2, .metric = "loss", .value = "0.25"}},
                                       "", 0)
                  .ok());
  Finish("o-trial-0", "Complete", {});
  ASSERT_TRUE(Reconcile().ok());
  api::OptimizationJobStatus s = Status();
  ASSERT_TRUE(s.result);
  EXPECT_EQ(s.result->train_job_name, "o-trial-0");
  EXPECT_EQ(s.result->metrics[0].value, "0.25") << "the latest value";
}

TEST_F(OptimizationJobReconcilerTest, ATrialThatNeverReportsIsWaitedForThenFails) {
  Create(R"(apiVersion: trainer.kubeflow.org/v1alpha1
kind: OptimizationJob
metadata: {name: o, namespace: default}
spec:
  objectives: [{metric: loss}]
  parameters: [{name: x, searchSpace: {categorical: {choices: [a, b]}}}]
  trainJobTemplate: {spec: {runtimeRef: {name: r}}}
)");
  ASSERT_TRUE(Reconcile().ok());
  Finish("o-trial-0", "Complete", {});
  Result<ReconcileResult> r = Reconcile();
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->requeue_after) << "its last output may still be read";
  EXPECT_EQ(Condition(Status(), "Failed"), nullptr);
  clock_.Advance(std::chrono::seconds(11));
  ASSERT_TRUE(Reconcile().ok());
  api::OptimizationJobStatus s = Status();
  const api::MetaCondition* failed = Condition(s, "Failed");
  ASSERT_NE(failed, nullptr);
  EXPECT_EQ(failed->reason, "AllTrialsFailed");
  EXPECT_THAT(failed->message, HasSubstr("1 out of 1 trials failed"));
  EXPECT_THAT(failed->message, HasSubstr("print it as loss=<number>"));
}

TEST_F(OptimizationJobReconcilerTest, TwoObjectivesEndWithTheParetoFront) {
  Create(R"(apiVersion: trainer.kubeflow.org/v1alpha1
kind: OptimizationJob
metadata: {name: o, namespace: default}
spec:
  objectives: [{metric: accuracy, direction: Maximize}, {metric: params}]
  numTrials: 3
  parallelTrials: 3
  parameters: [{name: h, searchSpace: {uniform: {min: "1", max: "100", type: Int}}}]
  trainJobTemplate: {spec: {runtimeRef: {name: r}}}
)");
  ASSERT_TRUE(Reconcile().ok());
  Finish("o-trial-0", "Complete", {{"accuracy", "0.9"}, {"params", "100"}});
  Finish("o-trial-1", "Complete", {{"accuracy", "0.95"}, {"params", "200"}});
  Finish("o-trial-2", "Complete", {{"accuracy", "0.85"}, {"params", "300"}});  // beaten by 0
  ASSERT_TRUE(Reconcile().ok());
  api::OptimizationJobStatus s = Status();
  ASSERT_EQ(s.pareto_front.size(), 2u);
  EXPECT_EQ(s.pareto_front[0].train_job_name, "o-trial-0");
  EXPECT_EQ(s.pareto_front[1].train_job_name, "o-trial-1");
  ASSERT_TRUE(s.result);
  EXPECT_EQ(s.result->train_job_name, "o-trial-1") << "the front's best in the first objective";
  EXPECT_NE(Condition(s, "Complete"), nullptr);
  ASSERT_EQ(s.trial_results.size(), 3u) << "every trial that reported, front or not";
  EXPECT_EQ(s.trial_results[2].metrics[1].value, "300");
}

TEST_F(OptimizationJobReconcilerTest, GridEndsWhenItsPointsAreUsedUp) {
  Create(R"(apiVersion: trainer.kubeflow.org/v1alpha1
kind: OptimizationJob
metadata: {name: o, namespace: default}
spec:
  objectives: [{metric: loss}]
  numTrials: 5
  parallelTrials: 5
  searchAlgorithm: {grid: {}}
  parameters: [{name: x, searchSpace: {categorical: {choices: [a, b]}}}]
  trainJobTemplate: {spec: {runtimeRef: {name: r}}}
)");
  ASSERT_TRUE(Reconcile().ok());
  ASSERT_EQ(Trials().size(), 2u) << "two points in the grid: " << api::Encode(Status()).dump();
  EXPECT_EQ(Env(Trials()[0], "KUBEFLOW_TRAINER_OPT_X"), "a");
  EXPECT_EQ(Env(Trials()[1], "KUBEFLOW_TRAINER_OPT_X"), "b");
  Finish("o-trial-0", "Complete", {{"loss", "1"}});
  Finish("o-trial-1", "Failed", {});
  ASSERT_TRUE(Reconcile().ok());
  api::OptimizationJobStatus s = Status();
  const api::MetaCondition* complete = Condition(s, "Complete");
  ASSERT_NE(complete, nullptr);
  EXPECT_EQ(complete->reason, "SearchSpaceExhausted");
  EXPECT_THAT(complete->message, HasSubstr("1 of 2 trials succeeded"));
}

TEST_F(OptimizationJobReconcilerTest, ATemplateThatMakesNoValidTrainJobFailsTheJob) {
  Create(R"(apiVersion: trainer.kubeflow.org/v1alpha1
kind: OptimizationJob
metadata: {name: o, namespace: default}
spec:
  objectives: [{metric: loss}]
  parameters: [{name: x, searchSpace: {categorical: {choices: [a]}}}]
  trainJobTemplate: {spec: {runtimeRef: {name: r}, trainer: {env: [{name: "1BAD", value: v}]}}}
)");
  ASSERT_TRUE(Reconcile().ok());
  EXPECT_TRUE(Trials().empty());
  api::OptimizationJobStatus s = Status();
  const api::MetaCondition* failed = Condition(s, "Failed");
  ASSERT_NE(failed, nullptr);
  EXPECT_EQ(failed->reason, "TrainJobsCreationFailed");
  EXPECT_THAT(failed->message, HasSubstr("spec.trainer.env[0].name"));
  EXPECT_EQ(Condition(s, "Created")->status, "False");
}

// trainyard's spec.earlyStopping: medianstop over what trials print; a
// trial it stops is suspended, marked, and counts with what it reached.
TEST_F(OptimizationJobReconcilerTest, MedianStopSuspendsATrialWorseThanTheEndedOnes) {
  Create(R"(apiVersion: trainer.kubeflow.org/v1alpha1
kind: OptimizationJob
metadata: {name: o, namespace: default}
spec:
  objectives: [{metric: loss}]
  numTrials: 3
  parallelTrials: 2
  parameters: [{name: x, searchSpace: {uniform: {min: "0", max: "1"}}}]
  earlyStopping:
    algorithmName: medianstop
    algorithmSettings: [{name: min_trials_required, value: "1"}, {name: start_step, value: "2"}]
  trainJobTemplate: {spec: {runtimeRef: {name: r}}}
)");
  ASSERT_TRUE(Reconcile().ok());
  auto print = [&](const std::string& trial, std::vector<std::string> losses) {
    std::vector<store::ObservationRow> rows;
    for (const std::string& l : losses) {
      rows.push_back(
          {.time_us = static_cast<int64_t>(rows.size() + 1), .metric = "loss", .value = l});
    }
    ASSERT_TRUE(store_
                    ->AppendObservations(store::JobObservationsId("TrainJob", "default", trial),
                                         rows, "", 0)
                    .ok());
  };
  print("o-trial-0", {"1.0", "0.5", "0.2"});
  Finish("o-trial-0", "Complete", {});
  print("o-trial-1", {"3.0", "2.5"});  // worse than 0's best at report 2 (0.5)
  ASSERT_TRUE(Reconcile().ok());
  api::Json stopped = *store_->Get({"TrainJob", "default", "o-trial-1"});
  EXPECT_EQ(stopped["spec"]["suspend"], true);
  EXPECT_EQ(stopped["metadata"]["annotations"]["trainyard.dev/early-stopped"], "2");
  api::OptimizationJobStatus s = Status();
  ASSERT_TRUE(s.trial_counts);
  EXPECT_EQ(s.trial_counts->early_stopped, 1);
  EXPECT_EQ(s.trial_counts->running, 1) << "trial 2 took its place";
  ASSERT_EQ(s.trial_results.size(), 2u);
  EXPECT_EQ(s.trial_results[1].metrics[0].value, "2.5") << "what it reached";
  EXPECT_EQ(s.result->train_job_name, "o-trial-0");
}

// Where no trial's output is read (an operator without --katib),
// spec.earlyStopping cannot be acted on: the Created condition says so
// rather than the field being ignored in silence.
TEST_F(OptimizationJobReconcilerTest, EarlyStoppingWithNoOutputReadIsSaidInCreated) {
  reconciler_ = std::make_unique<OptimizationJobReconciler>(
      OptimizationJobReconcilerOptions{.store = store_.get(), .clock = &clock_});
  Create(R"(apiVersion: trainer.kubeflow.org/v1alpha1
kind: OptimizationJob
metadata: {name: o, namespace: default}
spec:
  objectives: [{metric: loss}]
  numTrials: 2
  parameters: [{name: x, searchSpace: {uniform: {min: "0", max: "1"}}}]
  earlyStopping: {algorithmName: medianstop}
  trainJobTemplate: {spec: {runtimeRef: {name: r}}}
)");
  ASSERT_TRUE(Reconcile().ok());
  api::OptimizationJobStatus s = Status();  // held: Condition points into it
  const api::MetaCondition* created = Condition(s, "Created");
  ASSERT_NE(created, nullptr);
  EXPECT_THAT(created->message, HasSubstr("spec.earlyStopping is not acted on"));
}

// 100 trials of 100 long-named parameters would make a status past what
// etcd keeps of an object: their parameters are dropped from trialResults
// first, then from the front; the result keeps its own.
TEST(BoundOptimizationStatusTest, ParametersGoFirstFromTrialResultsThenFromTheFront) {
  api::OptimizationTrialResult trial{.train_job_name = "o-trial-1",
                                     .metrics = {{.name = "loss", .value = "0.5"}}};
  for (int p = 0; p < 100; ++p) {
    trial.parameters.push_back(
        {.name = std::string(60, 'p') + std::to_string(p), .value = std::string(60, '9')});
  }
  api::OptimizationJobStatus status{.result = trial,
                                    .pareto_front = std::vector(100, trial),
                                    .trial_results = std::vector(100, trial)};
  api::OptimizationJobStatus bounded = status;
  BoundOptimizationStatus(bounded);
  EXPECT_LE(api::Encode(bounded).dump().size(), kMaxOptimizationStatusBytes);
  EXPECT_TRUE(bounded.trial_results[0].parameters.empty());
  EXPECT_TRUE(bounded.pareto_front[99].parameters.empty());
  EXPECT_EQ(bounded.result->parameters.size(), 100u);
  EXPECT_EQ(bounded.trial_results[0].metrics[0].value, "0.5");
  // A front that fits once trialResults are bare keeps its parameters.
  status.pareto_front.resize(2);
  BoundOptimizationStatus(status);
  EXPECT_TRUE(status.trial_results[0].parameters.empty());
  EXPECT_EQ(status.pareto_front[1].parameters.size(), 100u);
}

TEST(OptimizationTrialNameTest, IsADns1035LabelOfAtMost63Characters) {
  EXPECT_EQ(OptimizationTrialName("tune", 7), "tune-trial-7");
  std::string long_name(80, 'a');
  std::string name = OptimizationTrialName(long_name, 99);
  EXPECT_LE(name.size(), 63u);
  EXPECT_TRUE(name.ends_with("-trial-99"));
  EXPECT_NE(OptimizationTrialName(long_name + "b", 99), name) << "a hash of the whole name";
  std::string dotted = OptimizationTrialName("1.tune", 0);
  EXPECT_EQ(dotted.find('.'), std::string::npos);
  EXPECT_TRUE(dotted[0] >= 'a' && dotted[0] <= 'z');
}

}  // namespace
}  // namespace trainyard::controller
