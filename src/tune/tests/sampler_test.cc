// The contract every algorithm keeps behind MakeSampler: determinism per
// seed, no duplicate assignments within a batch or against earlier trials,
// values inside the space, and settings checked with upstream's messages.
#include "tune/sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "tune/settings.h"
#include "tune/tests/test_util.h"

namespace trainyard::tune {
namespace {

// lr (log; stepped for grid, which needs steps), momentum (stepped), layers
// (int), optimizer (categorical), epochs (hyperband's resource).
Space Mixed(bool stepped = false) {
  return MakeSpace({
      {.name = "lr",
       .type = ParameterType::kDouble,
       .distribution = Distribution::kLogUniform,
       .min = 1e-4,
       .max = 1e-1,
       .step = stepped ? std::optional<double>(1e-4) : std::nullopt},
      {.name = "momentum", .type = ParameterType::kDouble, .min = 0.5, .max = 0.9, .step = 0.1},
      {.name = "layers", .type = ParameterType::kInt, .min = 1, .max = 4},
      {.name = "optimizer", .type = ParameterType::kCategorical, .list = {"sgd", "adam", "ftrl"}},
      {.name = "epochs", .type = ParameterType::kInt, .min = 1, .max = 9},
  });
}

// Hyperband needs a resource parameter and enough parallelism.
SamplerOptions OptionsFor(const std::string& algorithm, uint64_t seed) {
  SamplerOptions options{.algorithm = algorithm, .default_seed = seed};
  options.parallel_trial_count = 9;
  options.max_trial_count = 60;
  if (algorithm == "hyperband") options.settings = {{"r_l", "9"}, {"resource_name", "epochs"}};
  if (algorithm == "pbt") {
    options.settings = {
        {"suggestion_trial_dir", "/ckpt"}, {"n_population", "5"}, {"truncation_threshold", "0.4"}};
  }
  return options;
}

double Loss(const Point& p) { return std::log10(p[0]) + 2 * std::abs(p[1] - 0.7) + p[2] + p[3]; }

// Runs batches of `batch` to `budget` trials; every third trial fails.
std::vector<TrialRecord> Drive(Sampler& sampler, int budget, int batch) {
  return DriveWith(sampler, budget, batch, [](const Suggestion& s, size_t i) {
    bool fails = i % 3 == 2;
    return TrialRecord{.name = "t" + std::to_string(i),
                       .point = s.point,
                       .labels = s.labels,
                       .state = fails ? TrialState::kFailed : TrialState::kSucceeded,
                       .loss = fails ? std::nullopt : std::optional<double>(Loss(s.point))};
  });
}

class EveryAlgorithm : public testing::TestWithParam<std::string> {};
// Every algorithm but pbt, whose trials continue their parents' training
// with the same values (pbt_test.cc).
class DistinctAlgorithm : public testing::TestWithParam<std::string> {};

std::vector<std::string> DistinctAlgorithms() {
  std::vector<std::string> names = SamplerNames();
  std::erase(names, "pbt");
  return names;
}

TEST_P(DistinctAlgorithm, NeverRepeatsAnAssignmentAndStaysInTheSpace) {
  Space space = Mixed(GetParam() == "grid");
  Result<std::unique_ptr<Sampler>> sampler = MakeSampler(space, OptionsFor(GetParam(), 7));
  ASSERT_TRUE(sampler.ok()) << sampler.status().ToString();
  std::vector<TrialRecord> trials = Drive(**sampler, 48, 4);
  EXPECT_GE(trials.size(), 12u);
  std::set<std::string> keys;
  for (const TrialRecord& t : trials) {
    EXPECT_TRUE(keys.insert(space.Key(t.point)).second) << "a repeated point";
    for (size_t i = 0; i < space.size(); ++i) {
      EXPECT_EQ(space.Snap(i, t.point[i]), t.point[i]) << space[i].name;
      ASSERT_TRUE(space.Parse(i, space.Format(i, t.point[i])).ok());
    }
  }
}

TEST_P(EveryAlgorithm, IsAFunctionOfSeedAndHistory) {
  Space space = Mixed(GetParam() == "grid");
  auto run = [&](uint64_t seed) {
    std::unique_ptr<Sampler> sampler = *MakeSampler(space, OptionsFor(GetParam(), seed));
    std::vector<std::string> keys;
    for (const TrialRecord& t : Drive(*sampler, 24, 3)) keys.push_back(space.Key(t.point));
    return keys;
  };
  EXPECT_EQ(run(11), run(11));
  // A sampler rebuilt from scratch (a restarted controller) answers the same.
  std::unique_ptr<Sampler> first = *MakeSampler(space, OptionsFor(GetParam(), 5));
  std::vector<TrialRecord> trials = Drive(*first, 15, 3);
  std::unique_ptr<Sampler> again = *MakeSampler(space, OptionsFor(GetParam(), 5));
  SuggestResult a = *first->Suggest(trials, 3);
  SuggestResult b = *again->Suggest(trials, 3);
  ASSERT_EQ(a.suggestions.size(), b.suggestions.size());
  for (size_t k = 0; k < a.suggestions.size(); ++k) {
    EXPECT_EQ(a.suggestions[k].point, b.suggestions[k].point);
  }
}

TEST_P(DistinctAlgorithm, PendingPointsAreNotSuggestedAgain) {
  Space space = MakeSpace({{.name = "a", .type = ParameterType::kInt, .min = 0, .max = 2},
                           {.name = "b", .type = ParameterType::kInt, .min = 0, .max = 3}});
  SamplerOptions options = OptionsFor(GetParam(), 3);
  options.max_trial_count = 12;
  if (GetParam() == "hyperband") options.settings = {{"r_l", "3"}, {"resource_name", "b"}};
  Result<std::unique_ptr<Sampler>> sampler = MakeSampler(space, options);
  ASSERT_TRUE(sampler.ok()) << sampler.status().ToString();
  std::vector<TrialRecord> trials;
  std::set<std::string> keys;
  // All twelve points asked for while none has finished.
  for (int round = 0; round < 12 && keys.size() < 12; ++round) {
    Result<SuggestResult> answer = (*sampler)->Suggest(trials, 5);
    ASSERT_TRUE(answer.ok()) << answer.status().ToString();
    const SuggestResult& result = *answer;
    for (const Suggestion& s : result.suggestions) {
      EXPECT_TRUE(keys.insert(space.Key(s.point)).second) << GetParam();
      trials.push_back({.point = s.point, .labels = s.labels});
    }
    if (result.suggestions.empty()) break;
  }
  if (GetParam() != "hyperband") {
    EXPECT_EQ(keys.size(), 12u);
  }
  Result<SuggestResult> after = (*sampler)->Suggest(trials, 3);
  ASSERT_TRUE(after.ok());
  if (keys.size() == 12u) {
    EXPECT_TRUE(after->suggestions.empty());
    EXPECT_TRUE(after->exhausted);
  }
}

std::string TestName(const testing::TestParamInfo<std::string>& info) {
  std::string name = info.param;
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

INSTANTIATE_TEST_SUITE_P(Samplers, EveryAlgorithm, testing::ValuesIn(SamplerNames()), TestName);
INSTANTIATE_TEST_SUITE_P(Samplers, DistinctAlgorithm, testing::ValuesIn(DistinctAlgorithms()),
                         TestName);

TEST(MakeSamplerTest, UnknownAlgorithmIsNotFound) {
  Result<std::unique_ptr<Sampler>> sampler = MakeSampler(Mixed(), {.algorithm = "enas"});
  EXPECT_EQ(sampler.status().code(), StatusCode::kNotFound);
}

TEST(MakeSamplerTest, SettingsAreCheckedWithUpstreamsMessages) {
  auto message = [](std::string algorithm, Settings settings) {
    return MakeSampler(Mixed(),
                       {.algorithm = std::move(algorithm), .settings = std::move(settings)})
        .status()
        .message();
  };
  EXPECT_EQ(message("tpe", {{"foo", "1"}}), "unknown setting foo for algorithm tpe");
  EXPECT_EQ(message("random", {{"gamma", "0.2"}}), "unknown setting gamma for algorithm random");
  EXPECT_EQ(message("sobol", {{"random_state", "1"}}),
            "unknown setting random_state for algorithm sobol");
  EXPECT_EQ(message("multivariate-tpe", {{"n_ei_candidates", "x"}}),
            "n_ei_candidates must be an integer >= 1 for algorithm multivariate-tpe, not \"x\"");
  EXPECT_EQ(message("tpe", {{"gamma", "1.5"}}),
            "gamma should be in the range of (0, 1) for algorithm tpe");
  EXPECT_EQ(message("random", {{"random_state", "-1"}}),
            "random_state must be an integer >= 0 for algorithm random, not \"-1\"");
  EXPECT_TRUE(MakeSampler(Mixed(), {.algorithm = "tpe",
                                    .settings = {{"gamma", "0.3"},
                                                 {"prior_weight", "2"},
                                                 {"n_EI_candidates", "48"},
                                                 {"random_state", "10"}}})
                  .ok());
}

TEST(GridSamplerTest, NeedsAStepForEveryDouble) {
  Space space = MakeSpace({{.name = "lr", .type = ParameterType::kDouble, .min = 0, .max = 1}});
  EXPECT_EQ(MakeSampler(space, {.algorithm = "grid"}).status().message(),
            "For discrete search space, all parameters must include step");
}

// Katib's grid.yaml: 9 learning rates by 5 momentums.
Space KatibGrid() {
  return MakeSpace(
      {{.name = "lr", .type = ParameterType::kDouble, .min = 0.01, .max = 0.05, .step = 0.005},
       {.name = "momentum", .type = ParameterType::kDouble, .min = 0.5, .max = 0.9, .step = 0.1}});
}

TEST(GridSamplerTest, RefusesMoreTrialsThanPoints) {
  EXPECT_EQ(
      MakeSampler(KatibGrid(), {.algorithm = "grid", .max_trial_count = 46}).status().message(),
      "Max Trial Count: 46 > all possible search combinations: 45");
  EXPECT_TRUE(MakeSampler(KatibGrid(), {.algorithm = "grid", .max_trial_count = 45}).ok());
}

TEST(GridSamplerTest, VisitsEveryPointOnceThenIsExhausted) {
  Space space = KatibGrid();
  std::unique_ptr<Sampler> sampler = *MakeSampler(space, {.algorithm = "grid"});
  std::vector<TrialRecord> trials;
  std::set<std::string> seen;
  while (true) {
    SuggestResult result = *sampler->Suggest(trials, 4);
    for (const Suggestion& s : result.suggestions) {
      seen.insert(space.Key(s.point));
      trials.push_back({.point = s.point, .state = TrialState::kSucceeded, .loss = 0});
    }
    if (result.exhausted) {
      EXPECT_TRUE(result.suggestions.size() < 4 || trials.size() == 45);
      break;
    }
    ASSERT_FALSE(result.suggestions.empty());
  }
  EXPECT_EQ(seen.size(), 45u);
  std::set<std::string> lrs;
  for (const TrialRecord& t : trials) lrs.insert(space.Format(0, t.point[0]));
  EXPECT_EQ(lrs, (std::set<std::string>{"0.01", "0.015", "0.02", "0.025", "0.03", "0.035", "0.04",
                                        "0.045", "0.05"}));
}

TEST(GridSamplerTest, RunsInTheOrderWrittenUnlessSeeded) {
  Space space = KatibGrid();
  std::unique_ptr<Sampler> plain = *MakeSampler(space, {.algorithm = "grid"});
  SuggestResult ordered = *plain->Suggest({}, 12);
  ASSERT_EQ(ordered.suggestions.size(), 12u);
  for (int64_t k = 0; k < 12; ++k) EXPECT_EQ(ordered.suggestions[k].point, space.PointAt(k));
  // 12 of 45 points with random_state: the random order covers more learning
  // rates than the first rows of the product (those hold three).
  std::unique_ptr<Sampler> seeded =
      *MakeSampler(space, {.algorithm = "grid", .settings = {{"random_state", "1"}}});
  SuggestResult shuffled = *seeded->Suggest({}, 12);
  std::set<double> lrs;
  for (const Suggestion& s : shuffled.suggestions) lrs.insert(s.point[0]);
  EXPECT_GE(lrs.size(), 5u);
}

TEST(SobolSamplerTest, FirstPointsAreTheSobolSequence) {
  Space space = MakeSpace({{.name = "x", .type = ParameterType::kDouble, .min = 0, .max = 1},
                           {.name = "y", .type = ParameterType::kDouble, .min = 0, .max = 1}});
  std::unique_ptr<Sampler> sampler = *MakeSampler(space, {.algorithm = "sobol"});
  SuggestResult result = *sampler->Suggest({}, 4);
  ASSERT_EQ(result.suggestions.size(), 4u);
  // Boost's engine starts after the origin, which would pin every
  // parameter to its minimum.
  EXPECT_EQ(result.suggestions[0].point, (Point{0.5, 0.5}));
  EXPECT_EQ(result.suggestions[1].point, (Point{0.75, 0.25}));
  EXPECT_EQ(result.suggestions[2].point, (Point{0.25, 0.75}));
  EXPECT_EQ(result.suggestions[3].point, (Point{0.375, 0.375}));
  // The next call goes on from the labels, not from the count of trials.
  std::vector<TrialRecord> trials;
  for (const Suggestion& s : result.suggestions)
    trials.push_back({.point = s.point, .labels = s.labels});
  trials.erase(trials.begin() + 1);
  EXPECT_EQ(sampler->Suggest(trials, 1)->suggestions[0].point, (Point{0.875, 0.875}));
}

TEST(RandomSamplerTest, FollowsTheLogPrior) {
  Space space = MakeSpace({{.name = "lr",
                            .type = ParameterType::kDouble,
                            .distribution = Distribution::kLogUniform,
                            .min = 1e-4,
                            .max = 1}});
  std::unique_ptr<Sampler> sampler =
      *MakeSampler(space, {.algorithm = "random", .settings = {{"random_state", "4"}}});
  SuggestResult result = *sampler->Suggest({}, 2000);
  int below = 0;
  for (const Suggestion& s : result.suggestions) below += s.point[0] < 1e-2;
  // Half the log range lies below 1e-2; uniform would put 1% there.
  EXPECT_NEAR(below / 2000.0, 0.5, 0.05);
}

}  // namespace
}  // namespace trainyard::tune
