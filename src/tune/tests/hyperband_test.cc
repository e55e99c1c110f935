#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "tune/hyperband_plan.h"
#include "tune/samplers.h"
#include "tune/tests/test_util.h"

namespace trainyard::tune {
namespace {

std::vector<std::pair<int, double>> Rungs(const HyperbandBracket& bracket) {
  std::vector<std::pair<int, double>> out;
  for (const HyperbandRung& rung : bracket.rungs) out.emplace_back(rung.configs, rung.resource);
  return out;
}

using RungList = std::vector<std::pair<int, double>>;

TEST(HyperbandPlanTest, NineWithEtaThree) {
  Result<HyperbandPlan> plan = MakeHyperbandPlan(9, 3);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->s_max, 2);
  ASSERT_EQ(plan->brackets.size(), 3u);
  EXPECT_EQ(plan->brackets[0].s, 2);
  EXPECT_EQ(Rungs(plan->brackets[0]), (RungList{{9, 1}, {3, 3}, {1, 9}}));
  EXPECT_EQ(plan->brackets[1].s, 1);
  EXPECT_EQ(Rungs(plan->brackets[1]), (RungList{{5, 3}, {1, 9}}));
  EXPECT_EQ(plan->brackets[2].s, 0);
  EXPECT_EQ(Rungs(plan->brackets[2]), (RungList{{3, 9}}));
}

TEST(HyperbandPlanTest, UpstreamExampleTwoWithEtaTwo) {
  Result<HyperbandPlan> plan = MakeHyperbandPlan(2, 2);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->s_max, 1);
  ASSERT_EQ(plan->brackets.size(), 2u);
  EXPECT_EQ(Rungs(plan->brackets[0]), (RungList{{2, 1}, {1, 2}}));
  EXPECT_EQ(Rungs(plan->brackets[1]), (RungList{{2, 2}}));
}

TEST(HyperbandPlanTest, ExactPowersAndSmallMaxima) {
  // log(27) / log(3) is not exactly 3 in floating point.
  Result<HyperbandPlan> plan = MakeHyperbandPlan(27, 3);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->s_max, 3);
  EXPECT_EQ(Rungs(plan->brackets[0]), (RungList{{27, 1}, {9, 3}, {3, 9}, {1, 27}}));
  Result<HyperbandPlan> tiny = MakeHyperbandPlan(0.5, 3);
  ASSERT_TRUE(tiny.ok());
  EXPECT_EQ(tiny->s_max, 0);
  EXPECT_EQ(Rungs(tiny->brackets[0]), (RungList{{1, 0.5}}));
}

// Runs a hyperband sampler the way the controller does.
class Harness {
 public:
  Harness(std::vector<Parameter> parameters, Settings settings, int parallel = 9) {
    Result<Space> space = Space::Make(std::move(parameters));
    EXPECT_TRUE(space.ok()) << space.status().ToString();
    space_ = std::make_unique<Space>(std::move(*space));
    SamplerOptions options{.algorithm = "hyperband",
                           .settings = std::move(settings),
                           .parallel_trial_count = parallel,
                           .default_seed = 7};
    Result<std::unique_ptr<Sampler>> sampler = MakeHyperbandSampler(*space_, options);
    EXPECT_TRUE(sampler.ok()) << sampler.status().ToString();
    if (sampler.ok()) sampler_ = std::move(*sampler);
  }

  // Asks for `count` points and starts them; returns what came back.
  SuggestResult Ask(int count = 100) {
    Result<SuggestResult> result = sampler_->Suggest(trials_, count);
    EXPECT_TRUE(result.ok()) << result.status().ToString();
    for (const Suggestion& s : result->suggestions) {
      trials_.push_back({.point = s.point, .labels = s.labels, .state = TrialState::kPending});
    }
    return *result;
  }

  // Finishes every running trial with loss(point).
  void FinishAll(const std::function<double(const Point&)>& loss) {
    for (TrialRecord& t : trials_) {
      if (t.state != TrialState::kPending) continue;
      t.state = TrialState::kSucceeded;
      t.loss = loss(t.point);
    }
  }

  const Space& space() const { return *space_; }
  std::vector<TrialRecord>& trials() { return trials_; }

