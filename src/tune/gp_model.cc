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
// dk/d(r^2) = -g(r) / 2, elementwise over an array of r^2 (the joint part's).
template <typename In, typename Out>
void Matern52(const Eigen::ArrayBase<In>& r2, Out* k, Out* g) {
  auto r = r2.sqrt().eval();
  auto e = (-kSqrt5 * r).exp().eval();
  *k = (1 + kSqrt5 * r + 5.0 / 3.0 * r2) * e;
  *g = 5.0 / 3.0 * (1 + kSqrt5 * r) * e;
}

// exp(-c |u - v_i|) for many v_i without an exp each, given e^{cu}, e^{-cu}
// and every e^{c v_i}, e^{-c v_i}: it is the smaller of e^{-cu} e^{c v_i} and
// e^{cu} e^{-c v_i}, whose product is 1. The additive part needs one such
// value per coordinate and kernel entry; Eigen's exp costs ~5 ns a value on
// baseline x86-64 (SSE2), most of a suggestion's time at d = 20, and two
// products and a min a fifth of that. For coordinates in [0, 1] the factors
// stay well inside double's range while c <= kMaxProductRate; the fit's
// bounds (a >= 0.01) keep c <= 224, and a larger c takes exp directly.
constexpr double kMaxProductRate = 500;
template <typename Rising, typename Falling>
auto ExpOfDistance(double u_rising, double u_falling, const Eigen::ArrayBase<Rising>& rising,
                   const Eigen::ArrayBase<Falling>& falling) {
  return (u_falling * rising).min(u_rising * falling);
}

