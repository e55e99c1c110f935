// Minimising a smooth function in a box: projected L-BFGS with a backtracking
// (Armijo) line search along the projected path. Variables at a bound whose
// gradient points outwards are held there; the quasi-Newton direction moves
// the others. Internal to tune/ (the GP's hyperparameters and acquisition).
#pragma once

#include <Eigen/Dense>
#include <functional>

namespace trainyard::tune {

// Returns f(x) and writes its gradient; may return +inf (or NaN) where f is
// undefined, which the line search steps back from.
using BoxObjective = std::function<double(const Eigen::VectorXd& x, Eigen::VectorXd* gradient)>;

struct LbfgsOptions {
  int max_iterations = 100;
  int memory = 8;
  // Stops when the projected gradient's largest entry is below this, or when
  // an iteration improves f by less than relative_tolerance * max(1, |f|).
  double gradient_tolerance = 1e-6;
  double relative_tolerance = 1e-10;
};

struct LbfgsResult {
  Eigen::VectorXd x;
  double value = 0;
  int evaluations = 0;
};

// x0 is projected into [lower, upper] first.
LbfgsResult MinimizeInBox(const BoxObjective& f, Eigen::VectorXd x0, const Eigen::VectorXd& lower,
                          const Eigen::VectorXd& upper, const LbfgsOptions& options = {});

}  // namespace trainyard::tune
