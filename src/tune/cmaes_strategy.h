// The (mu/mu_w, lambda)-CMA-ES of Hansen's tutorial ("The CMA Evolution
// Strategy: A Tutorial", 2016, the algorithm of its appendix A), as a value:
// Tell one generation at a time, Sample from the current distribution.
// Active: the worse half of a generation enters the covariance update with
// negative weights, which narrows the distribution along directions that
// did badly (pycma's default; it adapts faster at the small budgets of
// tuning). Internal to tune/.
#pragma once

#include <Eigen/Dense>
#include <random>
#include <vector>

namespace trainyard::tune {

class CmaEs {
 public:
  // Starts at `mean` with step size `sigma` (> 0), C = I, and `population`
  // (>= 2) solutions per generation.
  CmaEs(Eigen::VectorXd mean, double sigma, int population);

  // The default population for n dimensions: 4 + floor(3 ln n).
  static int DefaultPopulation(int n);

  int dimensions() const { return static_cast<int>(mean_.size()); }
  int population() const { return lambda_; }
  int generation() const { return generation_; }
  const Eigen::VectorXd& mean() const { return mean_; }
  double sigma() const { return sigma_; }
  const Eigen::MatrixXd& covariance() const { return c_; }

  // One draw from N(mean, sigma^2 C), with the step size multiplied by
  // `widen` (1 for the strategy's own distribution).
  Eigen::VectorXd Sample(std::mt19937_64& rng, double widen = 1) const;

  // Updates the distribution from exactly population() solutions and their
  // losses (lower is better; NaN ranks last). Only ranks matter.
  void Tell(const std::vector<Eigen::VectorXd>& solutions, const std::vector<double>& losses);

  // Why a run should end and a restart begin, or kNone. Scales are those of
  // the unit cube the sampler works in.
  enum class Stop { kNone, kTolX, kTolFun, kConditionCov, kNoEffectCoord, kTolXUp };
  Stop ShouldStop() const;

 private:
  void Decompose();

  int n_;
  int lambda_;
  int mu_;
  Eigen::VectorXd weights_;           // the mu best, positive, summing to 1
  Eigen::VectorXd negative_weights_;  // the lambda - mu others (active CMA)
  double mu_eff_;
  double c_sigma_, d_sigma_, c_c_, c_1_, c_mu_, chi_n_;

  Eigen::VectorXd mean_;
  double sigma_;
  double sigma0_;
  Eigen::MatrixXd c_;
  Eigen::MatrixXd b_;        // eigenvectors of C
  Eigen::VectorXd d_;        // square roots of C's eigenvalues
  Eigen::VectorXd p_sigma_;  // evolution paths
  Eigen::VectorXd p_c_;
  int generation_ = 0;
  std::vector<double> best_history_;  // best loss per generation
  double last_range_ = 0;             // range of the last generation's losses
};

}  // namespace trainyard::tune
