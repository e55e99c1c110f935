// pbt: generations, truncation selection with the better member's
// checkpoint, exploration, retries, and Katib's settings messages.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tune/samplers.h"
#include "tune/tests/test_util.h"

namespace trainyard::tune {
namespace {

// Katib's simple-pbt.yaml: lr in [0.0001, 0.02] by 0.0001; and a list.
Space PbtSpace() {
  return MakeSpace(
      {{.name = "lr", .type = ParameterType::kDouble, .min = 0.0001, .max = 0.02, .step = 0.0001},
       {.name = "optimizer",
        .type = ParameterType::kCategorical,
        .list = {"sgd", "adam", "ftrl"}}});
}

Settings PbtSettings(std::string population = "5", std::string truncation = "0.4") {
  return {{"suggestion_trial_dir", "/var/log/katib/checkpoints/"},
          {"n_population", std::move(population)},
          {"truncation_threshold", std::move(truncation)}};
}

std::string Message(Settings settings) {
  return MakeSampler(PbtSpace(), {.algorithm = "pbt", .settings = std::move(settings)})
      .status()
      .message();
}

TEST(PbtSettingsTest, UpstreamsMessages) {
  EXPECT_EQ(Message({{"n_population", "40"}}),
            "Required params missing: suggestion_trial_dir, truncation_threshold");
  EXPECT_EQ(Message(PbtSettings("4")), "Param(n_population) should be >= 5");
  EXPECT_EQ(Message(PbtSettings("x")), "Param(n_population) should be >= 5");
  EXPECT_EQ(Message(PbtSettings("5", "1.5")),
            "Param(truncation_threshold) should be between 0 and 1, inclusive, not \"1.5\"");
  Settings resample = PbtSettings();
  resample.emplace_back("resample_probability", "2");
  EXPECT_EQ(Message(resample),
            "Param(resample_probability) should be null to perturb at 0.8 or 1.2, or be between "
            "0 and 1, inclusive, to resample, not \"2\"");
  Settings relative = PbtSettings();
  relative[0].second = "checkpoints";
  EXPECT_EQ(Message(relative),
            "suggestion_trial_dir must be an absolute path: it is where each trial's checkpoint "
            "directory is mounted");
  EXPECT_EQ(Message(PbtSettings("40", "0.2")), "");
}

// Runs pbt as the controller does; a trial's loss is set by `Finish`.
class PbtHarness {
 public:
  explicit PbtHarness(Settings settings = PbtSettings()) : space_(PbtSpace()) {
    Result<std::unique_ptr<Sampler>> sampler =
        MakeSampler(space_, {.algorithm = "pbt", .settings = std::move(settings)});
    EXPECT_TRUE(sampler.ok()) << sampler.status().ToString();
    sampler_ = std::move(*sampler);
  }

  std::vector<Suggestion> Ask(int count) {
    Result<SuggestResult> result = sampler_->Suggest(trials_, count);
    EXPECT_TRUE(result.ok()) << result.status().ToString();
    EXPECT_FALSE(result->exhausted);
    for (const Suggestion& s : result->suggestions) {
      trials_.push_back({.name = "trial-" + std::to_string(trials_.size()),
                         .point = s.point,
                         .labels = s.labels,
                         .state = TrialState::kPending});
    }
    return result->suggestions;
  }
  void Finish(size_t trial, std::optional<double> loss) {
    trials_[trial].state = loss ? TrialState::kSucceeded : TrialState::kFailed;
    trials_[trial].loss = loss;
  }
  const TrialRecord& trial(size_t k) const { return trials_[k]; }
  const Space& space() const { return space_; }

