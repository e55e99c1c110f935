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
// dk/d(r^2) = -g(r) / 2, elementwise over an array of r^2 (most of a fit's
// time is here, once per kernel part and entry).
template <typename In, typename Out>
void Matern52(const Eigen::ArrayBase<In>& r2, Out* k, Out* g) {
  auto r = r2.sqrt().eval();
  auto e = (-kSqrt5 * r).exp().eval();
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

// Packed as theta: log l (d), log s^2, log noise, log l_add (d), log s_add^2.
Prior PriorFor(Eigen::Index dimensions) {
  Prior prior;
  const Eigen::Index size = 2 * dimensions + 3;
  prior.mean.resize(size);
  prior.scale.resize(size);
  prior.lower.resize(size);
  prior.upper.resize(size);
  auto set = [&](Eigen::Index p, double mean, double scale, double lower, double upper) {
    prior.mean[p] = mean;
    prior.scale[p] = scale;
    prior.lower[p] = std::log(lower);
    prior.upper[p] = std::log(upper);
  };
  for (Eigen::Index p = 0; p < dimensions; ++p) {
    set(p, std::numbers::sqrt2 + 0.5 * std::log(static_cast<double>(dimensions)), std::sqrt(3.0),
        1e-2, 1e2);
    // The additive part's lengthscales are each one coordinate's alone,
    // centred on the unit interval's length.
    set(dimensions + 2 + p, 0, std::sqrt(3.0), 1e-2, 1e2);
  }
  set(dimensions, 0, 1.5, 1e-2, 1e2);
  set(dimensions + 1, -5, 2, 1e-6, 2.0);
  set(2 * dimensions + 2, -1, 1.5, 1e-4, 1e2);
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
  const double additive = std::exp(theta[2 * dims + 2]) / static_cast<double>(dims);
  Eigen::VectorXd inverse_l2 = (-2 * theta.head(dims)).array().exp();
  Eigen::VectorXd inverse_a2 = (-2 * theta.segment(dims + 2, dims)).array().exp();
  Eigen::MatrixXd r2 = Eigen::MatrixXd::Zero(n, n);
  for (Eigen::Index p = 0; p < dims; ++p) r2 += inverse_l2[p] * d2[static_cast<size_t>(p)];
  Eigen::ArrayXXd k;
  Eigen::ArrayXXd g;
  Matern52(r2.array(), &k, &g);
  // The additive part: one Matérn of each coordinate alone, summed.
  std::vector<Eigen::ArrayXXd> ga(static_cast<size_t>(dims));
  Eigen::ArrayXXd ka = Eigen::ArrayXXd::Zero(n, n);
  for (Eigen::Index p = 0; p < dims; ++p) {
    Eigen::ArrayXXd kp;
    Matern52(inverse_a2[p] * d2[static_cast<size_t>(p)].array(), &kp, &ga[static_cast<size_t>(p)]);
    ka += kp;
  }
  Eigen::MatrixXd kernel = (signal * k + additive * ka).matrix();
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
    // dK/d log l_p = s^2 g(r) d_p^2 / l_p^2, and likewise for the additive
    // part with its own r_p and lengthscale.
    Eigen::ArrayXXd w =
        (alpha * alpha.transpose() - llt.solve(Eigen::MatrixXd::Identity(n, n))).array();
    gradient->resize(theta.size());
    Eigen::ArrayXXd wg = signal * w * g;
    for (Eigen::Index p = 0; p < dims; ++p) {
      const Eigen::ArrayXXd d = d2[static_cast<size_t>(p)].array();
      (*gradient)[p] = -0.5 * inverse_l2[p] * (wg * d).sum();
      (*gradient)[dims + 2 + p] =
          -0.5 * additive * inverse_a2[p] * (w * ga[static_cast<size_t>(p)] * d).sum();
    }
    (*gradient)[dims] = -0.5 * signal * (w * k).sum();
    (*gradient)[dims + 1] = -0.5 * noise * w.matrix().trace();
    (*gradient)[2 * dims + 2] = -0.5 * additive * (w * ka).sum();
    *gradient += from_prior.cwiseQuotient(prior.scale);
  }
  return value;
}

