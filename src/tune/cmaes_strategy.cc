#include "tune/cmaes_strategy.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace trainyard::tune {
namespace {

// Termination tolerances (Hansen's tutorial, appendix B.3), for a unit cube:
// a step size a millionth of a millionth of the range is nothing.
constexpr double kTolX = 1e-12;
constexpr double kTolFun = 1e-12;
constexpr double kMaxCondition = 1e14;
constexpr double kTolXUp = 1e4;

double RankKey(double loss) {
  return std::isnan(loss) ? std::numeric_limits<double>::infinity() : loss;
}

}  // namespace

int CmaEs::DefaultPopulation(int n) {
  return 4 + static_cast<int>(std::floor(3 * std::log(static_cast<double>(n))));
}

CmaEs::CmaEs(Eigen::VectorXd mean, double sigma, int population)
    : n_(static_cast<int>(mean.size())),
      lambda_(std::max(population, 2)),
      mu_(lambda_ / 2),
      mean_(std::move(mean)),
      sigma_(sigma),
      sigma0_(sigma) {
  const double n = n_;
  weights_.resize(mu_);
  for (int i = 0; i < mu_; ++i) weights_[i] = std::log((lambda_ + 1) / 2.0) - std::log(i + 1.0);
  weights_ /= weights_.sum();
  mu_eff_ = 1 / weights_.squaredNorm();
  c_sigma_ = (mu_eff_ + 2) / (n + mu_eff_ + 5);
  d_sigma_ = 1 + 2 * std::max(0.0, std::sqrt((mu_eff_ - 1) / (n + 1)) - 1) + c_sigma_;
  c_c_ = (4 + mu_eff_ / n) / (n + 4 + 2 * mu_eff_ / n);
  c_1_ = 2 / ((n + 1.3) * (n + 1.3) + mu_eff_);
  c_mu_ = std::min(1 - c_1_, 2 * (mu_eff_ - 2 + 1 / mu_eff_) / ((n + 2) * (n + 2) + mu_eff_));
  // Active CMA: the worst lambda - mu solutions get negative weights in the
  // covariance update, scaled as the tutorial's appendix A says.
  negative_weights_.resize(lambda_ - mu_);
  for (int i = mu_; i < lambda_; ++i) {
    negative_weights_[i - mu_] = std::log((lambda_ + 1) / 2.0) - std::log(i + 1.0);
  }
  if (negative_weights_.size() > 0 && negative_weights_.sum() < 0) {
    double mu_eff_minus =
        negative_weights_.sum() * negative_weights_.sum() / negative_weights_.squaredNorm();
    double alpha = std::min(
        {1 + c_1_ / c_mu_, 1 + 2 * mu_eff_minus / (mu_eff_ + 2), (1 - c_1_ - c_mu_) / (n * c_mu_)});
    negative_weights_ *= alpha / -negative_weights_.sum();
  }
  chi_n_ = std::sqrt(n) * (1 - 1 / (4 * n) + 1 / (21 * n * n));
  c_ = Eigen::MatrixXd::Identity(n_, n_);
  b_ = Eigen::MatrixXd::Identity(n_, n_);
  d_ = Eigen::VectorXd::Ones(n_);
  p_sigma_ = Eigen::VectorXd::Zero(n_);
  p_c_ = Eigen::VectorXd::Zero(n_);
}

Eigen::VectorXd CmaEs::Sample(std::mt19937_64& rng, double widen) const {
  std::normal_distribution<double> normal;
  Eigen::VectorXd z(n_);
  for (int i = 0; i < n_; ++i) z[i] = normal(rng);
  return mean_ + (sigma_ * widen) * (b_ * d_.cwiseProduct(z));
}

