#include "tune/gp_model.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include "tune/gp_lbfgs.h"

namespace trainyard::tune {
namespace {

using ConstMap = Eigen::Map<const Eigen::MatrixXd>;
using ConstVectorMap = Eigen::Map<const Eigen::VectorXd>;

const double kSqrt5 = std::sqrt(5.0);

// Matérn 5/2 of r, and g(r) = (5/3)(1 + sqrt(5) r) exp(-sqrt(5) r), for which
// dk/d(r^2) = -g(r) / 2.
inline void Matern52(double r2, double* k, double* g) {
  double r = std::sqrt(r2);
  double e = std::exp(-kSqrt5 * r);
  *k = (1 + kSqrt5 * r + 5.0 / 3.0 * r2) * e;
  *g = 5.0 / 3.0 * (1 + kSqrt5 * r) * e;
}

inline double CoordinateDistance(double a, double b, bool categorical) {
  if (categorical) return std::abs(a - b) > 1e-12 ? 1.0 : 0.0;
  return a - b;
}

// Normal priors on the log hyperparameters, and their bounds.
struct Prior {
  Eigen::VectorXd mean;
  Eigen::VectorXd scale;
  Eigen::VectorXd lower;
  Eigen::VectorXd upper;
};

Prior PriorFor(Eigen::Index dimensions) {
  Prior prior;
  const Eigen::Index size = dimensions + 2;
  prior.mean.resize(size);
  prior.scale.resize(size);
  prior.lower.resize(size);
  prior.upper.resize(size);
  for (Eigen::Index p = 0; p < dimensions; ++p) {
    prior.mean[p] = std::numbers::sqrt2 + 0.5 * std::log(static_cast<double>(dimensions));
    prior.scale[p] = std::sqrt(3.0);
    prior.lower[p] = std::log(1e-2);
    prior.upper[p] = std::log(1e2);
  }
  prior.mean[dimensions] = 0;
  prior.scale[dimensions] = 1.5;
  prior.lower[dimensions] = std::log(1e-2);
  prior.upper[dimensions] = std::log(1e2);
  prior.mean[dimensions + 1] = -5;
  prior.scale[dimensions + 1] = 2;
  prior.lower[dimensions + 1] = std::log(1e-6);
  prior.upper[dimensions + 1] = std::log(2.0);
  return prior;
}

// Per coordinate, the matrix of squared distances between observations.
std::vector<Eigen::MatrixXd> SquaredDistances(const Eigen::MatrixXd& x,
                                              const std::vector<bool>& categorical) {
  const Eigen::Index n = x.cols();
  std::vector<Eigen::MatrixXd> out(static_cast<size_t>(x.rows()), Eigen::MatrixXd(n, n));
  for (Eigen::Index p = 0; p < x.rows(); ++p) {
    bool is_categorical = categorical[static_cast<size_t>(p)];
    for (Eigen::Index j = 0; j < n; ++j) {
      for (Eigen::Index i = 0; i < n; ++i) {
        double d = CoordinateDistance(x(p, i), x(p, j), is_categorical);
        out[static_cast<size_t>(p)](i, j) = d * d;
      }
    }
  }
  return out;
}

double NegativeLogPosteriorFrom(const std::vector<Eigen::MatrixXd>& d2, const Eigen::VectorXd& z,
                                const Prior& prior, const Eigen::VectorXd& theta,
                                Eigen::VectorXd* gradient) {
  const Eigen::Index dims = static_cast<Eigen::Index>(d2.size());
  const Eigen::Index n = z.size();
  const double signal = std::exp(theta[dims]);
  const double noise = std::exp(theta[dims + 1]);
  Eigen::VectorXd inverse_l2 = (-2 * theta.head(dims)).array().exp();
  Eigen::MatrixXd r2 = Eigen::MatrixXd::Zero(n, n);
  for (Eigen::Index p = 0; p < dims; ++p) r2 += inverse_l2[p] * d2[static_cast<size_t>(p)];
  Eigen::MatrixXd k(n, n);
  Eigen::MatrixXd g(n, n);
  for (Eigen::Index j = 0; j < n; ++j) {
    for (Eigen::Index i = 0; i < n; ++i) Matern52(r2(i, j), &k(i, j), &g(i, j));
  }
  Eigen::MatrixXd kernel = signal * k;
  kernel.diagonal().array() += noise;
  Eigen::LLT<Eigen::MatrixXd> llt(kernel);
  if (llt.info() != Eigen::Success) return std::numeric_limits<double>::infinity();
  Eigen::VectorXd alpha = llt.solve(z);
  double log_det = 2 * llt.matrixLLT().diagonal().array().log().sum();
  Eigen::VectorXd from_prior = (theta - prior.mean).cwiseQuotient(prior.scale);
  double value = 0.5 * z.dot(alpha) + 0.5 * log_det +
                 0.5 * static_cast<double>(n) * std::log(2 * std::numbers::pi) +
                 0.5 * from_prior.squaredNorm();
  if (gradient) {
    // d(-log ML)/d theta = -tr(W dK/d theta) / 2 with W = alpha alpha^T - K^-1;
    // dK/d log l_p = s^2 g(r) d_p^2 / l_p^2.
    Eigen::MatrixXd w = alpha * alpha.transpose() - llt.solve(Eigen::MatrixXd::Identity(n, n));
    gradient->resize(theta.size());
    Eigen::MatrixXd wg = signal * w.cwiseProduct(g);
    for (Eigen::Index p = 0; p < dims; ++p) {
      (*gradient)[p] = -0.5 * inverse_l2[p] * wg.cwiseProduct(d2[static_cast<size_t>(p)]).sum();
    }
    (*gradient)[dims] = -0.5 * signal * w.cwiseProduct(k).sum();
    (*gradient)[dims + 1] = -0.5 * noise * w.trace();
    *gradient += from_prior.cwiseQuotient(prior.scale);
  }
  return value;
}

Eigen::VectorXd Pack(const GpHyperparameters& h) {
  const Eigen::Index dims = static_cast<Eigen::Index>(h.log_lengthscales.size());
  Eigen::VectorXd theta(dims + 2);
  theta.head(dims) = ConstVectorMap(h.log_lengthscales.data(), dims);
  theta[dims] = h.log_signal;
  theta[dims + 1] = h.log_noise;
  return theta;
}

GpHyperparameters Unpack(const Eigen::VectorXd& theta) {
  const Eigen::Index dims = theta.size() - 2;
  return {.log_lengthscales = std::vector<double>(theta.data(), theta.data() + dims),
          .log_signal = theta[dims],
          .log_noise = theta[dims + 1]};
}

}  // namespace

struct GaussianProcess::State {
  Eigen::MatrixXd x;  // one column per observation
  Eigen::VectorXd z;  // standardised outputs
  std::vector<bool> categorical;
  GpHyperparameters hyper;
  Eigen::VectorXd inverse_l2;
  double signal = 1;
  double noise = 0;
  double y_mean = 0;
  double y_scale = 1;
  Eigen::MatrixXd l;  // lower Cholesky factor of s^2 K + noise I
  Eigen::VectorXd alpha;