GpHyperparameters Unpack(const Eigen::VectorXd& theta) {
  const Eigen::Index dims = (theta.size() - 3) / 2;
  return {.log_lengthscales = std::vector<double>(theta.data(), theta.data() + dims),
          .log_signal = theta[dims],
          .log_noise = theta[dims + 1],
          .log_additive_lengthscales =
              std::vector<double>(theta.data() + dims + 2, theta.data() + 2 * dims + 2),
          .log_additive_signal = theta[2 * dims + 2]};
}

}  // namespace

struct GaussianProcess::State {
  Eigen::MatrixXd x;  // one column per observation
  Eigen::VectorXd z;  // standardised outputs
  std::vector<bool> categorical;
  GpHyperparameters hyper;
  Eigen::VectorXd inverse_l2;
  Eigen::VectorXd inverse_a2;  // the additive part's
  double signal = 1;
  double additive = 0;  // s_add^2 / d: each coordinate's share
  double noise = 0;
  double y_mean = 0;
  double y_scale = 1;
  Eigen::MatrixXd l;  // lower Cholesky factor of the kernel matrix plus noise I
  Eigen::VectorXd alpha;

  // The prior variance of f at any point: k(u, u).
  double PriorVariance() const { return signal + additive * static_cast<double>(x.rows()); }
  void Condition();
  // k(u, x_j) for every j; with `g`, also the factors of its gradient:
  // dk_j/du_p = -g(p, j) (u_p - x_pj).
  void CrossKernel(const double* u, Eigen::VectorXd* k, Eigen::MatrixXd* g) const;
  void SolveAlpha() {
    alpha = l.triangularView<Eigen::Lower>().transpose().solve(
        l.triangularView<Eigen::Lower>().solve(z));
  }
};

void GaussianProcess::State::Condition() {
  const Eigen::Index dims = x.rows();
  inverse_l2 = (-2 * ConstVectorMap(hyper.log_lengthscales.data(), dims)).array().exp();
  signal = std::exp(hyper.log_signal);
  noise = std::exp(hyper.log_noise);
  // Hyperparameters without the additive part's lengthscales have none.
  bool has_additive = static_cast<Eigen::Index>(hyper.log_additive_lengthscales.size()) == dims;
  inverse_a2 =
      has_additive
          ? Eigen::VectorXd(
                (-2 * ConstVectorMap(hyper.log_additive_lengthscales.data(), dims)).array().exp())
          : Eigen::VectorXd::Ones(dims);
  additive = has_additive ? std::exp(hyper.log_additive_signal) /
                                static_cast<double>(std::max<Eigen::Index>(dims, 1))
                          : 0.0;
  const Eigen::Index n = x.cols();
  Eigen::MatrixXd kernel(n, n);
  Eigen::VectorXd k;
  for (Eigen::Index j = 0; j < n; ++j) {
    CrossKernel(x.col(j).data(), &k, nullptr);
    kernel.col(j) = k;
  }
  // More jitter until the factorisation succeeds (at once, unless the noise
  // sits at its lower bound next to near-duplicate points).
  for (double relative = 0;; relative = relative == 0 ? 1e-10 : relative * 10) {
    Eigen::MatrixXd noisy = kernel;
    noisy.diagonal().array() += noise + relative * PriorVariance();
    Eigen::LLT<Eigen::MatrixXd> llt(noisy);
    if (llt.info() == Eigen::Success || relative >= 1) {
      l = llt.matrixL();
      break;
    }
  }
  SolveAlpha();
}