 private:
  std::unique_ptr<Space> space_;
  std::unique_ptr<Sampler> sampler_;
  std::vector<TrialRecord> trials_;
};

Parameter Lr() { return {.name = "lr", .type = ParameterType::kDouble, .min = 0.001, .max = 0.1}; }
Parameter Epochs(double max = 100) {
  return {.name = "epochs", .type = ParameterType::kInt, .min = 1, .max = max};
}

Settings NineByThree() { return {{"r_l", "9"}, {"resource_name", "epochs"}, {"eta", "3"}}; }

// (bracket, rung, resource) of every suggestion.
std::set<std::tuple<std::string, std::string, double>> Where(const SuggestResult& result) {
  std::set<std::tuple<std::string, std::string, double>> out;
  for (const Suggestion& s : result.suggestions) {
    out.emplace(Label(s, "hyperband-bracket"), Label(s, "hyperband-rung"), s.point[1]);
  }
  return out;
}

using WhereSet = std::set<std::tuple<std::string, std::string, double>>;

double LossIsLr(const Point& p) { return p[0]; }

TEST(HyperbandSamplerTest, RunsEveryBracketAndPromotesTheBest) {
  Harness h({Lr(), Epochs()}, NineByThree());
  SuggestResult first = h.Ask();
  ASSERT_EQ(first.suggestions.size(), 9u);
  EXPECT_EQ(Where(first), (WhereSet{{"2", "0", 1}}));
  EXPECT_FALSE(first.exhausted);
  for (const Suggestion& s : first.suggestions) {
    EXPECT_GE(s.point[0], 0.001);
    EXPECT_LE(s.point[0], 0.1);
  }

  // While rung 0 runs, there is nothing to suggest, and no error.
  SuggestResult waiting = h.Ask();
  EXPECT_TRUE(waiting.suggestions.empty());
  EXPECT_FALSE(waiting.exhausted);

  h.FinishAll(LossIsLr);
  std::vector<double> lrs;
  for (const Suggestion& s : first.suggestions) lrs.push_back(s.point[0]);
  std::sort(lrs.begin(), lrs.end());
  SuggestResult second = h.Ask();
  ASSERT_EQ(second.suggestions.size(), 3u);
  EXPECT_EQ(Where(second), (WhereSet{{"2", "1", 3}}));
  std::vector<double> promoted;
  for (const Suggestion& s : second.suggestions) promoted.push_back(s.point[0]);
  std::sort(promoted.begin(), promoted.end());
  EXPECT_EQ(promoted, std::vector<double>(lrs.begin(), lrs.begin() + 3));

  h.FinishAll(LossIsLr);
  SuggestResult third = h.Ask();
  ASSERT_EQ(third.suggestions.size(), 1u);
  EXPECT_EQ(Where(third), (WhereSet{{"2", "2", 9}}));
  EXPECT_EQ(third.suggestions[0].point[0], lrs[0]);

  // Bracket 1 needs nothing from bracket 2's last rung: it starts at once.
  SuggestResult fourth = h.Ask();
  ASSERT_EQ(fourth.suggestions.size(), 5u);
  EXPECT_EQ(Where(fourth), (WhereSet{{"1", "0", 3}}));
  h.FinishAll(LossIsLr);
  SuggestResult fifth = h.Ask();
  ASSERT_EQ(fifth.suggestions.size(), 1u);
  EXPECT_EQ(Where(fifth), (WhereSet{{"1", "1", 9}}));
  EXPECT_FALSE(fifth.exhausted);

  SuggestResult last = h.Ask();
  ASSERT_EQ(last.suggestions.size(), 3u);
  EXPECT_EQ(Where(last), (WhereSet{{"0", "0", 9}}));
  EXPECT_TRUE(last.exhausted);

  h.FinishAll(LossIsLr);
  SuggestResult after = h.Ask();
  EXPECT_TRUE(after.suggestions.empty());
  EXPECT_TRUE(after.exhausted);
  EXPECT_EQ(h.trials().size(), 9u + 3 + 1 + 5 + 1 + 3);
}