  void Condition();
  // k(u, x_j) for every j, and s^2 g(r_j) for the gradient.
  void CrossKernel(const double* u, Eigen::VectorXd* k, Eigen::VectorXd* g) const;
  void SolveAlpha() {
    alpha = l.triangularView<Eigen::Lower>().transpose().solve(
        l.triangularView<Eigen::Lower>().solve(z));
  }
};

void GaussianProcess::State::Condition() {
  inverse_l2 = (-2 * Pack(hyper).head(x.rows())).array().exp();
  signal = std::exp(hyper.log_signal);
  noise = std::exp(hyper.log_noise);
  const Eigen::Index n = x.cols();
  Eigen::MatrixXd kernel(n, n);
  Eigen::VectorXd k;
  Eigen::VectorXd g;
  for (Eigen::Index j = 0; j < n; ++j) {
    CrossKernel(x.col(j).data(), &k, &g);
    kernel.col(j) = k;
  }
  // More jitter until the factorisation succeeds (at once, unless the noise
  // sits at its lower bound next to near-duplicate points).
  for (double relative = 0;; relative = relative == 0 ? 1e-10 : relative * 10) {
    Eigen::MatrixXd noisy = kernel;
    noisy.diagonal().array() += noise + relative * signal;
    Eigen::LLT<Eigen::MatrixXd> llt(noisy);
    if (llt.info() == Eigen::Success || relative >= 1) {
      l = llt.matrixL();
      break;
    }
  }
  SolveAlpha();
}

void GaussianProcess::State::CrossKernel(const double* u, Eigen::VectorXd* k,
                                         Eigen::VectorXd* g) const {
  const Eigen::Index n = x.cols();
  const Eigen::Index dims = x.rows();
  k->resize(n);
  g->resize(n);
  for (Eigen::Index j = 0; j < n; ++j) {
    double r2 = 0;
    for (Eigen::Index p = 0; p < dims; ++p) {
      double d = CoordinateDistance(u[p], x(p, j), categorical[static_cast<size_t>(p)]);
      r2 += d * d * inverse_l2[p];
    }
    Matern52(r2, &(*k)[j], &(*g)[j]);
  }
  *k *= signal;
  *g *= signal;
}

GaussianProcess::GaussianProcess(std::unique_ptr<State> state) : state_(std::move(state)) {}
GaussianProcess::GaussianProcess(GaussianProcess&&) noexcept = default;
GaussianProcess& GaussianProcess::operator=(GaussianProcess&&) noexcept = default;
GaussianProcess::~GaussianProcess() = default;

double GaussianProcess::NegativeLogPosterior(std::span<const double> x, std::span<const double> z,
                                             const std::vector<bool>& categorical,
                                             std::span<const double> theta,
                                             std::vector<double>* gradient) {
  const Eigen::Index dims = static_cast<Eigen::Index>(categorical.size());
  const Eigen::Index n = static_cast<Eigen::Index>(z.size());
  Eigen::VectorXd g;
  double value = NegativeLogPosteriorFrom(
      SquaredDistances(ConstMap(x.data(), dims, n), categorical), ConstVectorMap(z.data(), n),
      PriorFor(dims), ConstVectorMap(theta.data(), static_cast<Eigen::Index>(theta.size())),
      gradient ? &g : nullptr);
  if (gradient) gradient->assign(g.data(), g.data() + g.size());
  return value;
}

GaussianProcess GaussianProcess::WithHyperparameters(std::span<const double> x,
                                                     std::span<const double> y,
                                                     const std::vector<bool>& categorical,
                                                     const GpHyperparameters& hyperparameters) {
  auto state = std::make_unique<State>();
  const Eigen::Index dims = static_cast<Eigen::Index>(categorical.size());
  const Eigen::Index n = static_cast<Eigen::Index>(y.size());
  state->x = ConstMap(x.data(), dims, n);
  state->categorical = categorical;
  ConstVectorMap outputs(y.data(), n);
  state->y_mean = n > 0 ? outputs.mean() : 0;
  double variance =
      n > 1 ? (outputs.array() - state->y_mean).square().sum() / static_cast<double>(n - 1) : 0;
  state->y_scale = variance > 1e-24 ? std::sqrt(variance) : 1;
  state->z = (outputs.array() - state->y_mean) / state->y_scale;
  state->hyper = hyperparameters;
  state->Condition();
  return GaussianProcess(std::move(state));
}

GaussianProcess GaussianProcess::Fit(std::span<const double> x, std::span<const double> y,
                                     const std::vector<bool>& categorical, std::mt19937_64& rng,
                                     const GpFitOptions& options) {
  const Eigen::Index dims = static_cast<Eigen::Index>(categorical.size());
  Prior prior = PriorFor(dims);
  GaussianProcess gp = WithHyperparameters(x, y, categorical, Unpack(prior.mean));
  std::vector<Eigen::MatrixXd> d2 = SquaredDistances(gp.state_->x, categorical);
  const Eigen::VectorXd& z = gp.state_->z;
  BoxObjective objective = [&](const Eigen::VectorXd& theta, Eigen::VectorXd* gradient) {
    return NegativeLogPosteriorFrom(d2, z, prior, theta, gradient);
  };
  LbfgsOptions lbfgs{.max_iterations = options.max_iterations,
                     .gradient_tolerance = 1e-5,
                     .relative_tolerance = 1e-9};
  std::normal_distribution<double> normal;
  LbfgsResult best{.x = prior.mean, .value = std::numeric_limits<double>::infinity()};
  for (int start = 0; start <= options.random_starts; ++start) {
    Eigen::VectorXd theta0 = prior.mean;
    if (start > 0) {
      for (Eigen::Index p = 0; p < theta0.size(); ++p) theta0[p] += prior.scale[p] * normal(rng);
    }
    LbfgsResult result = MinimizeInBox(objective, theta0, prior.lower, prior.upper, lbfgs);
    if (result.value < best.value) best = std::move(result);
  }
  gp.state_->hyper = Unpack(best.x);
  gp.state_->Condition();
  return gp;
}

int GaussianProcess::dimensions() const { return static_cast<int>(state_->x.rows()); }
int GaussianProcess::observations() const { return static_cast<int>(state_->x.cols()); }

GpPrediction GaussianProcess::Predict(std::span<const double> u, bool gradients) const {
  const State& s = *state_;
  GpPrediction out;
  Eigen::VectorXd k;
  Eigen::VectorXd g;
  s.CrossKernel(u.data(), &k, &g);
  out.mean = k.dot(s.alpha);
  Eigen::VectorXd v = s.l.triangularView<Eigen::Lower>().solve(k);
  out.variance = std::max(s.signal - v.squaredNorm(), 0.0);
  if (!gradients) return out;
  // For a numeric coordinate p, dk_j/du_p = -s^2 g(r_j) (u_p - x_pj) / l_p^2;
  // d mean = alpha . dk and d variance = -2 (K^-1 k) . dk.
  Eigen::VectorXd w = s.l.triangularView<Eigen::Lower>().transpose().solve(v);
  Eigen::VectorXd a = -s.alpha.cwiseProduct(g);
  Eigen::VectorXd b = 2 * w.cwiseProduct(g);
  const Eigen::Index dims = s.x.rows();
  out.mean_gradient.assign(static_cast<size_t>(dims), 0.0);
  out.variance_gradient.assign(static_cast<size_t>(dims), 0.0);
  for (Eigen::Index p = 0; p < dims; ++p) {
    if (s.categorical[static_cast<size_t>(p)]) continue;
    Eigen::VectorXd diff = (u[static_cast<size_t>(p)] - s.x.row(p).transpose().array()).matrix();
    out.mean_gradient[static_cast<size_t>(p)] = a.dot(diff) * s.inverse_l2[p];
    out.variance_gradient[static_cast<size_t>(p)] = b.dot(diff) * s.inverse_l2[p];
  }
  return out;
}

void GaussianProcess::PredictMany(std::span<const double> u, std::vector<double>* mean,
                                  std::vector<double>* variance) const {
  const State& s = *state_;
  const Eigen::Index n = s.x.cols();
  const Eigen::Index dims = s.x.rows();
  const Eigen::Index m = static_cast<Eigen::Index>(u.size()) / std::max<Eigen::Index>(dims, 1);
  Eigen::MatrixXd cross(n, m);
  Eigen::VectorXd k;
  Eigen::VectorXd g;
  for (Eigen::Index c = 0; c < m; ++c) {
    s.CrossKernel(u.data() + c * dims, &k, &g);
    cross.col(c) = k;
  }
  Eigen::VectorXd means = cross.transpose() * s.alpha;
  s.l.triangularView<Eigen::Lower>().solveInPlace(cross);
  Eigen::RowVectorXd explained = cross.colwise().squaredNorm();
  mean->assign(means.data(), means.data() + m);
  variance->resize(static_cast<size_t>(m));
  for (Eigen::Index c = 0; c < m; ++c) {
    (*variance)[static_cast<size_t>(c)] = std::max(s.signal - explained[c], 0.0);
  }
}

void GaussianProcess::AddObservation(std::span<const double> u, double z) {
  State& s = *state_;
  const Eigen::Index n = s.x.cols();
  Eigen::VectorXd k;
  Eigen::VectorXd g;
  s.CrossKernel(u.data(), &k, &g);
  Eigen::VectorXd row = s.l.triangularView<Eigen::Lower>().solve(k);
  double corner = std::sqrt(std::max(s.signal - row.squaredNorm(), 0.0) + 1e-8 * s.signal);
  s.l.conservativeResize(n + 1, n + 1);
  s.l.row(n).head(n) = row.transpose();
  s.l.col(n).head(n).setZero();
  s.l(n, n) = corner;
  s.x.conservativeResize(Eigen::NoChange, n + 1);
  s.x.col(n) = ConstVectorMap(u.data(), s.x.rows());
  s.z.conservativeResize(n + 1);
  s.z[n] = z;
  s.SolveAlpha();
}

double GaussianProcess::Standardize(double y) const {
  return (y - state_->y_mean) / state_->y_scale;
}
double GaussianProcess::Unstandardize(double z) const {
  return state_->y_mean + z * state_->y_scale;
}
std::span<const double> GaussianProcess::input(int j) const {
  return {state_->x.col(j).data(), static_cast<size_t>(state_->x.rows())};
}
std::span<const double> GaussianProcess::standardized_outputs() const {
  return {state_->z.data(), static_cast<size_t>(state_->z.size())};
}
const GpHyperparameters& GaussianProcess::hyperparameters() const { return state_->hyper; }

}  // namespace trainyard::tune