 private:
  Space space_;
  std::unique_ptr<Sampler> sampler_;
  std::vector<TrialRecord> trials_;
};

TEST(PbtSamplerTest, GenerationZeroIsThePopulationThenWaits) {
  PbtHarness pbt;
  std::vector<Suggestion> first = pbt.Ask(3);
  ASSERT_EQ(first.size(), 3u);
  std::vector<Suggestion> rest = pbt.Ask(10);
  ASSERT_EQ(rest.size(), 2u);  // the population is 5
  first.insert(first.end(), rest.begin(), rest.end());
  for (size_t i = 0; i < first.size(); ++i) {
    EXPECT_EQ(Label(first[i], kPbtGenerationLabel), "0");
    EXPECT_EQ(Label(first[i], "pbt-member"), std::to_string(i));
    EXPECT_EQ(Label(first[i], kPbtParentLabel), "");
    for (size_t p = 0; p < 2; ++p) {
      EXPECT_EQ(pbt.space().Snap(p, first[i].point[p]), first[i].point[p]);
    }
  }
  // Nothing more until every member has a loss.
  for (size_t k = 0; k < 4; ++k) pbt.Finish(k, 1.0);
  EXPECT_TRUE(pbt.Ask(5).empty());
}

TEST(PbtSamplerTest, TheWorstTakeTheBestsCheckpointAndExploreTheOthersContinue) {
  PbtHarness pbt;  // 5 members, truncation 0.4: the worst 2 copy the best 2
  pbt.Ask(5);
  const double losses[] = {3, 1, 5, 2, 4};  // best: 1, 3; worst: 2, 4
  for (size_t k = 0; k < 5; ++k) pbt.Finish(k, losses[k]);
  std::vector<Suggestion> next = pbt.Ask(5);
  ASSERT_EQ(next.size(), 5u);
  for (int i = 0; i < 5; ++i) {
    const Suggestion& s = next[static_cast<size_t>(i)];
    EXPECT_EQ(Label(s, kPbtGenerationLabel), "1");
    EXPECT_EQ(Label(s, "pbt-member"), std::to_string(i));
    std::string parent = Label(s, kPbtParentLabel);
    if (i == 2 || i == 4) {
      ASSERT_TRUE(parent == "trial-1" || parent == "trial-3") << parent;
      const TrialRecord& source = pbt.trial(parent == "trial-1" ? 1 : 3);
      double lr = source.point[0];
      EXPECT_TRUE(s.point[0] == pbt.space().Snap(0, lr * 0.8) ||
                  s.point[0] == pbt.space().Snap(0, lr * 1.2))
          << s.point[0] << " from " << lr;
      int64_t from = static_cast<int64_t>(source.point[1]);
      int64_t to = static_cast<int64_t>(s.point[1]);
      EXPECT_TRUE(to == (from + 1) % 3 || to == (from + 2) % 3) << from << " -> " << to;
    } else {
      EXPECT_EQ(parent, "trial-" + std::to_string(i));
      EXPECT_EQ(s.point, pbt.trial(static_cast<size_t>(i)).point);
    }
  }
}

TEST(PbtSamplerTest, AFailedMemberRunsAgainWithItsValuesAndParent) {
  PbtHarness pbt;
  pbt.Ask(5);
  for (size_t k = 0; k < 5; ++k) pbt.Finish(k, static_cast<double>(k));
  std::vector<Suggestion> generation1 = pbt.Ask(5);
  pbt.Finish(5, 1.0);
  pbt.Finish(6, std::nullopt);  // member 1 of generation 1 fails
  std::vector<Suggestion> retry = pbt.Ask(5);
  ASSERT_EQ(retry.size(), 1u);
  EXPECT_EQ(retry[0].point, generation1[1].point);
  EXPECT_EQ(retry[0].labels, generation1[1].labels);
  EXPECT_EQ(Label(retry[0], kPbtParentLabel), "trial-1");
}

TEST(PbtSamplerTest, ResamplingWithProbabilityZeroCopiesTheValues) {
  Settings settings = PbtSettings("5", "0.2");
  settings.emplace_back("resample_probability", "0");
  PbtHarness pbt(settings);
  pbt.Ask(5);
  for (size_t k = 0; k < 5; ++k) pbt.Finish(k, static_cast<double>(k));
  std::vector<Suggestion> next = pbt.Ask(5);
  ASSERT_EQ(next.size(), 5u);
  // The worst (member 4) copies the best (member 0), values and checkpoint.
  EXPECT_EQ(Label(next[4], kPbtParentLabel), "trial-0");
  EXPECT_EQ(next[4].point, pbt.trial(0).point);
}

TEST(PbtSamplerTest, TruncationZeroOnlyContinues) {
  PbtHarness pbt(PbtSettings("5", "0"));
  pbt.Ask(5);
  for (size_t k = 0; k < 5; ++k) pbt.Finish(k, static_cast<double>(5 - k));
  std::vector<Suggestion> next = pbt.Ask(5);
  for (size_t i = 0; i < next.size(); ++i) {
    EXPECT_EQ(Label(next[i], kPbtParentLabel), "trial-" + std::to_string(i));
    EXPECT_EQ(next[i].point, pbt.trial(i).point);
  }
}

}  // namespace
}  // namespace trainyard::tune
