#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "tune/samplers.h"
#include "tune/tests/test_util.h"

namespace trainyard::tune {
namespace {

std::vector<Parameter> Cube(int dims, double min, double max) {
  std::vector<Parameter> out;
  for (int i = 0; i < dims; ++i) out.push_back(Double("x" + std::to_string(i), min, max));
  return out;
}

std::unique_ptr<Sampler> MakeCmaEs(const Space& space, Settings settings, uint64_t seed = 1) {
  SamplerOptions options{
      .algorithm = "cmaes", .settings = std::move(settings), .default_seed = seed};
  Result<std::unique_ptr<Sampler>> sampler = MakeCmaEsSampler(space, options);
  EXPECT_TRUE(sampler.ok()) << sampler.status().ToString();
  return sampler.ok() ? std::move(*sampler) : nullptr;
}

double ShiftedSphere(const Point& x) {
  double sum = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    double d = x[i] - (1.5 - static_cast<double>(i));
    sum += d * d;
  }
  return sum;
}

double Rosenbrock(const Point& x) {
  double sum = 0;
  for (size_t i = 0; i + 1 < x.size(); ++i) {
    sum += 100 * std::pow(x[i + 1] - x[i] * x[i], 2) + std::pow(1 - x[i], 2);
  }
  return sum;
}

TEST(CmaEsTest, ConvergesOnAShiftedSphere) {
  for (int dims : {2, 3, 5}) {
    Space space = MakeSpace(Cube(dims, -5, 5));
    std::unique_ptr<Sampler> sampler = MakeCmaEs(space, {});
    std::vector<TrialRecord> trials = Drive(*sampler, ShiftedSphere, 120 * dims, 4);
    EXPECT_LT(Best(trials), 1e-4) << dims << " dimensions";
  }
}

TEST(CmaEsTest, ConvergesOnRosenbrock) {
  Space space = MakeSpace(Cube(2, -2, 2));
  std::unique_ptr<Sampler> sampler = MakeCmaEs(space, {{"random_state", "3"}});
  std::vector<TrialRecord> trials = Drive(*sampler, Rosenbrock, 600, 6);
  EXPECT_LT(Best(trials), 1e-3);
}

TEST(CmaEsTest, ReplayIsDeterministic) {
  Space space = MakeSpace(Cube(3, -5, 5));
  std::unique_ptr<Sampler> first = MakeCmaEs(space, {{"random_state", "11"}});
  std::vector<TrialRecord> trials = Drive(*first, ShiftedSphere, 60, 5);
  // A new sampler (as after a crash) answers the same history the same way.
  std::unique_ptr<Sampler> second = MakeCmaEs(space, {{"random_state", "11"}});
  Result<SuggestResult> a = first->Suggest(trials, 3);
  Result<SuggestResult> b = second->Suggest(trials, 3);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a->suggestions.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(a->suggestions[i].point, b->suggestions[i].point);
    EXPECT_EQ(a->suggestions[i].labels, b->suggestions[i].labels);
  }
  // And a whole run repeats exactly.
  std::unique_ptr<Sampler> third = MakeCmaEs(space, {{"random_state", "11"}});
  std::vector<TrialRecord> again = Drive(*third, ShiftedSphere, 60, 5);
  ASSERT_EQ(again.size(), trials.size());
  for (size_t i = 0; i < trials.size(); ++i) EXPECT_EQ(again[i].point, trials[i].point);
  // Another seed goes elsewhere.
  std::unique_ptr<Sampler> other = MakeCmaEs(space, {{"random_state", "12"}});
  EXPECT_NE(Drive(*other, ShiftedSphere, 5, 5)[0].point, trials[0].point);
}