void GaussianProcess::State::CrossKernel(const double* u, Eigen::VectorXd* k,
                                         Eigen::MatrixXd* g) const {
  const Eigen::Index n = x.cols();
  const Eigen::Index dims = x.rows();
  // Coordinate differences, one row per coordinate.
  Eigen::ArrayXXd d(dims, n);
  for (Eigen::Index p = 0; p < dims; ++p) {
    d.row(p) = u[p] - x.row(p).array();
    if (categorical[static_cast<size_t>(p)]) d.row(p) = (d.row(p).abs() > 1e-12).cast<double>();
  }
  Eigen::ArrayXXd squared = d.square();
  Eigen::Array<double, 1, Eigen::Dynamic> r2 =
      (squared.colwise() * inverse_l2.array()).colwise().sum();
  Eigen::Array<double, 1, Eigen::Dynamic> kj;
  Eigen::Array<double, 1, Eigen::Dynamic> gj;
  Matern52(r2, &kj, &gj);
  Eigen::Array<double, 1, Eigen::Dynamic> sum = signal * kj;
  if (g) g->resize(dims, n);
  for (Eigen::Index p = 0; p < dims; ++p) {
    Eigen::Array<double, 1, Eigen::Dynamic> kp;
    Eigen::Array<double, 1, Eigen::Dynamic> gp;
    Matern52((inverse_a2[p] * squared.row(p)).eval(), &kp, &gp);
    sum += additive * kp;
    if (g) g->row(p) = (signal * inverse_l2[p] * gj + additive * inverse_a2[p] * gp).matrix();
  }
  *k = sum.matrix().transpose();
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
  if (static_cast<Eigen::Index>(theta.size()) != 2 * dims + 3) {
    return std::numeric_limits<double>::infinity();
  }
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
  Eigen::MatrixXd g;
  s.CrossKernel(u.data(), &k, gradients ? &g : nullptr);
  out.mean = k.dot(s.alpha);
  Eigen::VectorXd v = s.l.triangularView<Eigen::Lower>().solve(k);
  out.variance = std::max(s.PriorVariance() - v.squaredNorm(), 0.0);
  if (!gradients) return out;
  // For a numeric coordinate p, dk_j/du_p = -g(p, j) (u_p - x_pj);
  // d mean = alpha . dk and d variance = -2 (K^-1 k) . dk.
  Eigen::VectorXd w = s.l.triangularView<Eigen::Lower>().transpose().solve(v);
  const Eigen::Index dims = s.x.rows();
  out.mean_gradient.assign(static_cast<size_t>(dims), 0.0);
  out.variance_gradient.assign(static_cast<size_t>(dims), 0.0);
  for (Eigen::Index p = 0; p < dims; ++p) {
    if (s.categorical[static_cast<size_t>(p)]) continue;
    Eigen::VectorXd dk = -(u[static_cast<size_t>(p)] - s.x.row(p).transpose().array()).matrix();
    dk = dk.cwiseProduct(g.row(p).transpose());
    out.mean_gradient[static_cast<size_t>(p)] = s.alpha.dot(dk);
    out.variance_gradient[static_cast<size_t>(p)] = -2 * w.dot(dk);
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
  for (Eigen::Index c = 0; c < m; ++c) {
    s.CrossKernel(u.data() + c * dims, &k, nullptr);
    cross.col(c) = k;
  }
  Eigen::VectorXd means = cross.transpose() * s.alpha;
  s.l.triangularView<Eigen::Lower>().solveInPlace(cross);
  Eigen::RowVectorXd explained = cross.colwise().squaredNorm();
  mean->assign(means.data(), means.data() + m);
  variance->resize(static_cast<size_t>(m));
  for (Eigen::Index c = 0; c < m; ++c) {
    (*variance)[static_cast<size_t>(c)] = std::max(s.PriorVariance() - explained[c], 0.0);
  }
}

void GaussianProcess::AddObservation(std::span<const double> u, double z) {
  State& s = *state_;
  const Eigen::Index n = s.x.cols();
  Eigen::VectorXd k;
  s.CrossKernel(u.data(), &k, nullptr);
  Eigen::VectorXd row = s.l.triangularView<Eigen::Lower>().solve(k);
  double prior = s.PriorVariance();
  double corner = std::sqrt(std::max(prior - row.squaredNorm(), 0.0) + 1e-8 * prior);
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
