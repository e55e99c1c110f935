// A Gaussian process regression model for Bayesian optimisation over a
// search space's unit cube. Internal to tune/.
//
// A point has one coordinate per parameter, as Space::ToUnit gives them;
// several points are laid out one after another. Numeric coordinates (ints,
// doubles, discrete lists by index) enter the kernel by their difference; a
// categorical coordinate by equality (its squared distance is 0 or 1, which
// is one-hot encoding with one lengthscale for all the parameter's columns).
//
// Model: y = c + f(x) + noise, outputs standardised first (c is their mean,
// their variance becomes 1), f ~ GP(0, k) with a Matérn 5/2 kernel over all
// coordinates plus a sum of one Matérn 5/2 per coordinate (Duvenaud et al.
// 2011's first- and d-th-order additive terms), each part with its own
// lengthscales (ARD):
//   k(u, v) = s^2 m(r) + (s_add^2 / d) sum_j m(|u_j - v_j| / a_j),
//   m(r) = (1 + sqrt(5) r + 5 r^2 / 3) exp(-sqrt(5) r),  r^2 = sum_j d_j^2 / l_j^2.
// The additive part lets a few dozen trials learn how each parameter on its
// own moves the loss, as a univariate TPE does: on separable losses
// (Styblinski-Tang, Rastrigin) it finds what the joint kernel alone, which
// needs many points in every direction, does not.
// Fit chooses the hyperparameters (log l_j, log s^2, log noise variance,
// log a_j, log s_add^2) that maximise the log marginal likelihood plus
// log-normal priors, within bounds, by L-BFGS from the priors' centre and
// from random draws of the priors:
//   l_j      centre exp(sqrt(2) + log(d) / 2), log-scale sqrt(3), in [0.01, 100]
//            (Hvarfner et al. 2024: the prior widens with the dimension d)
//   s^2      centre 1, log-scale 1.5, in [0.01, 100]
//   noise    centre e^-5 (a few percent of the variance), log-scale 2, in [1e-6, 2]
//   a_j      centre 1 (the unit interval), log-scale sqrt(3), in [0.01, 100]
//   s_add^2  centre e^-1, log-scale 1.5, in [1e-4, 100]
// (The additive part's two centres were chosen on bench/tune_functions.h's
// first ten functions, and checked on its held-out five.)
//
// Cost. A step of the fit is a Cholesky factorisation and an inverse,
// O(n^3), and the kernel on the n(n - 1) / 2 pairs for each of its d + 1
// parts, O(n^2 d); a fit takes 100 to 300 steps, some 0.1 s at n = 128 on
// one core. A prediction is O(n d) for the kernel and O(n^2) for the
// variance. The callers bound n (gp_sampler.cc: a fit sees at most 128
// points, a model at most 300).
//
// Eigen stays inside gp_model.cc, so this header is plain C++.
#pragma once

#include <memory>
#include <random>
#include <span>
#include <vector>

namespace trainyard::tune {

struct GpHyperparameters {
  std::vector<double> log_lengthscales;
  double log_signal = 0;  // log s^2, in standardised units
  double log_noise = 0;   // log noise variance, in standardised units
  // The additive part's; without lengthscales (empty), there is none.
  std::vector<double> log_additive_lengthscales;
  double log_additive_signal = 0;  // log s_add^2
};

struct GpFitOptions {
  int random_starts = 2;  // L-BFGS starts drawn from the priors, besides their centre
  int max_iterations = 60;
};

// The posterior of f at one point, in standardised units, with gradients with
// respect to the coordinates (zero for categorical ones) when asked for.
struct GpPrediction {
  double mean = 0;
  double variance = 0;
  std::vector<double> mean_gradient;
  std::vector<double> variance_gradient;
};

class GaussianProcess {
 public:
  // `x` holds y.size() points of categorical.size() coordinates each. Draws
  // the random starts from `rng`.
  static GaussianProcess Fit(std::span<const double> x, std::span<const double> y,
                             const std::vector<bool>& categorical, std::mt19937_64& rng,
                             const GpFitOptions& options = {});
  // The same model with the hyperparameters given (fitted on other data).
  static GaussianProcess WithHyperparameters(std::span<const double> x, std::span<const double> y,
                                             const std::vector<bool>& categorical,
                                             const GpHyperparameters& hyperparameters);

  // Minus the log marginal likelihood and log prior of standardised outputs
  // `z` under packed hyperparameters `theta`, 2d + 3 of them (log
  // lengthscales, log s^2, log noise, the additive part's log lengthscales,
  // log s_add^2), and its gradient; +inf where the kernel matrix is not
  // positive definite, or `theta` has another size. Exposed for tests.
  static double NegativeLogPosterior(std::span<const double> x, std::span<const double> z,
                                     const std::vector<bool>& categorical,
                                     std::span<const double> theta, std::vector<double>* gradient);

  GaussianProcess(GaussianProcess&&) noexcept;
  GaussianProcess& operator=(GaussianProcess&&) noexcept;
  ~GaussianProcess();

  int dimensions() const;
  int observations() const;
  GpPrediction Predict(std::span<const double> u, bool gradients = false) const;
  // Means and variances at many points, in standardised units.
  void PredictMany(std::span<const double> u, std::vector<double>* mean,
                   std::vector<double>* variance) const;

  // Adds an observation (standardised) without refitting anything: how
  // running trials and a batch's chosen points are told a constant lie. A
  // lie is noise-free: the posterior variance there drops to nothing, so the
  // acquisition looks elsewhere. O(n^2).
  void AddObservation(std::span<const double> u, double z);

  double Standardize(double y) const;
  double Unstandardize(double z) const;
  // Observation j's coordinates, and all standardised outputs.
  std::span<const double> input(int j) const;
  std::span<const double> standardized_outputs() const;
  const GpHyperparameters& hyperparameters() const;

 private:
  struct State;
  explicit GaussianProcess(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace trainyard::tune
