#include "tune/gp_lbfgs.h"

#include <algorithm>
#include <cmath>
#include <deque>

namespace trainyard::tune {
namespace {

struct Correction {
  Eigen::VectorXd s;  // x_{k+1} - x_k
  Eigen::VectorXd y;  // g_{k+1} - g_k
  double rho;         // 1 / (y . s)
};

// Zeroes the entries of v held at a bound: at the lower bound with the
// gradient pushing down, or at the upper bound with it pushing up.
void MaskHeld(const Eigen::VectorXd& x, const Eigen::VectorXd& g, const Eigen::VectorXd& lower,
              const Eigen::VectorXd& upper, Eigen::VectorXd& v) {
  for (Eigen::Index i = 0; i < x.size(); ++i) {
    if ((x[i] <= lower[i] && g[i] > 0) || (x[i] >= upper[i] && g[i] < 0)) v[i] = 0;
  }
}

// The two-loop recursion: an approximation of -H g.
Eigen::VectorXd Direction(const std::deque<Correction>& memory, const Eigen::VectorXd& g) {
  Eigen::VectorXd q = g;
  std::vector<double> alpha(memory.size());
  for (size_t k = memory.size(); k-- > 0;) {
    alpha[k] = memory[k].rho * memory[k].s.dot(q);
    q -= alpha[k] * memory[k].y;
  }
  if (!memory.empty()) q *= memory.back().s.dot(memory.back().y) / memory.back().y.squaredNorm();
  for (size_t k = 0; k < memory.size(); ++k) {
    double beta = memory[k].rho * memory[k].y.dot(q);
    q += (alpha[k] - beta) * memory[k].s;
  }
  return -q;
}

}  // namespace

LbfgsResult MinimizeInBox(const BoxObjective& f, Eigen::VectorXd x0, const Eigen::VectorXd& lower,
                          const Eigen::VectorXd& upper, const LbfgsOptions& options) {
  LbfgsResult result;
  result.x = x0.cwiseMax(lower).cwiseMin(upper);
  Eigen::VectorXd g(result.x.size());
  result.value = f(result.x, &g);
  result.evaluations = 1;
  if (!std::isfinite(result.value) || !g.allFinite()) return result;
  std::deque<Correction> memory;
  Eigen::VectorXd next_g(g.size());
  for (int iteration = 0; iteration < options.max_iterations; ++iteration) {
    Eigen::VectorXd projected = g;
    MaskHeld(result.x, g, lower, upper, projected);
    double largest = projected.lpNorm<Eigen::Infinity>();
    if (largest < options.gradient_tolerance) break;
    Eigen::VectorXd d = Direction(memory, projected);
    MaskHeld(result.x, g, lower, upper, d);
    if (d.dot(projected) >= -1e-12 * d.norm() * projected.norm()) {
      memory.clear();  // not a descent direction: start over along the gradient
      d = -projected;
    }
    double step = memory.empty() ? std::min(1.0, 1.0 / largest) : 1.0;
    bool accepted = false;
    Eigen::VectorXd next;
    double next_value = 0;
    for (int backtrack = 0; backtrack < 40; ++backtrack, step /= 2) {
      next = (result.x + step * d).cwiseMax(lower).cwiseMin(upper);
      next_value = f(next, &next_g);
      ++result.evaluations;
      if (std::isfinite(next_value) && next_g.allFinite() &&
          next_value <= result.value + 1e-4 * g.dot(next - result.x)) {
        accepted = true;
        break;
      }
    }
    if (!accepted) break;
    Correction correction{.s = next - result.x, .y = next_g - g, .rho = 0};
    double curvature = correction.s.dot(correction.y);
    if (curvature > 1e-12 * correction.s.norm() * correction.y.norm() && curvature > 0) {
      correction.rho = 1 / curvature;
      memory.push_back(std::move(correction));
      if (static_cast<int>(memory.size()) > options.memory) memory.pop_front();
    }
    double improvement = result.value - next_value;
    result.x = std::move(next);
    result.value = next_value;
    g = next_g;
    if (improvement <= options.relative_tolerance * std::max(1.0, std::abs(result.value))) break;
  }
  return result;
}

}  // namespace trainyard::tune