TEST(HyperbandSamplerTest, SmallRequestsFillARungOverSeveralCalls) {
  Harness h({Lr(), Epochs()}, NineByThree());
  EXPECT_EQ(h.Ask(4).suggestions.size(), 4u);
  EXPECT_EQ(h.Ask(4).suggestions.size(), 4u);
  h.FinishAll(LossIsLr);  // the rung is not complete yet: nothing to promote
  SuggestResult rest = h.Ask(4);
  ASSERT_EQ(rest.suggestions.size(), 1u);
  EXPECT_EQ(Where(rest), (WhereSet{{"2", "0", 1}}));
  EXPECT_TRUE(h.Ask(4).suggestions.empty());  // the ninth still runs
  h.FinishAll(LossIsLr);
  SuggestResult promoted = h.Ask(2);
  EXPECT_EQ(Where(promoted), (WhereSet{{"2", "1", 3}}));
  EXPECT_EQ(promoted.suggestions.size(), 2u);
  EXPECT_EQ(h.Ask(2).suggestions.size(), 1u);
}

TEST(HyperbandSamplerTest, FailedTrialsRankLast) {
  Harness h({Lr(), Epochs()}, NineByThree());
  h.Ask();
  // The two best by lr fail; the rest succeed with loss = lr.
  std::vector<size_t> order(9);
  for (size_t i = 0; i < 9; ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return h.trials()[a].point[0] < h.trials()[b].point[0]; });
  h.trials()[order[0]].state = TrialState::kFailed;
  h.trials()[order[1]].state = TrialState::kFailed;
  h.FinishAll(LossIsLr);
  SuggestResult promoted = h.Ask();
  ASSERT_EQ(promoted.suggestions.size(), 3u);
  std::set<double> lrs;
  for (const Suggestion& s : promoted.suggestions) lrs.insert(s.point[0]);
  EXPECT_EQ(lrs, (std::set<double>{h.trials()[order[2]].point[0], h.trials()[order[3]].point[0],
                                   h.trials()[order[4]].point[0]}));
}

TEST(HyperbandSamplerTest, ARungOfFailuresStillGoesOn) {
  Harness h({Lr(), Epochs()}, NineByThree());
  h.Ask();
  for (TrialRecord& t : h.trials()) t.state = TrialState::kFailed;
  SuggestResult promoted = h.Ask();
  EXPECT_EQ(promoted.suggestions.size(), 3u);
  EXPECT_EQ(Where(promoted), (WhereSet{{"2", "1", 3}}));
}

TEST(HyperbandSamplerTest, UpstreamExampleResourceOutsideItsRange) {
  // examples/v1beta1/hp-tuning/hyperband.yaml: num-epochs int [1, 1], r_l 2, eta 2.
  Harness h({Lr(), Epochs(1)}, {{"r_l", "2"}, {"resource_name", "epochs"}, {"eta", "2"}},
            /*parallel=*/2);
  SuggestResult first = h.Ask(2);
  EXPECT_EQ(Where(first), (WhereSet{{"1", "0", 1}}));
  EXPECT_EQ(first.suggestions.size(), 2u);
  h.FinishAll(LossIsLr);
  EXPECT_EQ(Where(h.Ask(2)), (WhereSet{{"1", "1", 2}}));
  SuggestResult last = h.Ask(2);
  EXPECT_EQ(Where(last), (WhereSet{{"0", "0", 2}}));
  EXPECT_EQ(last.suggestions.size(), 2u);
  EXPECT_TRUE(last.exhausted);
}

TEST(HyperbandSamplerTest, IntResourcesAreRoundedDoublesAreNot) {
  Parameter budget{.name = "budget", .type = ParameterType::kDouble, .min = 0, .max = 10};
  Harness doubles({Lr(), budget}, {{"r_l", "10"}, {"resource_name", "budget"}});
  SuggestResult first = doubles.Ask();
  ASSERT_FALSE(first.suggestions.empty());
  EXPECT_DOUBLE_EQ(first.suggestions[0].point[1], 10.0 / 9);
  Harness ints({Lr(), Epochs()}, {{"r_l", "10"}, {"resource_name", "epochs"}});
  EXPECT_EQ(ints.Ask().suggestions[0].point[1], 1);
}

