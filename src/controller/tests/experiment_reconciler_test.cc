// The experiment controller on its own, over a real (in-memory) store, with
// the tests playing the trial controller: it keeps parallelTrialCount trials
// going within the search space, never more than maxTrialCount, tracks the
// best, and ends the experiment when the goal or the count is reached.
#include "controller/experiment_reconciler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "api/object.h"
#include "api/yaml.h"
#include "common/tests/test_dir.h"
#include "controller/katib_status.h"
#include "store/sqlite_store.h"

namespace trainyard::controller {
namespace {

constexpr const char* kExperiment = R"(apiVersion: kubeflow.org/v1beta1
kind: Experiment
metadata: {name: e, namespace: default}
spec:
  objective: {type: minimize, goal: 0.1, objectiveMetricName: loss}
  algorithm: {algorithmName: random, algorithmSettings: [{name: random_state, value: "3"}]}
  parallelTrialCount: 2
  maxTrialCount: 5
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
)";

class ExperimentReconcilerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = FreshTestDir("experiment-reconciler");
    store_ = std::move(*store::SqliteStore::Open({.clock = &clock_}));
    reconciler_ = std::make_unique<ExperimentReconciler>(
        ExperimentReconcilerOptions{.store = store_.get(),
                                    .observations = store_.get(),
                                    .clock = &clock_,
                                    .trial_dirs = (dir_ / "trials").string()});
    auto docs = api::ParseManifests(kExperiment, "e.yaml");
    ASSERT_TRUE(docs.ok());
    ASSERT_TRUE(store_->Create((*docs)[0].value).ok());
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  void Reconcile() {
    Result<ReconcileResult> r = reconciler_->Reconcile({"Experiment", "default", "e"});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }
  std::vector<api::Trial> Trials() {
    std::vector<api::Trial> out;
    std::vector<api::Json> docs = store_->List("Trial", "default")->items;
    for (const api::Json& doc : docs) {
      out.push_back(std::get<api::Trial>(*api::DecodeObject(doc).object));
    }
    return out;
  }
  // Finishes trial `name` with `loss`, as its trial controller would.
  void Finish(const std::string& name, const std::string& loss) {
    api::Json trial = *store_->Get({"Trial", "default", name});
    trial["status"] = {
        {"conditions", {{{"type", "Succeeded"}, {"status", "True"}, {"reason", "TrialSucceeded"}}}},
        {"observation",
         {{"metrics", {{{"name", "loss"}, {"min", loss}, {"max", loss}, {"latest", loss}}}}}}};
    ASSERT_TRUE(store_->UpdateStatus(trial).ok());
  }
  api::ExperimentStatus Status() {
    return std::get<api::Experiment>(
               *api::DecodeObject(*store_->Get({"Experiment", "default", "e"})).object)
        .status;
  }
  std::vector<std::string> Running() {
    std::vector<std::string> out;
    for (const api::Trial& t : Trials()) {
      if (!IsFinished(PhaseOf(t))) out.push_back(t.metadata.name);
    }
    return out;
  }

  FakeClock clock_;
  std::filesystem::path dir_;
  std::unique_ptr<store::SqliteStore> store_;
  std::unique_ptr<ExperimentReconciler> reconciler_;
};

// On a cluster an experiment no webhook checked is checked here: an
// invalid one is said, with its errors, and nothing is made for it.
TEST_F(ExperimentReconcilerTest, OnAClusterAnInvalidStoredExperimentIsSaidAndNothingIsMade) {
  api::Json doc = *store_->Get({"Experiment", "default", "e"});
  doc["spec"]["parameters"][0]["feasibleSpace"] = {{"min", "0.1"}, {"max", "0.01"}};
  ASSERT_TRUE(store_->Update(doc).ok());
  reconciler_ = std::make_unique<ExperimentReconciler>(ExperimentReconcilerOptions{
      .store = store_.get(), .observations = store_.get(), .clock = &clock_, .check_stored = true});
  Reconcile();
  EXPECT_TRUE(Trials().empty());
  std::vector<api::Json> events = store_->List("Event", "default")->items;
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["reason"], "ExperimentFailedValidation");
  EXPECT_THAT(events[0]["message"].get<std::string>(),
              ::testing::HasSubstr("min (0.1) must not be greater than max (0.01)"));
}

TEST_F(ExperimentReconcilerTest, KeepsParallelTrialsInTheSpaceUpToTheMaximum) {
  Reconcile();
  std::vector<api::Trial> trials = Trials();
  ASSERT_EQ(trials.size(), 2u) << "parallelTrialCount";
  for (const api::Trial& t : trials) {
    EXPECT_EQ(t.metadata.labels.at("katib.kubeflow.org/experiment"), "e");
    ASSERT_EQ(t.spec.parameter_assignments.size(), 1u);
    double lr = std::stod(t.spec.parameter_assignments[0].value);
    EXPECT_GE(lr, 0.01);
    EXPECT_LE(lr, 0.1);
  }
  Reconcile();
  EXPECT_EQ(Trials().size(), 2u) << "nothing finished: no new trial";

  // Trials finish one by one without reaching the goal: never more than
  // two run, never more than five in all, and then the experiment ends.
  for (int round = 0; round < 10 && !Running().empty(); ++round) {
    Finish(Running().front(), "0.5");
    Reconcile();
    EXPECT_LE(Running().size(), 2u);
  }
  EXPECT_EQ(Trials().size(), 5u);
  api::ExperimentStatus status = Status();
  EXPECT_EQ(status.trials_succeeded, 5);
  ASSERT_FALSE(status.conditions.empty());
  EXPECT_EQ(status.conditions.back().type, "Succeeded");
  EXPECT_EQ(status.conditions.back().reason, "ExperimentMaxTrialsReached");
}