TEST(CmaEsTest, LabelsGenerationsAndWaitsForAFullGeneration) {
  Space space = MakeSpace(Cube(2, 0, 1));  // population 4 + floor(3 ln 2) = 6
  std::unique_ptr<Sampler> sampler = MakeCmaEs(space, {});
  std::vector<TrialRecord> trials;
  auto ask = [&](int n) {
    Result<SuggestResult> r = sampler->Suggest(trials, n);
    EXPECT_TRUE(r.ok());
    for (const Suggestion& s : r->suggestions) {
      trials.push_back({.point = s.point, .labels = s.labels, .state = TrialState::kPending});
    }
    return r->suggestions;
  };
  for (const Suggestion& s : ask(6)) EXPECT_EQ(s.labels.at("cmaes-generation"), "0");
  // Five done and one failed: generation 0 is short of a loss, so it goes on.
  for (size_t i = 0; i < 6; ++i) {
    trials[i].state = i == 2 ? TrialState::kFailed : TrialState::kSucceeded;
    if (i != 2) trials[i].loss = ShiftedSphere(trials[i].point);
  }
  std::vector<Suggestion> more = ask(1);
  ASSERT_EQ(more.size(), 1u);
  EXPECT_EQ(more[0].labels.at("cmaes-generation"), "0");
  trials.back().state = TrialState::kSucceeded;
  trials.back().loss = 1;
  EXPECT_EQ(ask(1)[0].labels.at("cmaes-generation"), "1");
}

