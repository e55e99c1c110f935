// TPE: the Parzen estimator's shape, the constant liar, and that the model
// beats random search on a smooth function.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "tune/sampler.h"
#include "tune/tests/test_util.h"
#include "tune/tpe_parzen.h"

namespace trainyard::tune {
namespace {

Space Square(int dims) {
  std::vector<Parameter> parameters;
  for (int i = 0; i < dims; ++i) {
    parameters.push_back(
        {.name = "x" + std::to_string(i), .type = ParameterType::kDouble, .min = -5, .max = 5});
  }
  return MakeSpace(std::move(parameters));
}

TEST(ParzenEstimatorTest, IsADensityOnTheUnitInterval) {
  Space space = Square(1);
  for (bool multivariate : {true, false}) {
    ParzenEstimator estimator(space, {0}, {{0.1}, {0.15}, {0.9}}, {1, 1, 1},
                              {.multivariate = multivariate, .prior_weight = 1});
    double integral = 0;
    const int steps = 20000;
    for (int k = 0; k < steps; ++k) {
      integral += std::exp(estimator.LogDensity({(k + 0.5) / steps})) / steps;
    }
    EXPECT_NEAR(integral, 1.0, 1e-3) << multivariate;
    // Mass gathers near the observations.
    EXPECT_GT(estimator.LogDensity({0.12}), estimator.LogDensity({0.5}));
  }
}

TEST(ParzenEstimatorTest, CategoricalKernelsFavourObservedChoices) {
  Space space = MakeSpace(
      {{.name = "opt", .type = ParameterType::kCategorical, .list = {"sgd", "adam", "ftrl"}}});
  ParzenEstimator estimator(space, {0}, {{1}, {1}, {2}}, {1, 1, 1}, {});
  double total = 0;
  for (double j : {0.0, 1.0, 2.0}) total += std::exp(estimator.LogDensity({j}));
  EXPECT_NEAR(total, 1.0, 1e-12);
  EXPECT_GT(estimator.LogDensity({1}), estimator.LogDensity({2}));
  EXPECT_GT(estimator.LogDensity({2}), estimator.LogDensity({0}));
  std::mt19937_64 rng(1);
  int adam = 0;
  for (int k = 0; k < 1000; ++k) adam += estimator.Sample(rng)[0] == 1;
  EXPECT_GT(adam, 450);
}

double Sphere(const Point& p) {
  double sum = 0;
  for (double v : p) sum += (v - 1) * (v - 1);
  return sum;
}

void BestAfter(const std::string& algorithm, uint64_t seed, int budget, double& best) {
  Space space = Square(3);
  std::unique_ptr<Sampler> sampler = *MakeSampler(
      space, {.algorithm = algorithm, .settings = {{"random_state", std::to_string(seed)}}});
  std::vector<TrialRecord> trials;
  best = INFINITY;
  while (static_cast<int>(trials.size()) < budget) {
    Result<SuggestResult> result = sampler->Suggest(trials, 1);
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    for (const Suggestion& s : result->suggestions) {
      double loss = Sphere(s.point);
      best = std::min(best, loss);
      trials.push_back({.point = s.point, .state = TrialState::kSucceeded, .loss = loss});
    }
  }
}

TEST(TpeSamplerTest, BeatsRandomSearchOnASphere) {
  for (const char* algorithm : {"tpe", "multivariate-tpe"}) {
    std::vector<double> tpe;
    std::vector<double> random;
    for (uint64_t seed = 0; seed < 9; ++seed) {
      tpe.push_back(0);
      random.push_back(0);
      BestAfter(algorithm, seed, 60, tpe.back());
      BestAfter("random", seed, 60, random.back());
    }
    std::sort(tpe.begin(), tpe.end());
    std::sort(random.begin(), random.end());
    EXPECT_LT(tpe[4], random[4] / 2) << algorithm;
  }
}

TEST(TpeSamplerTest, ABatchSpreadsOutAroundTheBest) {
  // Constant liar: with one excellent trial, a batch of 8 does not pile onto
  // a single neighbourhood (each point joins "above" for the next).
  Space space = Square(2);
  std::unique_ptr<Sampler> sampler =
      *MakeSampler(space, {.algorithm = "multivariate-tpe", .settings = {{"random_state", "3"}}});
  std::vector<TrialRecord> trials;
  std::mt19937_64 rng(9);
  std::uniform_real_distribution<double> uniform(-5, 5);
  for (int k = 0; k < 20; ++k) {
    Point p{uniform(rng), uniform(rng)};
    trials.push_back({.point = p, .state = TrialState::kSucceeded, .loss = Sphere(p)});
  }
  SuggestResult result = *sampler->Suggest(trials, 8);
  ASSERT_EQ(result.suggestions.size(), 8u);
  double min_gap = INFINITY;
  for (size_t a = 0; a < 8; ++a) {
    for (size_t b = a + 1; b < 8; ++b) {
      const Point& p = result.suggestions[a].point;
      const Point& q = result.suggestions[b].point;
      min_gap = std::min(min_gap, std::hypot(p[0] - q[0], p[1] - q[1]));
    }
  }
  EXPECT_GT(min_gap, 1e-3);
}

}  // namespace
}  // namespace trainyard::tune