TEST_F(ExperimentReconcilerTest, TheGoalEndsItWithTheBestTrialAndStopsTheRest) {
  Reconcile();
  std::vector<std::string> running = Running();
  ASSERT_EQ(running.size(), 2u);
  Finish(running[0], "0.05");  // better than the goal of 0.1
  Reconcile();
  api::ExperimentStatus status = Status();
  ASSERT_TRUE(status.current_optimal_trial);
  EXPECT_EQ(status.current_optimal_trial->best_trial_name, running[0]);
  EXPECT_EQ(status.conditions.back().type, "Succeeded");
  EXPECT_EQ(status.conditions.back().reason, "ExperimentGoalReached");
  EXPECT_THAT(Running(), ::testing::IsEmpty()) << "the other trial is stopped";
  EXPECT_EQ(Trials().size(), 2u);
}

}  // namespace
}  // namespace trainyard::controller

namespace trainyard::controller {
namespace {

// trainyard's multi-objective mode: an annotation makes an additional
// metric an objective too; the experiment keeps the Pareto front of the
// two in its status, beside Katib's currentOptimalTrial.
TEST_F(ExperimentReconcilerTest, AnnotatedObjectivesKeepTheParetoFront) {
  api::Json doc = *store_->Get({"Experiment", "default", "e"});
  doc["metadata"]["annotations"]["trainyard.dev/objectives"] = "params=minimize";
  doc["spec"]["objective"]["additionalMetricNames"] = {"params"};
  doc["spec"]["objective"].erase("goal");
  doc["spec"]["parallelTrialCount"] = 3;
  doc["spec"]["maxTrialCount"] = 3;
  ASSERT_TRUE(store_->Update(doc).ok());
  Reconcile();
  std::vector<api::Trial> trials = Trials();
  ASSERT_EQ(trials.size(), 3u);
  // (loss, params): (0.2, 300) and (0.5, 100) trade off; (0.6, 200) is
  // beaten by (0.5, 100) in both: not on the front.
  std::vector<std::pair<std::string, std::string>> values = {
      {"0.2", "300"}, {"0.5", "100"}, {"0.6", "200"}};
  for (size_t i = 0; i < trials.size(); ++i) {
    api::Json trial = *store_->Get({"Trial", "default", trials[i].metadata.name});
    const auto& [loss, params] = values[i];
    trial["status"] = {
        {"conditions", {{{"type", "Succeeded"}, {"status", "True"}, {"reason", "TrialSucceeded"}}}},
        {"observation",
         {{"metrics",
           {{{"name", "loss"}, {"min", loss}, {"max", loss}, {"latest", loss}},
            {{"name", "params"}, {"min", params}, {"max", params}, {"latest", params}}}}}}};
    ASSERT_TRUE(store_->UpdateStatus(trial).ok());
  }
  Reconcile();
  api::ExperimentStatus status = Status();
  std::set<std::string> front;
  for (const api::OptimalTrial& member : status.pareto_front) front.insert(member.best_trial_name);
  EXPECT_EQ(front, (std::set<std::string>{trials[0].metadata.name, trials[1].metadata.name}));
  ASSERT_TRUE(status.current_optimal_trial);
  EXPECT_EQ(status.current_optimal_trial->best_trial_name, trials[0].metadata.name)
      << "Katib's optimal trial stays its own objective's";
}

TEST(ParetoObjectivesTest, TheAnnotationNamesAdditionalMetricsWithTheirDirection) {
  api::Experiment e;
  e.spec.objective = api::ObjectiveSpec{.type = "maximize",
                                        .objective_metric_name = "accuracy",
                                        .additional_metric_names = {"params", "latency"}};
  e.metadata.annotations["trainyard.dev/objectives"] = "params=minimize, latency = maximize";
  std::vector<std::string> problems;
  std::vector<api::ParetoObjective> o = api::ParetoObjectivesOf(e, &problems);
  ASSERT_EQ(o.size(), 3u);
  EXPECT_EQ(o[0].metric, "accuracy");
  EXPECT_TRUE(o[0].maximize);
  EXPECT_FALSE(o[1].maximize);
  EXPECT_EQ(o[2].metric, "latency");
  EXPECT_TRUE(problems.empty());
  e.metadata.annotations["trainyard.dev/objectives"] =
      "loss=minimize,params=down,accuracy=maximize";
  problems.clear();
  EXPECT_EQ(api::ParetoObjectivesOf(e, &problems).size(), 1u);
  EXPECT_THAT(problems, ::testing::ElementsAre(
                            "loss is not one of objective.additionalMetricNames: add it there",
                            "\"params=down\": write metric=maximize or metric=minimize",
                            "accuracy is the experiment's objective already"));
}

}  // namespace
}  // namespace trainyard::controller