void CmaEs::Tell(const std::vector<Eigen::VectorXd>& solutions, const std::vector<double>& losses) {
  std::vector<int> order(solutions.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return RankKey(losses[a]) < RankKey(losses[b]); });
  best_history_.push_back(RankKey(losses[order.front()]));
  last_range_ = RankKey(losses[order.back()]) - RankKey(losses[order.front()]);
  if (std::isnan(last_range_)) last_range_ = 0;  // all +inf

  // y_i = (x_i - m) / sigma for the mu best; their weighted mean is the step.
  Eigen::MatrixXd y(n_, mu_);
  for (int i = 0; i < mu_; ++i) y.col(i) = (solutions[order[i]] - mean_) / sigma_;
  Eigen::VectorXd y_w = y * weights_;
  Eigen::VectorXd mean_old = mean_;
  mean_ += sigma_ * y_w;

  // C^(-1/2) y_w = B D^-1 B^T y_w.
  Eigen::VectorXd c_inv_sqrt_y = b_ * (b_.transpose() * y_w).cwiseQuotient(d_);
  p_sigma_ =
      (1 - c_sigma_) * p_sigma_ + std::sqrt(c_sigma_ * (2 - c_sigma_) * mu_eff_) * c_inv_sqrt_y;
  ++generation_;
  double p_sigma_norm = p_sigma_.norm();
  bool h_sigma = p_sigma_norm / std::sqrt(1 - std::pow(1 - c_sigma_, 2.0 * generation_)) <
                 (1.4 + 2 / (n_ + 1.0)) * chi_n_;
  p_c_ = (1 - c_c_) * p_c_ + (h_sigma ? std::sqrt(c_c_ * (2 - c_c_) * mu_eff_) : 0.0) * y_w;
  double delta = h_sigma ? 0 : c_c_ * (2 - c_c_);
  Eigen::MatrixXd rank_mu = y * weights_.asDiagonal() * y.transpose();
  double weight_sum = 1 + negative_weights_.sum();
  for (int i = mu_; i < lambda_; ++i) {
    // A negative weight is rescaled by n / |C^(-1/2) y|^2, so that no
    // direction shrinks by more than the weight.
    double w = negative_weights_[i - mu_];
    if (w == 0) continue;
    Eigen::VectorXd yi = (solutions[order[i]] - mean_old) / sigma_;
    double norm2 = (b_.transpose() * yi).cwiseQuotient(d_).squaredNorm();
    rank_mu += (w * n_ / std::max(norm2, 1e-300)) * yi * yi.transpose();
  }
  c_ = (1 + c_1_ * delta - c_1_ - c_mu_ * weight_sum) * c_ + c_1_ * p_c_ * p_c_.transpose() +
       c_mu_ * rank_mu;
  sigma_ *= std::exp(std::min(1.0, (c_sigma_ / d_sigma_) * (p_sigma_norm / chi_n_ - 1)));
  Decompose();
}

void CmaEs::Decompose() {
  c_ = (c_ + c_.transpose()) / 2;
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> solver(c_);
  b_ = solver.eigenvectors();
  d_ = solver.eigenvalues().cwiseMax(1e-300).cwiseSqrt();
}

CmaEs::Stop CmaEs::ShouldStop() const {
  if (generation_ == 0) return Stop::kNone;
  // The distribution is narrower than kTolX along every axis.
  double widest = sigma_ * c_.diagonal().cwiseSqrt().maxCoeff();
  if (widest < kTolX && sigma_ * p_c_.cwiseAbs().maxCoeff() < kTolX) return Stop::kTolX;
  if (sigma_ * d_.maxCoeff() > kTolXUp * sigma0_) return Stop::kTolXUp;
  // The best losses of the last 10 + 30n/lambda generations, and this
  // generation's losses, span less than kTolFun.
  size_t window = 10 + static_cast<size_t>(std::ceil(30.0 * n_ / lambda_));
  if (best_history_.size() >= window) {
    auto [low, high] = std::minmax_element(best_history_.end() - window, best_history_.end());
    if (*high - *low < kTolFun && last_range_ < kTolFun) return Stop::kTolFun;
  }
  double condition = d_.maxCoeff() / d_.minCoeff();
  if (condition * condition > kMaxCondition) return Stop::kConditionCov;
  // Adding a fifth of a standard deviation leaves a coordinate unchanged.
  for (int i = 0; i < n_; ++i) {
    if (mean_[i] == mean_[i] + 0.2 * sigma_ * std::sqrt(c_(i, i))) return Stop::kNoEffectCoord;
  }
  return Stop::kNone;
}

}  // namespace trainyard::tune