TEST(CmaEsTest, RejectsFewerThanTwoContinuousParameters) {
  Space space = MakeSpace(
      {Double("lr", 0.01, 0.1),
       {.name = "optimizer", .type = ParameterType::kCategorical, .list = {"sgd", "adam"}}});
  Result<std::unique_ptr<Sampler>> sampler =
      MakeCmaEsSampler(space, SamplerOptions{.algorithm = "cmaes"});
  EXPECT_EQ(sampler.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(sampler.status().message(),
            "CMA-ES only supports two or more dimensional continuous search space.");
}

TEST(CmaEsTest, ValidatesSettings) {
  Space space = MakeSpace(Cube(2, 0, 1));
  auto status = [&](Settings settings) {
    return MakeCmaEsSampler(space, SamplerOptions{.algorithm = "cmaes", .settings = settings})
        .status();
  };
  EXPECT_TRUE(status({{"sigma", "0.3"}, {"restart_strategy", "bipop"}}).ok());
  EXPECT_EQ(status({{"sigma", "0"}}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status({{"restart_strategy", "lpop"}}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status({{"popsize", "8"}}).message(), "unknown setting popsize for algorithm cmaes");
}

// The population of each run: the number of trials in its first generation
// when every generation is asked one point at a time.
std::map<int, int> FirstGenerationSizes(const std::vector<TrialRecord>& trials) {
  std::map<int, int> first_generation;  // run -> generation
  std::map<int, int> sizes;
  for (const TrialRecord& t : trials) {
    int run = std::stoi(t.labels.at("cmaes-run"));
    int generation = std::stoi(t.labels.at("cmaes-generation"));
    if (!first_generation.contains(run)) first_generation[run] = generation;
    if (first_generation[run] == generation) ++sizes[run];
  }
  return sizes;
}

TEST(CmaEsTest, IpopRestartsWithTwiceThePopulationWhenStuck) {
  // A flat objective: the losses stop changing, so the run is stopped (TolFun).
  Space space = MakeSpace(Cube(2, 0, 1));
  Objective flat = [](const Point&) { return 1.0; };
  std::unique_ptr<Sampler> ipop = MakeCmaEs(space, {{"restart_strategy", "ipop"}});
  std::map<int, int> sizes = FirstGenerationSizes(Drive(*ipop, flat, 400, 1));
  ASSERT_GE(sizes.size(), 2u);
  EXPECT_EQ(sizes[0], 6);
  EXPECT_EQ(sizes[1], 12);
  std::unique_ptr<Sampler> none = MakeCmaEs(space, {});
  EXPECT_EQ(FirstGenerationSizes(Drive(*none, flat, 400, 1)).size(), 1u);
}

TEST(CmaEsTest, BipopRestartsToo) {
  Space space = MakeSpace(Cube(2, 0, 1));
  Objective flat = [](const Point&) { return 1.0; };
  std::unique_ptr<Sampler> bipop = MakeCmaEs(space, {{"restart_strategy", "bipop"}});
  std::map<int, int> sizes = FirstGenerationSizes(Drive(*bipop, flat, 800, 1));
  EXPECT_GE(sizes.size(), 3u);
  for (auto [run, size] : sizes) EXPECT_GE(size, 6) << run;
}

TEST(CmaEsTest, RestartsAfterConvergingAndKeepsTheBest) {
  Space space = MakeSpace(Cube(2, -5, 5));
  std::unique_ptr<Sampler> sampler = MakeCmaEs(space, {{"restart_strategy", "ipop"}});
  std::vector<TrialRecord> trials = Drive(*sampler, ShiftedSphere, 2500, 6);
  EXPECT_GE(FirstGenerationSizes(trials).size(), 2u);
  EXPECT_LT(Best(trials), 1e-10);
}

TEST(CmaEsTest, SamplesCategoricalsAndHonoursDistributionsAndSteps) {
  Parameter optimizer{.name = "optimizer", .type = ParameterType::kCategorical, .list = {"a", "b"}};
  Parameter layers{.name = "layers", .type = ParameterType::kInt, .min = 0, .max = 100, .step = 10};
  Space space = MakeSpace({Double("lr", 1e-6, 1, Distribution::kLogUniform), layers, optimizer});
  std::unique_ptr<Sampler> sampler = MakeCmaEs(space, {});
  std::vector<TrialRecord> trials = Drive(
      *sampler, [](const Point& p) { return std::abs(std::log10(p[0]) + 3) + p[1] / 100; }, 150, 3);
  std::set<double> categories;
  std::set<std::string> keys;
  for (const TrialRecord& t : trials) {
    categories.insert(t.point[2]);
    EXPECT_EQ(std::fmod(t.point[1], 10.0), 0) << t.point[1];
    EXPECT_GE(t.point[0], 1e-6);
    EXPECT_LE(t.point[0], 1);
    EXPECT_TRUE(keys.insert(space.Key(t.point)).second) << "a repeated point";
  }
  EXPECT_EQ(categories.size(), 2u);
  // The optimum lr is 1e-3: a log scale finds it, a linear one would not.
  const TrialRecord& best = *std::min_element(
      trials.begin(), trials.end(),
      [](const TrialRecord& a, const TrialRecord& b) { return *a.loss < *b.loss; });
  EXPECT_NEAR(std::log10(best.point[0]), -3, 0.1);
  EXPECT_EQ(best.point[1], 0);
}

TEST(CmaEsTest, UsesUpASmallSpaceWithoutRepeats) {
  Parameter a{.name = "a", .type = ParameterType::kInt, .min = 0, .max = 2};
  Parameter b{.name = "b", .type = ParameterType::kInt, .min = 5, .max = 7};
  Space space = MakeSpace({a, b});
  std::unique_ptr<Sampler> sampler = MakeCmaEs(space, {});
  std::vector<TrialRecord> trials = Drive(
      *sampler, [](const Point& p) { return p[0] + p[1]; }, 30, 2);
  std::set<std::string> keys;
  for (const TrialRecord& t : trials) keys.insert(space.Key(t.point));
  EXPECT_EQ(trials.size(), 9u);
  EXPECT_EQ(keys.size(), 9u);
  Result<SuggestResult> after = sampler->Suggest(trials, 1);
  ASSERT_TRUE(after.ok());
  EXPECT_TRUE(after->suggestions.empty());
  EXPECT_TRUE(after->exhausted);
}

}  // namespace
}  // namespace trainyard::tune
