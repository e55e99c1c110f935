#include "tune/gp_warp.h"

#include <cmath>

namespace trainyard::tune {
namespace {

constexpr double kMinLambda = -3, kMaxLambda = 3;
constexpr int kGrid = 61;  // 0.1 apart; then refined by golden section

std::vector<double> Standardized(const std::vector<double>& x) {
  double mean = 0;
  for (double v : x) mean += v;
  mean /= static_cast<double>(x.size());
  double var = 0;
  for (double v : x) var += (v - mean) * (v - mean);
  double sd = std::sqrt(var / static_cast<double>(x.size()));
  std::vector<double> out;
  out.reserve(x.size());
  for (double v : x) out.push_back(sd > 0 ? (v - mean) / sd : 0.0);
  return out;
}

// The profile log-likelihood of `lambda` for standardised `z` (Yeo and
// Johnson 2000): the Gaussian fit of the transformed values plus the log
// Jacobian of the transform.
double LogLikelihood(const std::vector<double>& z, double lambda) {
  double n = static_cast<double>(z.size());
  double mean = 0, jacobian = 0;
  std::vector<double> t;
  t.reserve(z.size());
  for (double v : z) {
    t.push_back(YeoJohnson(v, lambda));
    mean += t.back();
    jacobian += std::copysign(std::log1p(std::abs(v)), v);
  }
  mean /= n;
  double var = 0;
  for (double v : t) var += (v - mean) * (v - mean);
  var /= n;
  if (!(var > 0) || !std::isfinite(var)) return -INFINITY;
  return -0.5 * n * std::log(var) + (lambda - 1) * jacobian;
}

double BestLambda(const std::vector<double>& z) {
  double step = (kMaxLambda - kMinLambda) / (kGrid - 1);
  double best = 1, best_ll = LogLikelihood(z, 1);
  for (int i = 0; i < kGrid; ++i) {
    double lambda = kMinLambda + step * i;
    double ll = LogLikelihood(z, lambda);
    if (ll > best_ll) best = lambda, best_ll = ll;
  }
  // Golden section within a grid step either side of the best grid point.
  const double g = (std::sqrt(5.0) - 1) / 2;
  double a = std::max(kMinLambda, best - step), b = std::min(kMaxLambda, best + step);
  for (int k = 0; k < 30; ++k) {
    double c = b - g * (b - a), d = a + g * (b - a);
    if (LogLikelihood(z, c) > LogLikelihood(z, d)) {
      b = d;
    } else {
      a = c;
    }
  }
  double refined = (a + b) / 2;
  return LogLikelihood(z, refined) > best_ll ? refined : best;
}

}  // namespace

double YeoJohnson(double x, double lambda) {
  if (x >= 0) {
    return std::abs(lambda) < 1e-12 ? std::log1p(x) : (std::pow(x + 1, lambda) - 1) / lambda;
  }
  return std::abs(lambda - 2) < 1e-12 ? -std::log1p(-x)
                                      : -(std::pow(1 - x, 2 - lambda) - 1) / (2 - lambda);
}

Warped WarpLosses(const std::vector<double>& losses) {
  Warped out;
  std::vector<double> z = Standardized(losses);
  if (z.size() < 3) {
    out.values = std::move(z);
    return out;
  }
  out.lambda = BestLambda(z);
  out.values.reserve(z.size());
  for (double v : z) out.values.push_back(YeoJohnson(v, out.lambda));
  return out;
}

}  // namespace trainyard::tune
