#include "tune/gp_search.h"

#include <Eigen/Dense>
#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <limits>

#include "tune/gp_lbfgs.h"

namespace trainyard::tune {
namespace {

constexpr int kLocalStarts = 5;
constexpr int kLocalIterations = 50;
// Candidates near the best points: normal steps of these sizes (in the unit
// cube); a categorical coordinate is redrawn with probability kRedraw.
constexpr std::array<double, 3> kSpread = {0.02, 0.08, 0.25};
constexpr double kRedraw = 0.2;

}  // namespace

AcquisitionSearch::AcquisitionSearch(const Space& space, AcquisitionSearchOptions options,
                                     std::vector<Point> best_points, std::mt19937_64& rng)
    : space_(space), options_(options), best_points_(std::move(best_points)) {
  for (size_t i = 0; i < space_.size(); ++i) {
    categorical_.push_back(space_[i].type == ParameterType::kCategorical);
  }
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::normal_distribution<double> normal;
  candidates_.reserve(static_cast<size_t>(options_.candidates));
  for (int c = 0; c < options_.candidates; ++c) {
    Point u(space_.size());
    if (c % 2 == 0 || best_points_.empty()) {
      for (double& v : u) v = uniform(rng);
    } else {
      size_t near = static_cast<size_t>(c / 2);
      u = best_points_[near % best_points_.size()];
      double spread = kSpread[near % kSpread.size()];
      for (size_t p = 0; p < u.size(); ++p) {
        if (categorical_[p]) {
          if (uniform(rng) < kRedraw) u[p] = uniform(rng);
        } else {
          u[p] = std::clamp(u[p] + spread * normal(rng), 0.0, 1.0);
        }
      }
    }
    candidates_.push_back(Canonical(u));
  }
}

void AcquisitionSearch::Predict(const GaussianProcess& gp, std::vector<double>* mean,
                                std::vector<double>* variance) const {
  std::vector<double> flat;
  flat.reserve(candidates_.size() * space_.size());
  for (const Point& u : candidates_) flat.insert(flat.end(), u.begin(), u.end());
  gp.PredictMany(flat, mean, variance);
}

std::optional<Point> AcquisitionSearch::Next(const GaussianProcess& gp, Acquisition acquisition,
                                             double best,
                                             const std::set<std::string>& taken) const {
  std::vector<double> mean;
  std::vector<double> variance;
  Predict(gp, &mean, &variance);
  return Search(gp, acquisition, {.best = best}, mean, variance, taken);
}

std::optional<Point> AcquisitionSearch::Hedge(const GaussianProcess& gp, double best,
                                              const std::set<std::string>& taken,
                                              std::mt19937_64& rng) const {
  std::vector<double> mean;
  std::vector<double> variance;
  Predict(gp, &mean, &variance);
  std::vector<Point> proposals;
  std::vector<double> gains;
  for (Acquisition a : {Acquisition::kEi, Acquisition::kLcb, Acquisition::kPi}) {  // skopt's order
    std::optional<Point> u = Search(gp, a, {.best = best}, mean, variance, taken);
    if (!u) continue;
    gains.push_back(-gp.Predict(*u).mean);
    proposals.push_back(std::move(*u));
  }
  if (proposals.empty()) return std::nullopt;
  double top = *std::max_element(gains.begin(), gains.end());
  std::vector<double> weights;
  for (double g : gains) weights.push_back(std::exp(g - top));
  std::discrete_distribution<size_t> pick(weights.begin(), weights.end());
  return proposals[pick(rng)];
}

std::optional<Point> AcquisitionSearch::Search(const GaussianProcess& gp, Acquisition acquisition,
                                               const AcquisitionParams& params,
                                               const std::vector<double>& mean,
                                               const std::vector<double>& variance,
                                               const std::set<std::string>& taken) const {
  std::vector<Scored> pool;
  pool.reserve(candidates_.size());
  for (size_t c = 0; c < candidates_.size(); ++c) {
    pool.push_back({AcquisitionLoss(acquisition, params, mean[c], variance[c]), candidates_[c]});
  }
  auto by_score = [](const Scored& a, const Scored& b) { return a.score < b.score; };
  std::stable_sort(pool.begin(), pool.end(), by_score);
  if (options_.local_search) {
    std::vector<Point> starts;
    for (const Scored& s : pool) {
      if (static_cast<int>(starts.size()) == kLocalStarts) break;
      if (std::find(starts.begin(), starts.end(), s.unit) == starts.end()) starts.push_back(s.unit);
    }
    // EI and PI often peak right next to the incumbent.
    if (acquisition != Acquisition::kLcb && !best_points_.empty()) {
      starts.push_back(best_points_.front());
    }
    std::vector<Scored> found;
    for (const Point& start : starts) {
      Point u = Canonical(LocalSearch(gp, acquisition, params, start));
      GpPrediction at = gp.Predict(u);
      found.push_back({AcquisitionLoss(acquisition, params, at.mean, at.variance), u});
    }
    std::stable_sort(found.begin(), found.end(), by_score);
    std::vector<Scored> merged;
    merged.reserve(pool.size() + found.size());
    std::merge(found.begin(), found.end(), pool.begin(), pool.end(), std::back_inserter(merged),
               by_score);
    pool = std::move(merged);
  }
  for (const Scored& s : pool) {
    if (!taken.contains(space_.Key(space_.FromUnit(s.unit)))) return s.unit;
  }
  return std::nullopt;
}

Point AcquisitionSearch::LocalSearch(const GaussianProcess& gp, Acquisition acquisition,
                                     const AcquisitionParams& params, const Point& start) const {
  const Eigen::Index dims = static_cast<Eigen::Index>(start.size());
  Eigen::VectorXd lower = Eigen::VectorXd::Zero(dims);
  Eigen::VectorXd upper = Eigen::VectorXd::Ones(dims);
  Eigen::VectorXd x0 = Eigen::Map<const Eigen::VectorXd>(start.data(), dims);
  bool free = false;
  for (Eigen::Index p = 0; p < dims; ++p) {
    if (categorical_[static_cast<size_t>(p)]) {
      lower[p] = upper[p] = x0[p];  // held
    } else {
      free = true;
    }
  }
  Point u = start;
  if (free) {
    BoxObjective objective = [&](const Eigen::VectorXd& x, Eigen::VectorXd* gradient) {
      GpPrediction at = gp.Predict({x.data(), static_cast<size_t>(x.size())}, true);
      double d_mean = 0;
      double d_variance = 0;
      double value =
          AcquisitionLoss(acquisition, params, at.mean, at.variance, &d_mean, &d_variance);
      gradient->resize(x.size());
      for (Eigen::Index p = 0; p < x.size(); ++p) {
        size_t q = static_cast<size_t>(p);
        (*gradient)[p] = d_mean * at.mean_gradient[q] + d_variance * at.variance_gradient[q];
      }
      return value;
    };
    Eigen::VectorXd x =
        MinimizeInBox(objective, x0, lower, upper,
                      {.max_iterations = kLocalIterations, .gradient_tolerance = 1e-7})
            .x;
    u.assign(x.data(), x.data() + x.size());
  }
  for (size_t p = 0; p < u.size(); ++p) {
    if (!categorical_[p]) continue;
    int64_t k = *space_.Cardinality(p);
    double best_score = std::numeric_limits<double>::infinity();
    double best_value = u[p];
    for (int64_t j = 0; j < k; ++j) {
      u[p] = space_.ToUnit(p, static_cast<double>(j));
      GpPrediction at = gp.Predict(u);
      double score = AcquisitionLoss(acquisition, params, at.mean, at.variance);
      if (score < best_score) {
        best_score = score;
        best_value = u[p];
      }
    }
    u[p] = best_value;
  }
  return u;
}

}  // namespace trainyard::tune
