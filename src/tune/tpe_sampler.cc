// tpe and multivariate-tpe: the tree-structured Parzen estimator.
//
// Finished trials with a loss are split into the best n_below ("below") and
// the rest ("above"); a Parzen estimator is fitted to each, and of
// n_ei_candidates draws from below's the one maximising
// log l(x) - log g(x) is suggested. `tpe` keeps hyperopt's settings and
// split (n_below = ceil(gamma sqrt(n)), at most 25) and models each
// parameter on its own; `multivariate-tpe` keeps Optuna's (n_below =
// min(ceil(0.1 n), 25)) and models the parameters jointly, as Katib's Optuna
// service configures it.
//
// Both are constant liars: pending trials, and the points already chosen for
// the same batch, join "above", so a batch spreads out instead of repeating
// one point (hyperopt's tpe, as Katib drives it, does not: §8 item 23 of the
// Katib reference). Until n_startup finished trials exist, points come from
// the prior. Older observations weigh less once there are more than 25
// (Optuna's default_weights, hyperopt's linear forgetting).
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "tune/history_rng.h"
#include "tune/samplers.h"
#include "tune/settings.h"
#include "tune/tpe_parzen.h"

namespace trainyard::tune {
namespace {

constexpr int kForgetAfter = 25;

struct TpeConfig {
  bool multivariate = true;
  bool hyperopt_gamma = false;  // ceil(gamma sqrt n) instead of ceil(0.1 n)
  double gamma = 0.1;
  double prior_weight = 1.0;
  int startup = 10;
  int candidates = 24;
  uint64_t seed = 0;
};

// Weights by age: 1 for the newest 25, a ramp from 1/n up for older ones.
std::vector<double> AgeWeights(size_t n) {
  std::vector<double> w(n, 1.0);
  if (n <= kForgetAfter) return w;
  size_t ramp = n - kForgetAfter;
  for (size_t k = 0; k < ramp; ++k) {
    double start = 1.0 / static_cast<double>(n);
    w[k] = ramp == 1 ? start : start + (1 - start) * static_cast<double>(k) / (ramp - 1.0);
  }
  return w;
}

class TpeSampler : public Sampler {
 public:
  TpeSampler(Space space, TpeConfig config) : space_(std::move(space)), config_(config) {}

  Result<SuggestResult> Suggest(std::span<const TrialRecord> trials, int count) override {
    // In creation order: finished trials with a loss, then everything pending.
    std::vector<Observation> finished;
    std::vector<size_t> pending;
    for (size_t t = 0; t < trials.size(); ++t) {
      const TrialRecord& trial = trials[t];
      bool told =
          trial.loss && std::isfinite(*trial.loss) &&
          (trial.state == TrialState::kSucceeded || trial.state == TrialState::kEarlyStopped);
      if (told) finished.push_back({t, *trial.loss});
      if (trial.state == TrialState::kPending) pending.push_back(t);
    }
    std::mt19937_64 rng = HistoryRng(config_.seed, trials.size());
    std::vector<Point> batch;
    SuggestResult result;
    for (int k = 0; k < count; ++k) {
      Point point = static_cast<int>(finished.size()) < config_.startup
                        ? FromPrior(rng)
                        : FromModel(trials, finished, pending, batch, rng);
      batch.push_back(point);
      result.suggestions.push_back({.point = std::move(point), .labels = {}});
    }
    return result;
  }

 private:
  struct Observation {
    size_t trial;
    double loss;
  };

  Point FromPrior(std::mt19937_64& rng) const {
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    Point unit(space_.size());
    for (double& u : unit) u = uniform(rng);
    return space_.FromUnit(unit);
  }

  size_t BelowCount(size_t n) const {
    double below = config_.hyperopt_gamma
                       ? std::ceil(config_.gamma * std::sqrt(static_cast<double>(n)))
                       : std::ceil(config_.gamma * static_cast<double>(n));
    return std::min<size_t>(static_cast<size_t>(below), kForgetAfter);
  }

