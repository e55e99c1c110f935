// The Parzen estimator behind TPE: a weighted mixture of one kernel per
// observation plus a prior kernel, over some of a Space's parameters.
//
// Coordinates: an int or double parameter is its Space::ToUnit value in
// [0, 1] (so log and normal distributions are the estimator's uniform); a
// categorical or discrete one is its index. Numeric kernels are normals
// truncated to [0, 1]; list kernels put most of their mass on the observed
// index and spread prior_weight / n_kernels over every index (Optuna's
// rule). The prior kernel is N(0.5, 1) truncated, and uniform over lists.
//
// Bandwidths follow Optuna's TPESampler: multivariate, one bandwidth
// 0.2 n^(-1/(d+4)) for every observation kernel; univariate (one
// parameter), the larger gap to either sorted neighbour, the extreme
// kernels taking their inner gap. Both are clipped below at
// 1 / min(100, 1 + n_kernels) (the "magic clip") and above at 1.
#pragma once

#include <random>
#include <vector>

#include "tune/space.h"

namespace trainyard::tune {

struct ParzenOptions {
  bool multivariate = true;
  double prior_weight = 1.0;
};

class ParzenEstimator {
 public:
  // `observations` are points in model coordinates over `dims` (one value per
  // entry of dims), `weights` one positive weight each.
  ParzenEstimator(const Space& space, std::vector<size_t> dims,
                  const std::vector<std::vector<double>>& observations,
                  const std::vector<double>& weights, const ParzenOptions& options);

  // A point over `dims`, drawn from the mixture.
  std::vector<double> Sample(std::mt19937_64& rng) const;
  // log density of a point over `dims`.
  double LogDensity(const std::vector<double>& x) const;

 private:
  struct Numeric {
    size_t column;                            // index into dims
    std::vector<double> mu, sigma, log_mass;  // per kernel; log_mass: truncation
  };
  struct List {
    size_t column;
    size_t choices;
    std::vector<double> log_p;  // kernel-major: kernel * choices + index
  };

  std::vector<size_t> dims_;
  std::vector<double> log_weights_;  // per kernel, normalised
  std::vector<double> weights_;
  std::vector<Numeric> numeric_;
  std::vector<List> lists_;
};

// Model coordinates of a point over `dims`, and back (FromModel snaps onto
// the parameters' values).
std::vector<double> ToModel(const Space& space, const std::vector<size_t>& dims,
                            const Point& point);
void FromModel(const Space& space, const std::vector<size_t>& dims, const std::vector<double>& x,
               Point& point);

}  // namespace trainyard::tune