// The additive part's Matérn of r = |d| / a, given e = exp(-sqrt(5) r).
template <typename R, typename E>
auto AdditiveMatern(const Eigen::ArrayBase<R>& r, const Eigen::ArrayBase<E>& e) {
  return (1 + kSqrt5 * r + 5.0 / 3.0 * r.square()) * e;
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

// The distinct pairs (i, j), i > j, of n observations, one row each (column
// j's pairs, then column j + 1's), with each coordinate's squared and
// absolute difference. The kernel matrix is symmetric and its diagonal is
// known, so a fit evaluates its Matérns on these n(n - 1) / 2 rows only; the
// additive part's r_p = |d_p| / a_p then needs no square root.
struct PairDistances {
  Eigen::Index n = 0;
  Eigen::MatrixXd squared;   // pairs x coordinates
  Eigen::MatrixXd absolute;  // pairs x coordinates
  Eigen::ArrayXXd points;    // n x coordinates
  std::vector<bool> categorical;
};

PairDistances PairDistancesOf(const Eigen::MatrixXd& x, const std::vector<bool>& categorical) {
  const Eigen::Index n = x.cols();
  const Eigen::Index pairs = n * (n - 1) / 2;
  PairDistances out{.n = n,
                    .squared = Eigen::MatrixXd(pairs, x.rows()),
                    .absolute = Eigen::MatrixXd(pairs, x.rows()),
                    .points = x.transpose().array(),
                    .categorical = categorical};
  for (Eigen::Index p = 0; p < x.rows(); ++p) {
    bool is_categorical = categorical[static_cast<size_t>(p)];
    Eigen::Index row = 0;
    for (Eigen::Index j = 0; j < n; ++j) {
      for (Eigen::Index i = j + 1; i < n; ++i, ++row) {
        double d = CoordinateDistance(x(p, i), x(p, j), is_categorical);
        out.absolute(row, p) = std::abs(d);
        out.squared(row, p) = d * d;
      }
    }
  }
  return out;
}

// Buffers one fit reuses across its many evaluations, per pair (k: the joint
// Matérn, g: its gradient factor, ka: the additive sum, h: each coordinate's
// g_p r_p^2, w: the entries of W below) and per entry of the kernel matrix.
struct FitWorkspace {
  Eigen::ArrayXd k, g, ka, w;
  Eigen::ArrayXXd h;
  Eigen::MatrixXd kernel;     // its lower triangle, then the Cholesky factor's
  Eigen::MatrixXd inverse_l;  // L^-1
  Eigen::MatrixXd inverse;    // K^-1's lower triangle
};

// K^-1 = L^-T L^-1 (its lower triangle) from K's lower Cholesky factor L,
// one block of columns at a time, each on the rows at and below the block
// alone: L^-1 is lower triangular too, and a solve against the whole
// identity, then a product of whole matrices, would spend three times the
// flops on its zeros (0.35 ms against 0.16 at n = 128, most of a fit step).
void InverseFromCholesky(const Eigen::MatrixXd& l, Eigen::MatrixXd* inverse_l,
                         Eigen::MatrixXd* inverse) {
  constexpr Eigen::Index kBlock = 32;
  const Eigen::Index n = l.rows();
  inverse_l->setZero(n, n);
  inverse->resize(n, n);
  for (Eigen::Index j = 0; j < n; j += kBlock) {
    const Eigen::Index width = std::min(kBlock, n - j);
    inverse_l->block(j, j, n - j, width).setIdentity();
    l.bottomRightCorner(n - j, n - j)
        .triangularView<Eigen::Lower>()
        .solveInPlace(inverse_l->block(j, j, n - j, width));
  }
  for (Eigen::Index j = 0; j < n; j += kBlock) {
    const Eigen::Index width = std::min(kBlock, n - j);
    // Column c of L^-1 is zero above row c, so rows j on suffice.
    inverse->block(j, j, n - j, width).noalias() =
        inverse_l->bottomRightCorner(n - j, n - j).triangularView<Eigen::Lower>().transpose() *
        inverse_l->block(j, j, n - j, width);
  }
}

// Writes value (off the diagonal) and diagonal into the lower triangle of
// the n x n `kernel`, in PairDistances' order.
void FillLowerTriangle(const Eigen::ArrayXd& pair_values, double diagonal,
                       Eigen::MatrixXd* kernel) {
  const Eigen::Index n = kernel->rows();
  Eigen::Index row = 0;
  for (Eigen::Index j = 0; j < n; ++j) {
    (*kernel)(j, j) = diagonal;
    kernel->col(j).tail(n - j - 1) = pair_values.segment(row, n - j - 1).matrix();
    row += n - j - 1;
  }
}

// exp(-c |x_ip - x_jp|) on every pair, into `e`: by ExpOfDistance for a
// numeric coordinate, from the 0/1 distances for a categorical one.
void PairExps(const PairDistances& pairs, Eigen::Index p, double c, Eigen::ArrayXd* e) {
  if (pairs.categorical[static_cast<size_t>(p)] || c > kMaxProductRate) {
    *e = (-c * pairs.absolute.col(p).array()).exp();
    return;
  }
  Eigen::ArrayXd rising = (c * pairs.points.col(p)).exp();
  Eigen::ArrayXd falling = rising.inverse();
  const Eigen::Index n = pairs.n;
  e->resize(pairs.absolute.rows());
  Eigen::Index row = 0;
  for (Eigen::Index j = 0; j < n; ++j) {
    const Eigen::Index below = n - j - 1;
    e->segment(row, below) =
        ExpOfDistance(rising[j], falling[j], rising.tail(below), falling.tail(below));
    row += below;
  }
}

// The joint Matérn on every pair, and the additive part's sum, into `ws`.
void PairKernels(const PairDistances& pairs, const Eigen::VectorXd& inverse_l2,
                 const Eigen::VectorXd& inverse_a, FitWorkspace* ws) {
  Eigen::ArrayXd r2 = (pairs.squared * inverse_l2).array();
  Matern52(r2, &ws->k, &ws->g);
  const Eigen::Index dims = pairs.squared.cols();
  ws->ka.setZero(r2.size());
  ws->h.resize(r2.size(), dims);
  Eigen::ArrayXd e;
  for (Eigen::Index p = 0; p < dims; ++p) {
    Eigen::ArrayXd r = inverse_a[p] * pairs.absolute.col(p).array();
    PairExps(pairs, p, kSqrt5 * inverse_a[p], &e);
    ws->ka += AdditiveMatern(r, e);
    ws->h.col(p) = 5.0 / 3.0 * (1 + kSqrt5 * r) * e * r.square();
  }
}

// W = alpha alpha^T - K^-1 on the pairs (into ws->w) and its diagonal, from
// the Cholesky factor in ws->kernel: K^-1 = L^-T L^-1.
Eigen::VectorXd PairsOfW(const Eigen::VectorXd& alpha, FitWorkspace* ws) {
  const Eigen::Index n = alpha.size();
  InverseFromCholesky(ws->kernel, &ws->inverse_l, &ws->inverse);
  ws->w.resize(n * (n - 1) / 2);
  Eigen::Index row = 0;
  for (Eigen::Index j = 0; j < n; ++j) {
    const Eigen::Index below = n - j - 1;
    ws->w.segment(row, below) =
        alpha.tail(below).array() * alpha[j] - ws->inverse.col(j).tail(below).array();
    row += below;
  }
  return alpha.cwiseAbs2() - ws->inverse.diagonal();
}

double NegativeLogPosteriorFrom(const PairDistances& pairs, const Eigen::VectorXd& z,
                                const Prior& prior, const Eigen::VectorXd& theta,
                                Eigen::VectorXd* gradient, FitWorkspace* ws) {
  const Eigen::Index dims = pairs.squared.cols();
  const Eigen::Index n = z.size();
  const double signal = std::exp(theta[dims]);
  const double noise = std::exp(theta[dims + 1]);
  const double additive = std::exp(theta[2 * dims + 2]) / static_cast<double>(dims);
  Eigen::VectorXd inverse_l2 = (-2 * theta.head(dims)).array().exp();
  Eigen::VectorXd inverse_a = (-theta.segment(dims + 2, dims)).array().exp();
  PairKernels(pairs, inverse_l2, inverse_a, ws);
  // Each Matérn is 1 at distance 0: the diagonal is s^2 + s_add^2 + noise.
  ws->kernel.resize(n, n);
  FillLowerTriangle(signal * ws->k + additive * ws->ka,
                    signal + additive * static_cast<double>(dims) + noise, &ws->kernel);
  Eigen::LLT<Eigen::Ref<Eigen::MatrixXd>> llt(ws->kernel);  // in place, lower triangle
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
    // part with its own r_p and lengthscale. W and dK/d theta are symmetric,
    // so the trace is twice the sum over the pairs plus the diagonal's, where
    // only s^2, s_add^2 and the noise act (every distance there is 0).
    Eigen::VectorXd w_diagonal = PairsOfW(alpha, ws);
    const double w_trace = w_diagonal.sum();
    gradient->resize(theta.size());
    gradient->head(dims) =
        -signal * inverse_l2.cwiseProduct(pairs.squared.transpose() * (ws->w * ws->g).matrix());
    (*gradient)[dims] = -0.5 * signal * (2 * (ws->w * ws->k).sum() + w_trace);
    (*gradient)[dims + 1] = -0.5 * noise * w_trace;
    gradient->segment(dims + 2, dims) = -additive * (ws->h.matrix().transpose() * ws->w.matrix());
    (*gradient)[2 * dims + 2] =
        -0.5 * additive * (2 * (ws->w * ws->ka).sum() + static_cast<double>(dims) * w_trace);
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
  // x transposed, one row per observation: each coordinate's values lie
  // together, so the cross kernel's arithmetic runs on contiguous columns.
  Eigen::MatrixXd by_coordinate;
  Eigen::VectorXd z;  // standardised outputs
  std::vector<bool> categorical;
  GpHyperparameters hyper;
  Eigen::VectorXd inverse_l2;
  Eigen::VectorXd inverse_a;  // the additive part's 1 / a_j
  // e^{c_p x_pj} and e^{-c_p x_pj}, c_p = sqrt(5) / a_p, one row per
  // observation: the factors ExpOfDistance needs.
  Eigen::ArrayXXd rising;
  Eigen::ArrayXXd falling;
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
  void SetRisingAndFalling();
  // k(u, x_j) for every j from `first` on; with `g`, also the factors of its
  // gradient: dk_j/du_p = -g(j, p) (u_p - x_pj).
  void CrossKernel(const double* u, Eigen::VectorXd* k, Eigen::MatrixXd* g,
                   Eigen::Index first = 0) const;
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
  inverse_a =
      has_additive
          ? Eigen::VectorXd(
                (-ConstVectorMap(hyper.log_additive_lengthscales.data(), dims)).array().exp())
          : Eigen::VectorXd::Ones(dims);
  additive = has_additive ? std::exp(hyper.log_additive_signal) /
                                static_cast<double>(std::max<Eigen::Index>(dims, 1))
                          : 0.0;
  SetRisingAndFalling();
  const Eigen::Index n = x.cols();
  // The lower triangle only: the factorisation reads no more.
  Eigen::MatrixXd kernel = Eigen::MatrixXd::Zero(n, n);
  Eigen::VectorXd k;
  for (Eigen::Index j = 0; j < n; ++j) {
    CrossKernel(x.col(j).data(), &k, nullptr, j);
    kernel.col(j).tail(n - j) = k;
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

void GaussianProcess::State::SetRisingAndFalling() {
  rising = (by_coordinate.array().rowwise() * (kSqrt5 * inverse_a.array()).transpose()).exp();
  falling = rising.inverse();
}

void GaussianProcess::State::CrossKernel(const double* u, Eigen::VectorXd* k, Eigen::MatrixXd* g,
                                         Eigen::Index first) const {
  const Eigen::Index n = by_coordinate.rows() - first;
  const Eigen::Index dims = by_coordinate.cols();
  auto points = by_coordinate.bottomRows(n);
  // Absolute coordinate differences, one column per coordinate (the
  // gradient factors below carry no sign).
  Eigen::ArrayXXd d(n, dims);
  for (Eigen::Index p = 0; p < dims; ++p) {
    d.col(p) = (u[p] - points.col(p).array()).abs();
    if (categorical[static_cast<size_t>(p)]) d.col(p) = (d.col(p) > 1e-12).cast<double>();
  }
  Eigen::ArrayXd r2 = (d.square().matrix() * inverse_l2).array();
  Eigen::ArrayXd kj;
  Eigen::ArrayXd gj;
  Matern52(r2, &kj, &gj);
  Eigen::ArrayXd sum = signal * kj;
  if (g) g->resize(n, dims);
  // The additive part's Matérns from r_p = |d_p| / a_p directly.
  Eigen::ArrayXd r(n);
  Eigen::ArrayXd e(n);
  for (Eigen::Index p = 0; p < dims; ++p) {
    r = inverse_a[p] * d.col(p);
    double c = kSqrt5 * inverse_a[p];
    if (categorical[static_cast<size_t>(p)] || c > kMaxProductRate) {
      e = (-kSqrt5 * r).exp();
    } else {
      e = ExpOfDistance(std::exp(c * u[p]), std::exp(-c * u[p]), rising.col(p).tail(n),
                        falling.col(p).tail(n));
    }
    sum += additive * AdditiveMatern(r, e);
    if (g) {
      g->col(p) = (signal * inverse_l2[p] * gj +
                   additive * inverse_a[p] * inverse_a[p] * 5.0 / 3.0 * (1 + kSqrt5 * r) * e)
                      .matrix();
    }
  }
  *k = sum.matrix();
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
  FitWorkspace workspace;
  double value = NegativeLogPosteriorFrom(
      PairDistancesOf(ConstMap(x.data(), dims, n), categorical), ConstVectorMap(z.data(), n),
      PriorFor(dims), ConstVectorMap(theta.data(), static_cast<Eigen::Index>(theta.size())),
      gradient ? &g : nullptr, &workspace);
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
  state->by_coordinate = state->x.transpose();
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
  PairDistances pairs = PairDistancesOf(gp.state_->x, categorical);
  const Eigen::VectorXd& z = gp.state_->z;
  FitWorkspace workspace;
  BoxObjective objective = [&](const Eigen::VectorXd& theta, Eigen::VectorXd* gradient) {
    return NegativeLogPosteriorFrom(pairs, z, prior, theta, gradient, &workspace);
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
  // For a numeric coordinate p, dk_j/du_p = -g(j, p) (u_p - x_pj);
  // d mean = alpha . dk and d variance = -2 (K^-1 k) . dk.
  Eigen::VectorXd w = s.l.triangularView<Eigen::Lower>().transpose().solve(v);
  const Eigen::Index dims = s.x.rows();
  out.mean_gradient.assign(static_cast<size_t>(dims), 0.0);
  out.variance_gradient.assign(static_cast<size_t>(dims), 0.0);
  for (Eigen::Index p = 0; p < dims; ++p) {
    if (s.categorical[static_cast<size_t>(p)]) continue;
    Eigen::VectorXd dk = -(u[static_cast<size_t>(p)] - s.by_coordinate.col(p).array()).matrix();
    dk = dk.cwiseProduct(g.col(p));
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
  s.by_coordinate.conservativeResize(n + 1, Eigen::NoChange);
  s.by_coordinate.row(n) = s.x.col(n).transpose();
  s.rising.conservativeResize(n + 1, Eigen::NoChange);
  s.rising.row(n) = (s.x.col(n).array() * kSqrt5 * s.inverse_a.array()).exp().transpose();
  s.falling.conservativeResize(n + 1, Eigen::NoChange);
  s.falling.row(n) = s.rising.row(n).inverse();
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