  Point FromModel(std::span<const TrialRecord> trials, const std::vector<Observation>& finished,
                  const std::vector<size_t>& pending, const std::vector<Point>& batch,
                  std::mt19937_64& rng) const {
    // Best first; ties by age, so the split is a function of the history.
    std::vector<Observation> ranked = finished;
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const Observation& a, const Observation& b) { return a.loss < b.loss; });
    size_t n_below = BelowCount(ranked.size());
    std::vector<size_t> below_ids;
    std::vector<size_t> above_ids;
    for (size_t r = 0; r < ranked.size(); ++r) {
      (r < n_below ? below_ids : above_ids).push_back(ranked[r].trial);
    }
    // Each group in creation order, for the age weights.
    std::sort(below_ids.begin(), below_ids.end());
    above_ids.insert(above_ids.end(), pending.begin(), pending.end());
    std::sort(above_ids.begin(), above_ids.end());
    std::vector<const Point*> below;
    std::vector<const Point*> above;
    for (size_t t : below_ids) below.push_back(&trials[t].point);
    for (size_t t : above_ids) above.push_back(&trials[t].point);
    for (const Point& p : batch) above.push_back(&p);

    Point point(space_.size());
    if (config_.multivariate) {
      std::vector<size_t> all(space_.size());
      std::iota(all.begin(), all.end(), 0);
      Choose(all, below, above, rng, point);
    } else {
      for (size_t i = 0; i < space_.size(); ++i) Choose({i}, below, above, rng, point);
    }
    return point;
  }

  // Sets `dims` of `point` to the candidate with the best l/g ratio.
  void Choose(const std::vector<size_t>& dims, const std::vector<const Point*>& below,
              const std::vector<const Point*>& above, std::mt19937_64& rng, Point& point) const {
    ParzenOptions options{.multivariate = config_.multivariate,
                          .prior_weight = config_.prior_weight};
    ParzenEstimator l = Fit(dims, below, options);
    ParzenEstimator g = Fit(dims, above, options);
    double best_score = -std::numeric_limits<double>::infinity();
    std::vector<double> best;
    for (int c = 0; c < config_.candidates; ++c) {
      std::vector<double> x = l.Sample(rng);
      double score = l.LogDensity(x) - g.LogDensity(x);
      if (best.empty() || score > best_score) {
        best_score = score;
        best = std::move(x);
      }
    }
    ::trainyard::tune::FromModel(space_, dims, best, point);
  }

  ParzenEstimator Fit(const std::vector<size_t>& dims, const std::vector<const Point*>& points,
                      const ParzenOptions& options) const {
    std::vector<std::vector<double>> observations;
    observations.reserve(points.size());
    for (const Point* p : points) observations.push_back(ToModel(space_, dims, *p));
    return ParzenEstimator(space_, dims, observations, AgeWeights(points.size()), options);
  }

  Space space_;
  TpeConfig config_;
};

}  // namespace

Result<std::unique_ptr<Sampler>> MakeTpeSampler(const Space& space, const SamplerOptions& options) {
  ASSIGN_OR_RETURN(
      SettingsReader reader,
      SettingsReader::Make("tpe", options.settings,
                           {"gamma", "prior_weight", "n_EI_candidates", "random_state"}));
  TpeConfig config{.multivariate = false, .hyperopt_gamma = true};
  ASSIGN_OR_RETURN(config.gamma, reader.Double("gamma", 0.25, 0));
  if (config.gamma >= 1) {
    return InvalidArgumentError("gamma should be in the range of (0, 1) for algorithm tpe");
  }
  ASSIGN_OR_RETURN(config.prior_weight, reader.Double("prior_weight", 1.0, 0));
  ASSIGN_OR_RETURN(int64_t candidates, reader.Int("n_EI_candidates", 24, 1));
  config.candidates = static_cast<int>(std::min<int64_t>(candidates, 1 << 16));
  ASSIGN_OR_RETURN(config.seed, reader.Seed(options.default_seed));
  return std::unique_ptr<Sampler>(std::make_unique<TpeSampler>(space, config));
}

Result<std::unique_ptr<Sampler>> MakeMultivariateTpeSampler(const Space& space,
                                                            const SamplerOptions& options) {
  ASSIGN_OR_RETURN(SettingsReader reader,
                   SettingsReader::Make("multivariate-tpe", options.settings,
                                        {"n_startup_trials", "n_ei_candidates", "random_state"}));
  TpeConfig config{.multivariate = true, .hyperopt_gamma = false};
  ASSIGN_OR_RETURN(int64_t startup, reader.Int("n_startup_trials", 10, 0));
  ASSIGN_OR_RETURN(int64_t candidates, reader.Int("n_ei_candidates", 24, 1));
  config.startup = static_cast<int>(std::min<int64_t>(startup, 1 << 20));
  config.candidates = static_cast<int>(std::min<int64_t>(candidates, 1 << 16));
  ASSIGN_OR_RETURN(config.seed, reader.Seed(options.default_seed));
  return std::unique_ptr<Sampler>(std::make_unique<TpeSampler>(space, config));
}

}  // namespace trainyard::tune