TEST(HyperbandSamplerTest, SameHistorySameSuggestions) {
  Harness a({Lr(), Epochs()}, NineByThree());
  Harness b({Lr(), Epochs()}, NineByThree());
  SuggestResult x = a.Ask();
  SuggestResult y = b.Ask();
  ASSERT_EQ(x.suggestions.size(), y.suggestions.size());
  for (size_t i = 0; i < x.suggestions.size(); ++i) {
    EXPECT_EQ(x.suggestions[i].point, y.suggestions[i].point);
  }
}

TEST(HyperbandSamplerTest, SmallSpacesShrinkTheFirstRung) {
  Parameter optimizer{.name = "optimizer", .type = ParameterType::kCategorical, .list = {"a", "b"}};
  Harness h({optimizer, Epochs()}, NineByThree());
  SuggestResult first = h.Ask();
  EXPECT_EQ(first.suggestions.size(), 2u);  // only two configurations exist
  h.FinishAll([](const Point& p) { return p[0]; });
  SuggestResult second = h.Ask();
  ASSERT_EQ(second.suggestions.size(), 2u);
  EXPECT_EQ(Where(second), (WhereSet{{"2", "1", 3}}));
}

Status Make(std::vector<Parameter> parameters, Settings settings, int parallel = 9) {
  Result<Space> space = Space::Make(std::move(parameters));
  EXPECT_TRUE(space.ok());
  SamplerOptions options{
      .algorithm = "hyperband", .settings = std::move(settings), .parallel_trial_count = parallel};
  return MakeHyperbandSampler(*space, options).status();
}

TEST(HyperbandSamplerTest, ValidatesSettingsWithUpstreamMessages) {
  EXPECT_EQ(Make({Lr(), Epochs()}, {{"resource_name", "epochs"}}).message(),
            "r_l and resource_name must be set.");
  EXPECT_EQ(Make({Lr(), Epochs()}, {{"r_l", "9"}}).message(), "r_l and resource_name must be set.");
  EXPECT_EQ(Make({Lr(), Epochs()}, {{"r_l", "-1"}, {"resource_name", "epochs"}}).message(),
            "r_l must be a positive float number.");
  EXPECT_EQ(Make({Lr(), Epochs()}, {{"r_l", "nine"}, {"resource_name", "epochs"}}).message(),
            "r_l must be a positive float number.");
  EXPECT_EQ(Make({Lr(), Epochs()}, {{"r_l", "9"}, {"resource_name", "steps"}}).message(),
            "value of resource_name setting must be in parameters.");
  Status parallel = Make({Lr(), Epochs()}, NineByThree(), /*parallel=*/3);
  EXPECT_EQ(parallel.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(parallel.message(), "parallelTrialCount must be not less than 9.");
  EXPECT_EQ(
      Make({Lr(), Epochs()}, {{"r_l", "9"}, {"resource_name", "epochs"}, {"eta", "x"}}).code(),
      StatusCode::kInvalidArgument);
  EXPECT_EQ(Make({Lr(), Epochs()}, {{"r_l", "9"}, {"resource_name", "epochs"}, {"bracket", "1"}})
                .message(),
            "unknown setting bracket for algorithm hyperband");
  Parameter optimizer{.name = "optimizer", .type = ParameterType::kCategorical, .list = {"a"}};
  EXPECT_EQ(Make({Lr(), optimizer}, {{"r_l", "9"}, {"resource_name", "optimizer"}}).code(),
            StatusCode::kInvalidArgument);
}

TEST(HyperbandSamplerTest, EtaAtMostZeroMeansThree) {
  // eta -1 becomes 3, so r_l 9 needs 9 parallel trials; eta 9 would need 9 too
  // but eta 2 would need 8.
  EXPECT_TRUE(
      Make({Lr(), Epochs()}, {{"r_l", "9"}, {"resource_name", "epochs"}, {"eta", "-1"}}).ok());
  EXPECT_EQ(Make({Lr(), Epochs()}, {{"r_l", "9"}, {"resource_name", "epochs"}, {"eta", "0"}}, 8)
                .message(),
            "parallelTrialCount must be not less than 9.");
  EXPECT_TRUE(
      Make({Lr(), Epochs()}, {{"r_l", "9"}, {"resource_name", "epochs"}, {"eta", "2"}}, 8).ok());
}

}  // namespace
}  // namespace trainyard::tune
