#include "tune/tpe_parzen.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "tune/normal.h"

namespace trainyard::tune {
namespace {

constexpr double kLogSqrt2Pi = 0.91893853320467274178;

// Bandwidths for one numeric column under the univariate rule; the prior
// kernel (last) is excluded from the gaps, as in Optuna.
std::vector<double> NeighbourSigmas(const std::vector<double>& mu) {
  size_t n = mu.size();
  std::vector<double> sigma(n, 1.0);
  if (n == 0) return sigma;
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return mu[a] < mu[b]; });
  std::vector<double> sorted(n + 2);
  sorted[0] = 0;
  sorted[n + 1] = 1;
  for (size_t k = 0; k < n; ++k) sorted[k + 1] = mu[order[k]];
  for (size_t k = 0; k < n; ++k) {
    double left = sorted[k + 1] - sorted[k];
    double right = sorted[k + 2] - sorted[k + 1];
    sigma[order[k]] = std::max(left, right);
  }
  // consider_endpoints=False: the extreme kernels use their inner gap only.
  if (n >= 2) {
    sigma[order[0]] = sorted[2] - sorted[1];
    sigma[order[n - 1]] = sorted[n] - sorted[n - 1];
  }
  return sigma;
}

double LogSumExp(const std::vector<double>& terms) {
  double top = *std::max_element(terms.begin(), terms.end());
  if (!std::isfinite(top)) return top;
  double sum = 0;
  for (double t : terms) sum += std::exp(t - top);
  return top + std::log(sum);
}

}  // namespace

std::vector<double> ToModel(const Space& space, const std::vector<size_t>& dims,
                            const Point& point) {
  std::vector<double> x(dims.size());
  for (size_t c = 0; c < dims.size(); ++c) {
    size_t i = dims[c];
    x[c] = IsList(space[i]) ? point[i] : space.ToUnit(i, point[i]);
  }
  return x;
}

void FromModel(const Space& space, const std::vector<size_t>& dims, const std::vector<double>& x,
               Point& point) {
  for (size_t c = 0; c < dims.size(); ++c) {
    size_t i = dims[c];
    point[i] = IsList(space[i]) ? x[c] : space.FromUnit(i, x[c]);
  }
}

ParzenEstimator::ParzenEstimator(const Space& space, std::vector<size_t> dims,
                                 const std::vector<std::vector<double>>& observations,
                                 const std::vector<double>& weights, const ParzenOptions& options)
    : dims_(std::move(dims)) {
  const size_t n = observations.size();
  const size_t kernels = n + 1;  // the prior is the last
  weights_ = weights;
  weights_.push_back(options.prior_weight);
  double total = std::accumulate(weights_.begin(), weights_.end(), 0.0);
  for (double& w : weights_) w /= total;
  for (double w : weights_) log_weights_.push_back(std::log(w));

  const double min_sigma = 1.0 / std::min(100.0, 1.0 + static_cast<double>(kernels));
  const double scott =
      0.2 * std::pow(static_cast<double>(kernels), -1.0 / (static_cast<double>(dims_.size()) + 4));
  for (size_t c = 0; c < dims_.size(); ++c) {
    const Parameter& p = space[dims_[c]];
    if (IsList(p)) {
      List list{.column = c, .choices = p.list.size(), .log_p = {}};
      std::vector<double> row(list.choices);
      for (size_t k = 0; k < kernels; ++k) {
        std::fill(row.begin(), row.end(), options.prior_weight / static_cast<double>(kernels));
        if (k < n) row[static_cast<size_t>(observations[k][c])] += 1;
        if (k == n) std::fill(row.begin(), row.end(), 1.0);
        double sum = std::accumulate(row.begin(), row.end(), 0.0);
        for (double v : row) list.log_p.push_back(std::log(v / sum));
      }
      lists_.push_back(std::move(list));
      continue;
    }
    Numeric numeric{.column = c, .mu = {}, .sigma = {}, .log_mass = {}};
    for (size_t k = 0; k < n; ++k) numeric.mu.push_back(observations[k][c]);
    numeric.sigma =
        options.multivariate ? std::vector<double>(n, scott) : NeighbourSigmas(numeric.mu);
    numeric.mu.push_back(0.5);
    numeric.sigma.push_back(1.0);
    for (size_t k = 0; k < kernels; ++k) {
      double& s = numeric.sigma[k];
      s = std::clamp(s, min_sigma, 1.0);
      double mass = NormalCdf((1 - numeric.mu[k]) / s) - NormalCdf(-numeric.mu[k] / s);
      numeric.log_mass.push_back(std::log(std::max(mass, 1e-300)) + std::log(s) + kLogSqrt2Pi);
    }
    numeric_.push_back(std::move(numeric));
  }
}

std::vector<double> ParzenEstimator::Sample(std::mt19937_64& rng) const {
  std::discrete_distribution<size_t> pick(weights_.begin(), weights_.end());
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  size_t k = pick(rng);
  std::vector<double> x(dims_.size());
  for (const Numeric& d : numeric_) {
    // Inverse-CDF sampling of the truncated normal.
    double lo = NormalCdf(-d.mu[k] / d.sigma[k]);
    double hi = NormalCdf((1 - d.mu[k]) / d.sigma[k]);
    double z = NormalQuantile(std::clamp(lo + uniform(rng) * (hi - lo), 1e-300, 1 - 1e-16));
    x[d.column] = std::clamp(d.mu[k] + d.sigma[k] * z, 0.0, 1.0);
  }
  for (const List& d : lists_) {
    std::vector<double> p(d.choices);
    for (size_t j = 0; j < d.choices; ++j) p[j] = std::exp(d.log_p[k * d.choices + j]);
    std::discrete_distribution<size_t> choose(p.begin(), p.end());
    x[d.column] = static_cast<double>(choose(rng));
  }
  return x;
}

double ParzenEstimator::LogDensity(const std::vector<double>& x) const {
  std::vector<double> terms = log_weights_;
  for (const Numeric& d : numeric_) {
    double v = x[d.column];
    for (size_t k = 0; k < terms.size(); ++k) {
      double z = (v - d.mu[k]) / d.sigma[k];
      terms[k] -= 0.5 * z * z + d.log_mass[k];
    }
  }
  for (const List& d : lists_) {
    auto j = static_cast<size_t>(x[d.column]);
    for (size_t k = 0; k < terms.size(); ++k) terms[k] += d.log_p[k * d.choices + j];
  }
  return LogSumExp(terms);
}

}  // namespace trainyard::tune
