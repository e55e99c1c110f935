#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <numbers>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "tune/gp_acquisition.h"
#include "tune/gp_model.h"
#include "tune/gp_warp.h"
#include "tune/normal.h"
#include "tune/samplers.h"
#include "tune/tests/test_util.h"

namespace trainyard::tune {
namespace {

// --- Output warping ----------------------------------------------------------

TEST(GpWarpTest, YeoJohnsonIsTheIdentityAtOneAndMonotone) {
  for (double x : {-3.0, -0.5, 0.0, 0.7, 12.0}) EXPECT_DOUBLE_EQ(YeoJohnson(x, 1), x);
  for (double lambda : {-2.0, 0.0, 0.5, 2.0, 3.0}) {
    for (double x = -4; x < 4; x += 0.25) {
      EXPECT_LT(YeoJohnson(x, lambda), YeoJohnson(x + 0.25, lambda)) << x << " " << lambda;
    }
  }
}

TEST(GpWarpTest, LossesOverOrdersOfMagnitudeAreCompressedInOrder) {
  // Rosenbrock-like: most losses small, a few huge.
  std::vector<double> losses;
  std::mt19937_64 rng(5);
  std::normal_distribution<double> normal(0, 2);
  for (int i = 0; i < 40; ++i) losses.push_back(std::exp(normal(rng)));
  Warped warped = WarpLosses(losses);
  EXPECT_LT(warped.lambda, 0.5);
  ASSERT_EQ(warped.values.size(), losses.size());
  auto skew = [](const std::vector<double>& v) {
    double mean = 0, m2 = 0, m3 = 0;
    for (double x : v) mean += x / static_cast<double>(v.size());
    for (double x : v) {
      m2 += std::pow(x - mean, 2) / static_cast<double>(v.size());
      m3 += std::pow(x - mean, 3) / static_cast<double>(v.size());
    }
    return m3 / std::pow(m2, 1.5);
  };
  EXPECT_LT(std::abs(skew(warped.values)), 0.5 * std::abs(skew(losses)));
  for (size_t i = 0; i < losses.size(); ++i) {
    for (size_t j = 0; j < losses.size(); ++j) {
      if (losses[i] < losses[j]) {
        EXPECT_LT(warped.values[i], warped.values[j]);
      }
    }
  }
}

TEST(GpWarpTest, GaussianLossesAreLeftNearlyAlone) {
  std::vector<double> losses;
  std::mt19937_64 rng(9);
  std::normal_distribution<double> normal(10, 3);
  for (int i = 0; i < 200; ++i) losses.push_back(normal(rng));
  EXPECT_NEAR(WarpLosses(losses).lambda, 1, 0.3);
  EXPECT_EQ(WarpLosses({4.0, 2.0}).values,
            (std::vector<double>{1.0, -1.0}));  // too few: standardised
}

// --- The model -------------------------------------------------------------

TEST(GaussianProcessTest, FitsAOneDimensionalFunction) {
  std::vector<double> x = {0.05, 0.2, 0.35, 0.5, 0.65, 0.8, 0.95};
  std::vector<double> y;
  for (double v : x) y.push_back(10 + 3 * std::sin(6 * v));
  std::mt19937_64 rng(1);
  GaussianProcess gp = GaussianProcess::Fit(x, y, {false}, rng);
  for (size_t i = 0; i < x.size(); ++i) {
    GpPrediction at = gp.Predict(std::vector<double>{x[i]});
    EXPECT_NEAR(gp.Unstandardize(at.mean), y[i], 0.05) << x[i];
    // A hundredth of the prior variance: what is left is the fitted noise.
    EXPECT_LT(at.variance, 0.01) << x[i];
  }
  // Between the data it interpolates, less surely; far from it, it knows less.
  GpPrediction between = gp.Predict(std::vector<double>{0.275});
  EXPECT_NEAR(gp.Unstandardize(between.mean), 10 + 3 * std::sin(6 * 0.275), 0.3);
  EXPECT_GT(between.variance, gp.Predict(std::vector<double>{0.2}).variance);
}

TEST(GaussianProcessTest, LearnsAnAdditiveFunctionFromFewPoints) {
  // Each coordinate on its own; 30 points in 4-D are too few for a joint
  // kernel to see each one's shape, and enough for the additive part.
  auto f = [](const double* u) {
    return std::sin(9 * u[0]) + std::cos(7 * u[1]) + 4 * (u[2] - 0.3) * (u[2] - 0.3) -
           std::sin(5 * u[3]);
  };
  std::mt19937_64 rng(2);
  std::uniform_real_distribution<double> uniform(0, 1);
  std::vector<double> x;
  std::vector<double> y;
  for (int i = 0; i < 30; ++i) {
    for (int j = 0; j < 4; ++j) x.push_back(uniform(rng));
    y.push_back(f(&x[x.size() - 4]));
  }
  GaussianProcess gp = GaussianProcess::Fit(x, y, {false, false, false, false}, rng);
  double error = 0;
  double spread = 0;
  for (int i = 0; i < 200; ++i) {
    std::vector<double> u = {uniform(rng), uniform(rng), uniform(rng), uniform(rng)};
    double d = gp.Unstandardize(gp.Predict(u).mean) - f(u.data());
    error += d * d;
    spread += f(u.data()) * f(u.data());
  }
  // Most of the variation is predicted at points the model has not seen.
  EXPECT_LT(error, 0.1 * spread);
  EXPECT_GT(gp.hyperparameters().log_additive_signal, gp.hyperparameters().log_signal);
}

TEST(GaussianProcessTest, NoisyDataGetsANoiseTerm) {
  std::mt19937_64 noise_rng(5);
  std::normal_distribution<double> noise(0, 0.3);
  std::vector<double> x;
  std::vector<double> y;
  for (int i = 0; i < 40; ++i) {
    x.push_back(i / 39.0);
    y.push_back(x.back() * 2 + noise(noise_rng));
  }
  std::mt19937_64 rng(1);
  GaussianProcess gp = GaussianProcess::Fit(x, y, {false}, rng);
  // The fitted noise standard deviation is near 0.3 (in the data's units).
  double noise_sd =
      std::exp(gp.hyperparameters().log_noise / 2) * (gp.Unstandardize(1) - gp.Unstandardize(0));
  EXPECT_GT(noise_sd, 0.15);
  EXPECT_LT(noise_sd, 0.5);
  // The mean follows the line, not the noise.
  EXPECT_NEAR(gp.Unstandardize(gp.Predict(std::vector<double>{0.5}).mean), 1.0, 0.3);
}

TEST(GaussianProcessTest, LogPosteriorGradientMatchesFiniteDifferences) {
  // Two numeric coordinates and a categorical one.
  std::vector<double> x;
  std::vector<double> z;
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(0, 1);
  for (int i = 0; i < 12; ++i) {
    double a = u(rng);
    double b = u(rng);
    double c = i % 3 == 0 ? 0.25 : 0.75;
    x.insert(x.end(), {a, b, c});
    z.push_back(std::sin(3 * a) + b * b + (c < 0.5 ? 0.5 : 0) - 0.4);
  }
  std::vector<bool> categorical = {false, false, true};
  // Lengthscales, s^2, noise, the additive part's lengthscales and s_add^2.
  std::vector<double> theta = {std::log(0.4), std::log(0.8),  std::log(1.5),
                               0.1,           std::log(0.01), std::log(0.3),
                               std::log(0.5), std::log(0.7),  std::log(0.2)};
  std::vector<double> gradient;
  GaussianProcess::NegativeLogPosterior(x, z, categorical, theta, &gradient);
  ASSERT_EQ(gradient.size(), theta.size());
  for (size_t p = 0; p < theta.size(); ++p) {
    const double h = 1e-6;
    std::vector<double> up = theta;
    std::vector<double> down = theta;
    up[p] += h;
    down[p] -= h;
    double numeric = (GaussianProcess::NegativeLogPosterior(x, z, categorical, up, nullptr) -
                      GaussianProcess::NegativeLogPosterior(x, z, categorical, down, nullptr)) /
                     (2 * h);
    EXPECT_NEAR(gradient[p], numeric, 1e-5 * std::max(1.0, std::abs(numeric))) << p;
  }
}

TEST(GaussianProcessTest, PredictionGradientsMatchFiniteDifferences) {
  std::vector<double> x = {0.1, 0.2, 0.25, 0.9, 0.5, 0.5, 0.8, 0.3};
  std::vector<double> y = {1.0, 2.0, 0.5, 1.5};
  GaussianProcess gp = GaussianProcess::WithHyperparameters(
      x, y, {false, false},
      {.log_lengthscales = {std::log(0.3), std::log(0.5)},
       .log_signal = 0,
       .log_noise = -6,
       .log_additive_lengthscales = {std::log(0.2), std::log(0.4)},
       .log_additive_signal = std::log(0.5)});
  std::vector<double> at = {0.4, 0.6};
  GpPrediction p = gp.Predict(at, true);
  for (size_t d = 0; d < 2; ++d) {
    const double h = 1e-6;
    std::vector<double> up = at;
    std::vector<double> down = at;
    up[d] += h;
    down[d] -= h;
    EXPECT_NEAR(p.mean_gradient[d], (gp.Predict(up).mean - gp.Predict(down).mean) / (2 * h), 1e-6);
    EXPECT_NEAR(p.variance_gradient[d],
                (gp.Predict(up).variance - gp.Predict(down).variance) / (2 * h), 1e-6);
  }
  // PredictMany agrees with Predict.
  std::vector<double> many = {0.4, 0.6, 0.0, 1.0};
  std::vector<double> means;
  std::vector<double> variances;
  gp.PredictMany(many, &means, &variances);
  EXPECT_NEAR(means[0], p.mean, 1e-12);
  EXPECT_NEAR(variances[0], p.variance, 1e-12);
  EXPECT_NEAR(means[1], gp.Predict(std::vector<double>{0.0, 1.0}).mean, 1e-12);
}

TEST(GaussianProcessTest, AddedObservationsActLikeData) {
  std::vector<double> x = {0.1, 0.5, 0.9};
  std::vector<double> y = {1.0, -1.0, 2.0};
  GpHyperparameters hyper{.log_lengthscales = {std::log(0.3)}, .log_signal = 0, .log_noise = -8};
  GaussianProcess grown = GaussianProcess::WithHyperparameters(x, y, {false}, hyper);
  double z = grown.Standardize(0.0);
  grown.AddObservation(std::vector<double>{0.3}, z);
  EXPECT_EQ(grown.observations(), 4);
  // The model now goes through the new point and still through the old ones.
  EXPECT_NEAR(grown.Predict(std::vector<double>{0.3}).mean, z, 1e-6);
  EXPECT_NEAR(grown.Unstandardize(grown.Predict(std::vector<double>{0.5}).mean), -1.0, 0.01);
  // A lie is noise-free: nothing is left to learn there.
  EXPECT_LT(grown.Predict(std::vector<double>{0.3}).variance, 1e-6);
  EXPECT_GT(grown.Predict(std::vector<double>{0.2}).variance, 1e-4);
}

// The kernel as gp_model.h writes it, entry by entry, for the tests below
// to check the model's faster arithmetic against.
struct DenseKernel {
  std::vector<bool> categorical;
  GpHyperparameters hyper;

