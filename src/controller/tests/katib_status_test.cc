#include "controller/katib_status.h"

#include <gtest/gtest.h>

namespace trainyard::controller {
namespace {

const TimePoint kNow = TimePoint(std::chrono::seconds(1'800'000'000));

api::Trial TrialWith(std::string name, std::vector<std::pair<std::string, std::string>> conditions,
                     std::optional<std::string> latest = std::nullopt) {
  api::Trial t;
  t.metadata.name = std::move(name);
  for (const auto& [type, status] : conditions) {
    SetKatibCondition(t.status.conditions, type, status, "R", "M", kNow);
  }
  if (latest) {
    t.status.observation = api::Observation{
        .metrics = {{.name = "loss", .min = *latest, .max = *latest, .latest = *latest}}};
  }
  return t;
}

api::ExperimentSpec Spec(std::optional<double> goal = std::nullopt) {
  api::ExperimentSpec spec;
  spec.objective = api::ObjectiveSpec{.type = "minimize",
                                      .goal = goal,
                                      .objective_metric_name = "loss",
                                      .metric_strategies = {{.name = "loss", .value = "min"}}};
  spec.max_trial_count = 4;
  spec.max_failed_trial_count = 2;
  return spec;
}

TEST(KatibStatusTest, PhaseFollowsUpstreamsOrder) {
  EXPECT_EQ(PhaseOf(TrialWith("a", {})), TrialPhase::kPending);
  EXPECT_EQ(PhaseOf(TrialWith("a", {{"Created", "True"}, {"Running", "True"}})),
            TrialPhase::kRunning);
  // Killed wins over everything; Running False does not count.
  EXPECT_EQ(PhaseOf(TrialWith("a", {{"Running", "False"}, {"Killed", "True"}})),
            TrialPhase::kKilled);
  EXPECT_EQ(PhaseOf(TrialWith("a", {{"Running", "False"}, {"EarlyStopped", "True"}})),
            TrialPhase::kEarlyStopped);
}

TEST(KatibStatusTest, BestTrialIgnoresNonNumbersAndKeepsTheEarlierOnTies) {
  std::vector<api::Trial> trials = {
      TrialWith("a", {{"Succeeded", "True"}}, "0.5"),
      TrialWith("b", {{"Succeeded", "True"}}, "unavailable"),  // upstream made this the best
      TrialWith("c", {{"Succeeded", "True"}}, "0.25"),
      TrialWith("d", {{"Succeeded", "True"}}, "0.25"), TrialWith("e", {{"Running", "True"}})};
  api::ExperimentStatus status;
  SummarizeTrials(Spec(), trials, status);
  ASSERT_TRUE(status.current_optimal_trial);
  EXPECT_EQ(status.current_optimal_trial->best_trial_name, "c");
  EXPECT_EQ(status.trials, 5);
  EXPECT_EQ(status.trials_succeeded, 4);
  EXPECT_EQ(status.running_trial_list, std::vector<std::string>{"e"});
}

TEST(KatibStatusTest, VerdictsComeInUpstreamsOrder) {
  api::ExperimentStatus status;
  // Goal first, even when max trials is reached at the same time.
  std::vector<api::Trial> trials = {TrialWith("a", {{"Succeeded", "True"}}, "0.9"),
                                    TrialWith("b", {{"Succeeded", "True"}}, "0.01"),
                                    TrialWith("c", {{"Succeeded", "True"}}, "0.5"),
                                    TrialWith("d", {{"Failed", "True"}})};
  SummarizeTrials(Spec(0.05), trials, status);
  EXPECT_EQ(Conclude(Spec(0.05), status, false)->reason, "ExperimentGoalReached");
  EXPECT_EQ(Conclude(Spec(), status, false)->reason, "ExperimentMaxTrialsReached");
  trials.push_back(TrialWith("e", {{"MetricsUnavailable", "True"}}));
  SummarizeTrials(Spec(), trials, status);
  // Failed plus metrics-unavailable reach maxFailedTrialCount before max trials is judged.
  EXPECT_EQ(Conclude(Spec(), status, false)->type, "Failed");
}

TEST(KatibStatusTest, ExhaustedSuggestionsEndTheExperimentOnlyWhenNothingRuns) {
  api::ExperimentSpec spec = Spec();
  spec.max_trial_count.reset();
  api::ExperimentStatus status;
  SummarizeTrials(
      spec, {TrialWith("a", {{"Succeeded", "True"}}, "1"), TrialWith("b", {{"Running", "True"}})},
      status);
  EXPECT_FALSE(Conclude(spec, status, true));
  SummarizeTrials(spec, {TrialWith("a", {{"Succeeded", "True"}}, "1")}, status);
  EXPECT_EQ(Conclude(spec, status, true)->reason, "ExperimentSuggestionEndReached");
  EXPECT_FALSE(Conclude(spec, status, false));
}

TEST(KatibStatusTest, AChangedConditionMovesToTheEndAndKeepsItsTransitionTime) {
  std::vector<api::KatibCondition> c;
  EXPECT_TRUE(SetKatibCondition(c, "Created", "True", "ExperimentCreated", "created", kNow));
  EXPECT_TRUE(SetKatibCondition(c, "Running", "True", "ExperimentRunning", "running", kNow));
  EXPECT_FALSE(SetKatibCondition(c, "Created", "True", "ExperimentCreated", "created", kNow));
  TimePoint later = kNow + std::chrono::seconds(5);
  EXPECT_TRUE(SetKatibCondition(c, "Running", "False", "ExperimentGoalReached", "done", later));
  EXPECT_TRUE(SetKatibCondition(c, "Succeeded", "True", "ExperimentGoalReached", "done", later));
  EXPECT_EQ(api::LastConditionType(c), "Succeeded");
  EXPECT_EQ(c[1].type, "Running");
  EXPECT_EQ(c[1].last_transition_time, FormatRfc3339(later));
}

}  // namespace
}  // namespace trainyard::controller