  static double Matern(double r) {
    return (1 + std::sqrt(5.0) * r + 5.0 / 3.0 * r * r) * std::exp(-std::sqrt(5.0) * r);
  }
  double operator()(const double* u, const double* v) const {
    const size_t dims = categorical.size();
    double r2 = 0;
    double additive = 0;
    for (size_t p = 0; p < dims; ++p) {
      double d = categorical[p] ? (std::abs(u[p] - v[p]) > 1e-12 ? 1.0 : 0.0) : u[p] - v[p];
      r2 += d * d * std::exp(-2 * hyper.log_lengthscales[p]);
      additive += Matern(std::abs(d) * std::exp(-hyper.log_additive_lengthscales[p]));
    }
    return std::exp(hyper.log_signal) * Matern(std::sqrt(r2)) +
           std::exp(hyper.log_additive_signal) / static_cast<double>(dims) * additive;
  }
  // The n x n kernel matrix of `x` plus the noise on its diagonal.
  Eigen::MatrixXd Matrix(const std::vector<double>& x) const {
    const size_t dims = categorical.size();
    const Eigen::Index n = static_cast<Eigen::Index>(x.size() / dims);
    Eigen::MatrixXd k(n, n);
    for (Eigen::Index i = 0; i < n; ++i) {
      for (Eigen::Index j = 0; j < n; ++j) {
        k(i, j) = (*this)(&x[static_cast<size_t>(i) * dims], &x[static_cast<size_t>(j) * dims]);
      }
    }
    k.diagonal().array() += std::exp(hyper.log_noise);
    return k;
  }
};

// Two numeric coordinates and a categorical one (values 0.25 and 0.75), in
// the unit cube, with the additive part.
struct MixedData {
  std::vector<double> x;
  std::vector<double> y;
  std::vector<bool> categorical = {false, false, true};
  GpHyperparameters hyper{
      .log_lengthscales = {std::log(0.4), std::log(0.8), std::log(1.5)},
      .log_signal = 0.1,
      .log_noise = std::log(0.01),
      .log_additive_lengthscales = {std::log(0.3), std::log(0.05), std::log(0.7)},
      .log_additive_signal = std::log(0.2)};
};

MixedData MakeMixedData(int n) {
  MixedData data;
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(0, 1);
  for (int i = 0; i < n; ++i) {
    double a = u(rng);
    double b = u(rng);
    double c = i % 3 == 0 ? 0.25 : 0.75;
    data.x.insert(data.x.end(), {a, b, c});
    data.y.push_back(std::sin(3 * a) + b * b + (c < 0.5 ? 0.5 : 0));
  }
  return data;
}

std::vector<double> Pack(const GpHyperparameters& h) {
  std::vector<double> theta = h.log_lengthscales;
  theta.push_back(h.log_signal);
  theta.push_back(h.log_noise);
  theta.insert(theta.end(), h.log_additive_lengthscales.begin(), h.log_additive_lengthscales.end());
  theta.push_back(h.log_additive_signal);
  return theta;
}

TEST(GaussianProcessTest, NegativeLogPosteriorMatchesADenseComputation) {
  MixedData data = MakeMixedData(40);
  std::vector<double> z = data.y;  // any outputs do
  Eigen::LLT<Eigen::MatrixXd> llt(DenseKernel{data.categorical, data.hyper}.Matrix(data.x));
  Eigen::Map<const Eigen::VectorXd> zv(z.data(), static_cast<Eigen::Index>(z.size()));
  double log_det = 2 * llt.matrixLLT().diagonal().array().log().sum();
  double likelihood = 0.5 * zv.dot(llt.solve(zv)) + 0.5 * log_det +
                      0.5 * static_cast<double>(z.size()) * std::log(2 * std::numbers::pi);
  // The priors of gp_model.h: (centre, log-scale) per hyperparameter.
  const double l_centre = std::numbers::sqrt2 + 0.5 * std::log(3.0);
  std::vector<std::pair<double, double>> priors = {{l_centre, std::sqrt(3.0)},
                                                   {l_centre, std::sqrt(3.0)},
                                                   {l_centre, std::sqrt(3.0)},
                                                   {0, 1.5},
                                                   {-5, 2},
                                                   {0, std::sqrt(3.0)},
                                                   {0, std::sqrt(3.0)},
                                                   {0, std::sqrt(3.0)},
                                                   {-1, 1.5}};
  std::vector<double> theta = Pack(data.hyper);
  double prior = 0;
  for (size_t p = 0; p < theta.size(); ++p) {
    prior += 0.5 * std::pow((theta[p] - priors[p].first) / priors[p].second, 2);
  }
  EXPECT_NEAR(GaussianProcess::NegativeLogPosterior(data.x, z, data.categorical, theta, nullptr),
              likelihood + prior, 1e-9 * std::abs(likelihood + prior));
}

// Also with an additive lengthscale far below the fit's bound (0.01), where
// the model takes exp directly rather than products that would overflow.
class PosteriorTest : public testing::TestWithParam<double> {};

TEST_P(PosteriorTest, MatchesADenseComputation) {
  MixedData data = MakeMixedData(30);
  data.hyper.log_additive_lengthscales[1] = std::log(GetParam());
  GaussianProcess gp =
      GaussianProcess::WithHyperparameters(data.x, data.y, data.categorical, data.hyper);
  DenseKernel kernel{data.categorical, data.hyper};
  Eigen::LLT<Eigen::MatrixXd> llt(kernel.Matrix(data.x));
  std::span<const double> z = gp.standardized_outputs();
  Eigen::VectorXd alpha =
      llt.solve(Eigen::Map<const Eigen::VectorXd>(z.data(), static_cast<Eigen::Index>(z.size())));
  std::vector<std::vector<double>> at = {{0.1, 0.9, 0.25}, {0.5, 0.5, 0.75}, {1.0, 0.0, 0.25}};
  at.emplace_back(data.x.begin() + 3, data.x.begin() + 6);  // an observation
  for (const std::vector<double>& u : at) {
    Eigen::VectorXd k(alpha.size());
    for (Eigen::Index j = 0; j < k.size(); ++j) {
      k[j] = kernel(u.data(), &data.x[3 * static_cast<size_t>(j)]);
    }
    GpPrediction p = gp.Predict(u);
    EXPECT_NEAR(p.mean, k.dot(alpha), 1e-9);
    EXPECT_NEAR(p.variance, kernel(u.data(), u.data()) - k.dot(llt.solve(k)), 1e-9);
  }
}

INSTANTIATE_TEST_SUITE_P(AdditiveLengthscales, PosteriorTest, testing::Values(0.05, 0.0002));

TEST(GaussianProcessTest, AddedObservationsWithTheAdditivePartActLikeData) {
  MixedData data = MakeMixedData(20);
  GaussianProcess gp =
      GaussianProcess::WithHyperparameters(data.x, data.y, data.categorical, data.hyper);
  std::vector<double> u = {0.3, 0.6, 0.75};
  double z = gp.Standardize(-1.0);
  gp.AddObservation(u, z);
  // Noise-free: the model goes through the lie, sure of it.
  GpPrediction p = gp.Predict(u);
  EXPECT_NEAR(p.mean, z, 1e-3);
  EXPECT_LT(p.variance, 1e-6);
  // And Predict agrees with PredictMany near it, where the new row counts.
  std::vector<double> near = {0.32, 0.58, 0.75};
  std::vector<double> means;
  std::vector<double> variances;
  gp.PredictMany(near, &means, &variances);
  EXPECT_NEAR(means[0], gp.Predict(near).mean, 1e-12);
  EXPECT_NEAR(variances[0], gp.Predict(near).variance, 1e-12);
  EXPECT_LT(means[0], gp.Predict(std::vector<double>{0.9, 0.1, 0.25}).mean);
}

// --- Acquisition functions --------------------------------------------------

TEST(AcquisitionTest, LogEiIsAccurateEverywhere) {
  for (double z : {-3.0, -1.0, 0.0, 0.5, 2.0, 8.0}) {
    double direct = std::log(NormalPdf(z) + z * NormalCdf(z));
    EXPECT_NEAR(LogExpectedImprovementFactor(z), direct, 1e-12) << z;
  }
  // Continuous where the series takes over, finite far below.
  const double edge = -25;
  const double inside = std::nextafter(edge, 0.0);
  EXPECT_NEAR(LogExpectedImprovementFactor(edge), LogExpectedImprovementFactor(inside), 1e-9);
  EXPECT_NEAR(LogNormalCdf(edge), LogNormalCdf(inside), 1e-9);
  double far = LogExpectedImprovementFactor(-1000);
  EXPECT_TRUE(std::isfinite(far));
  EXPECT_NEAR(far, -0.5 * 1000 * 1000 - 0.5 * std::log(2 * std::numbers::pi) - 2 * std::log(1000.0),
              1e-3);
  EXPECT_NEAR(LogNormalCdf(-3), std::log(NormalCdf(-3)), 1e-12);
  EXPECT_NEAR(LogNormalCdf(10), -NormalCdf(-10), 1e-30);
}

TEST(AcquisitionTest, DerivativesMatchFiniteDifferences) {
  AcquisitionParams params{.best = -0.5};
  for (Acquisition a : {Acquisition::kEi, Acquisition::kPi, Acquisition::kLcb}) {
    for (auto [mean, variance] : std::vector<std::pair<double, double>>{
             {0.0, 0.5}, {-1.0, 0.01}, {3.0, 0.02}, {-0.5, 1e-4}, {40.0, 0.25}}) {
      double d_mean = 0;
      double d_variance = 0;
      AcquisitionLoss(a, params, mean, variance, &d_mean, &d_variance);
      const double h = 1e-7;
      double numeric_mean = (AcquisitionLoss(a, params, mean + h, variance) -
                             AcquisitionLoss(a, params, mean - h, variance)) /
                            (2 * h);
      double hv = variance * 1e-6;
      double numeric_variance = (AcquisitionLoss(a, params, mean, variance + hv) -
                                 AcquisitionLoss(a, params, mean, variance - hv)) /
                                (2 * hv);
      double tolerance = 1e-4 * std::max(1.0, std::abs(numeric_mean));
      EXPECT_NEAR(d_mean, numeric_mean, tolerance) << static_cast<int>(a) << " " << mean;
      EXPECT_NEAR(d_variance, numeric_variance, 1e-4 * std::max(1.0, std::abs(numeric_variance)))
          << static_cast<int>(a) << " " << mean;
    }
  }
}

TEST(AcquisitionTest, PrefersLowMeansAndHighVariances) {
  AcquisitionParams params{.best = 0};
  for (Acquisition a : {Acquisition::kEi, Acquisition::kPi, Acquisition::kLcb}) {
    EXPECT_LT(AcquisitionLoss(a, params, -1, 0.1), AcquisitionLoss(a, params, 1, 0.1));
    EXPECT_LT(AcquisitionLoss(a, params, 1, 1.0), AcquisitionLoss(a, params, 1, 0.1));
  }
}

// --- The sampler ------------------------------------------------------------

std::unique_ptr<Sampler> MakeGp(const Space& space, Settings settings, uint64_t seed = 1) {
  SamplerOptions options{
      .algorithm = "bayesianoptimization", .settings = std::move(settings), .default_seed = seed};
  Result<std::unique_ptr<Sampler>> sampler = MakeGpSampler(space, options);
  EXPECT_TRUE(sampler.ok()) << sampler.status().ToString();
  return sampler.ok() ? std::move(*sampler) : nullptr;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

double Branin(const Point& p) {
  const double x = p[0];
  const double y = p[1];
  const double b = 5.1 / (4 * std::numbers::pi * std::numbers::pi);
  const double c = 5 / std::numbers::pi;
  const double t = 1 / (8 * std::numbers::pi);
  return std::pow(y - b * x * x + c * x - 6, 2) + 10 * (1 - t) * std::cos(x) + 10;
}

TEST(GpSamplerTest, BeatsRandomSearchOnBranin) {
  Space space = MakeSpace({Double("x", -5, 10), Double("y", 0, 15)});
  std::vector<double> gp_best;
  std::vector<double> random_best;
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    std::unique_ptr<Sampler> sampler = MakeGp(space, {}, seed);
    gp_best.push_back(Best(Drive(*sampler, Branin, 30)));
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u(0, 1);
    double best = INFINITY;
    for (int i = 0; i < 30; ++i) best = std::min(best, Branin({-5 + 15 * u(rng), 15 * u(rng)}));
    random_best.push_back(best);
  }
  // The optimum is 0.397887.
  EXPECT_LT(Median(gp_best), 0.6);
  EXPECT_LT(Median(gp_best) - 0.397887, (Median(random_best) - 0.397887) / 4);
}

TEST(GpSamplerTest, FindsTheMinimumOfAQuadraticIn4D) {
  Space space =
      MakeSpace({Double("a", -1, 1), Double("b", -1, 1), Double("c", -1, 1), Double("d", -1, 1)});
  Objective f = [](const Point& p) {
    return std::pow(p[0] - 0.3, 2) + 2 * std::pow(p[1] + 0.5, 2) + std::pow(p[2], 2) +
           0.5 * std::pow(p[3] - 0.8, 2);
  };
  std::unique_ptr<Sampler> sampler = MakeGp(space, {{"acq_func", "EI"}}, 3);
  EXPECT_LT(Best(Drive(*sampler, f, 40)), 0.01);
}

TEST(GpSamplerTest, SameSeedSameSuggestions) {
  Space space = MakeSpace({Double("x", -5, 10), Double("y", 0, 15)});
  std::vector<TrialRecord> trials = Drive(*MakeGp(space, {}, 4), Branin, 14);
  Result<SuggestResult> a = MakeGp(space, {}, 4)->Suggest(trials, 2);
  Result<SuggestResult> b = MakeGp(space, {}, 4)->Suggest(trials, 2);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a->suggestions.size(), 2u);
  EXPECT_EQ(a->suggestions[0].point, b->suggestions[0].point);
  EXPECT_EQ(a->suggestions[1].point, b->suggestions[1].point);
  // random_state wins over the default seed.
  Result<SuggestResult> c = MakeGp(space, {{"random_state", "9"}}, 4)->Suggest({}, 1);
  Result<SuggestResult> d = MakeGp(space, {{"random_state", "9"}}, 5)->Suggest({}, 1);
  EXPECT_EQ(c->suggestions[0].point, d->suggestions[0].point);
  Result<SuggestResult> e = MakeGp(space, {}, 5)->Suggest({}, 1);
  EXPECT_NE(c->suggestions[0].point, e->suggestions[0].point);
}

// Above 128 trials with a loss, the hyperparameters are fitted to the
// first 129, 145, 161, ... of them and kept by the sampler until the next.
// One that kept them must answer as a new sampler does: when the anchor
// stays, when it moves, and when an anchored trial changes.
TEST(GpSamplerTest, AKeptFitAnswersAsANewSamplerDoes) {
  Space space = MakeSpace({Double("x", 0, 1), Double("y", 0, 1)});
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<TrialRecord> trials(150);
  for (TrialRecord& t : trials) {
    t.point = {u(rng), u(rng)};
    t.state = TrialState::kSucceeded;
    t.loss = std::pow(t.point[0] - 0.3, 2) + std::pow(t.point[1] - 0.6, 2);
  }
  trials[20].loss = std::numeric_limits<double>::quiet_NaN();  // a diverged trial
  std::unique_ptr<Sampler> kept = MakeGp(space, {}, 7);
  auto expect_same = [&](size_t n) {
    std::span<const TrialRecord> history = std::span<const TrialRecord>(trials).first(n);
    Result<SuggestResult> a = kept->Suggest(history, 1);
    Result<SuggestResult> b = MakeGp(space, {}, 7)->Suggest(history, 1);
    ASSERT_TRUE(a.ok() && b.ok());
    ASSERT_EQ(a->suggestions.size(), 1u);
    EXPECT_EQ(a->suggestions[0].point, b->suggestions[0].point) << n;
  };
  expect_same(140);  // fitted at 129
  expect_same(144);  // kept
  expect_same(150);  // refitted at 145
  trials[5].loss = 10;
  expect_same(150);  // at 145 again, on other data
}

double UnitDistance(const Space& space, const Point& a, const Point& b) {
  Point ua = space.ToUnit(a);
  Point ub = space.ToUnit(b);
  double sum = 0;
  for (size_t i = 0; i < ua.size(); ++i) sum += (ua[i] - ub[i]) * (ua[i] - ub[i]);
  return std::sqrt(sum);
}

TEST(GpSamplerTest, ABatchSpreadsOut) {
  Space space = MakeSpace({Double("x", -5, 10), Double("y", 0, 15)});
  for (const char* acquisition : {"EI", "LCB", "PI", "gp_hedge"}) {
    std::vector<TrialRecord> trials = Drive(*MakeGp(space, {}, 2), Branin, 12);
    Result<SuggestResult> batch = MakeGp(space, {{"acq_func", acquisition}}, 2)->Suggest(trials, 4);
    ASSERT_TRUE(batch.ok());
    ASSERT_EQ(batch->suggestions.size(), 4u);
    for (size_t i = 0; i < 4; ++i) {
      for (size_t j = 0; j < i; ++j) {
        EXPECT_GT(UnitDistance(space, batch->suggestions[i].point, batch->suggestions[j].point),
                  0.01)
            << acquisition;
      }
    }
  }
}

TEST(GpSamplerTest, RunningTrialsAreNotProposedAgain) {
  Space space = MakeSpace({Double("x", -5, 10), Double("y", 0, 15)});
  std::vector<TrialRecord> trials = Drive(*MakeGp(space, {}, 2), Branin, 12);
  std::unique_ptr<Sampler> sampler = MakeGp(space, {{"acq_func", "PI"}}, 2);
  Result<SuggestResult> first = sampler->Suggest(trials, 1);
  ASSERT_TRUE(first.ok());
  trials.push_back({.point = first->suggestions[0].point, .state = TrialState::kPending});
  Result<SuggestResult> second = sampler->Suggest(trials, 1);
  ASSERT_TRUE(second.ok());
  EXPECT_GT(UnitDistance(space, first->suggestions[0].point, second->suggestions[0].point), 0.01);
}

TEST(GpSamplerTest, HonoursStepsDistributionsAndCategories) {
  Parameter units{.name = "units", .type = ParameterType::kInt, .min = 10, .max = 200, .step = 10};
  Parameter activation{
      .name = "activation", .type = ParameterType::kCategorical, .list = {"relu", "tanh", "gelu"}};
  Space space = MakeSpace({Double("lr", 1e-6, 1, Distribution::kLogUniform), units, activation});
  // Best at lr 1e-3, 60 units, gelu.
  Objective f = [](const Point& p) {
    return std::pow(std::log10(p[0]) + 3, 2) + std::pow((p[1] - 60) / 100, 2) + (p[2] == 2 ? 0 : 1);
  };
  std::vector<TrialRecord> trials = Drive(*MakeGp(space, {{"n_initial_points", "8"}}, 6), f, 30, 2);
  std::set<std::string> keys;
  for (const TrialRecord& t : trials) {
    EXPECT_EQ(std::fmod(t.point[1], 10.0), 0) << t.point[1];
    EXPECT_GE(t.point[0], 1e-6);
    EXPECT_LE(t.point[0], 1);
    EXPECT_TRUE(keys.insert(space.Key(t.point)).second) << "a repeated point";
  }
  const TrialRecord& best = *std::min_element(
      trials.begin(), trials.end(),
      [](const TrialRecord& a, const TrialRecord& b) { return *a.loss < *b.loss; });
  EXPECT_EQ(best.point[2], 2);
  EXPECT_LT(*best.loss, 0.3);
}

TEST(GpSamplerTest, InitialPointsFollowTheDistribution) {
  Space space = MakeSpace({Double("lr", 1e-6, 1, Distribution::kLogUniform), Double("m", 0, 1)});
  Result<SuggestResult> initial = MakeGp(space, {{"n_initial_points", "60"}})->Suggest({}, 60);
  ASSERT_TRUE(initial.ok());
  ASSERT_EQ(initial->suggestions.size(), 60u);
  int below = 0;
  for (const Suggestion& s : initial->suggestions) below += s.point[0] < 1e-3;
  // Half below the geometric middle; a linear scale would put none there.
  EXPECT_GT(below, 15);
  EXPECT_LT(below, 45);
}

TEST(GpSamplerTest, TheInitialDesignGoesOnWhereTheTrialsLeftOff) {
  Space space = MakeSpace({Double("x", 0, 1), Double("y", 0, 1)});
  std::unique_ptr<Sampler> sampler = MakeGp(space, {{"n_initial_points", "8"}});
  Result<SuggestResult> all = sampler->Suggest({}, 8);
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->suggestions.size(), 8u);
  std::vector<TrialRecord> trials;
  for (size_t k = 0; k < 4; ++k) trials.push_back({.point = all->suggestions[k].point});
  Result<SuggestResult> rest = sampler->Suggest(trials, 4);
  ASSERT_TRUE(rest.ok());
  ASSERT_EQ(rest->suggestions.size(), 4u);
  for (size_t k = 0; k < 4; ++k)
    EXPECT_EQ(rest->suggestions[k].point, all->suggestions[4 + k].point);
  // Another seed shifts the whole design.
  Result<SuggestResult> other =
      MakeGp(space, {{"n_initial_points", "8"}}, /*seed=*/2)->Suggest({}, 8);
  EXPECT_NE(other->suggestions[0].point, all->suggestions[0].point);
}

TEST(GpSamplerTest, RandomUntilEnoughTrialsHaveALoss) {
  Space space = MakeSpace({Double("x", 0, 1), Double("y", 0, 1)});
  std::unique_ptr<Sampler> sampler = MakeGp(space, {{"n_initial_points", "3"}});
  // Failed and running trials do not count.
  std::vector<TrialRecord> trials = {
      {.point = {0.1, 0.1}, .state = TrialState::kSucceeded, .loss = 1},
      {.point = {0.2, 0.2}, .state = TrialState::kSucceeded, .loss = 2},
      {.point = {0.3, 0.3}, .state = TrialState::kFailed},
      {.point = {0.4, 0.4}, .state = TrialState::kPending}};
  Result<SuggestResult> result = sampler->Suggest(trials, 2);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->suggestions.size(), 2u);
  // A model with a non-finite loss among its data still suggests.
  trials.push_back({.point = {0.5, 0.5}, .state = TrialState::kSucceeded, .loss = INFINITY});
  trials.push_back({.point = {0.6, 0.6}, .state = TrialState::kEarlyStopped, .loss = 0.5});
  result = sampler->Suggest(trials, 2);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->suggestions.size(), 2u);
}

TEST(GpSamplerTest, UsesUpASmallSpaceWithoutRepeats) {
  Parameter a{.name = "a", .type = ParameterType::kInt, .min = 0, .max = 2};
  Parameter b{.name = "b", .type = ParameterType::kCategorical, .list = {"x", "y"}};
  Space space = MakeSpace({a, b});
  std::vector<TrialRecord> trials = Drive(
      *MakeGp(space, {{"n_initial_points", "2"}}), [](const Point& p) { return p[0] + p[1]; }, 20);
  EXPECT_EQ(trials.size(), 6u);
  Result<SuggestResult> after = MakeGp(space, {})->Suggest(trials, 1);
  ASSERT_TRUE(after.ok());
  EXPECT_TRUE(after->suggestions.empty());
  EXPECT_TRUE(after->exhausted);
  std::set<std::string> keys;
  for (const TrialRecord& t : trials) keys.insert(space.Key(t.point));
  EXPECT_EQ(keys.size(), 6u);
}

Status MakeStatus(Settings settings) {
  Space space = MakeSpace({Double("x", 0, 1), Double("y", 0, 1)});
  SamplerOptions options{.algorithm = "bayesianoptimization", .settings = std::move(settings)};
  return MakeGpSampler(space, options).status();
}

TEST(GpSamplerTest, ValidatesSettings) {
  EXPECT_TRUE(MakeStatus({{"base_estimator", "GP"},
                          {"n_initial_points", "0"},
                          {"acq_func", "LCB"},
                          {"acq_optimizer", "sampling"},
                          {"random_state", "10"}})
                  .ok());
  EXPECT_EQ(MakeStatus({{"base_estimator", "RF"}}).message(),
            "base_estimator RF is not supported by trainyard; use GP");
  EXPECT_EQ(MakeStatus({{"base_estimator", "GBRT"}}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(MakeStatus({{"base_estimator", "SVM"}}).code(), StatusCode::kInvalidArgument);
  Status eips = MakeStatus({{"acq_func", "EIps"}});
  EXPECT_EQ(eips.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(eips.message().find("EIps is not supported"), std::string::npos) << eips.message();
  EXPECT_EQ(MakeStatus({{"acq_func", "PIps"}}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(MakeStatus({{"acq_func", "UCB"}}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(MakeStatus({{"n_initial_points", "-1"}}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(MakeStatus({{"acq_optimizer", "adam"}}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(MakeStatus({{"kappa", "2"}}).message(),
            "unknown setting kappa for algorithm bayesianoptimization");
}

TEST(GpSamplerTest, SamplingOptimizerAndZeroInitialPointsWork) {
  Space space = MakeSpace({Double("x", -5, 10), Double("y", 0, 15)});
  std::unique_ptr<Sampler> sampler =
      MakeGp(space, {{"acq_optimizer", "sampling"}, {"n_initial_points", "0"}}, 8);
  EXPECT_LT(Best(Drive(*sampler, Branin, 25)), 2);
}

}  // namespace
}  // namespace trainyard::tune
