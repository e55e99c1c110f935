// cmaes: CMA-ES over the int and double parameters, in the unit cube of
// Space::ToUnit (so log and normal distributions are honoured, unlike
// goptuna's, §8 item 25 of the Katib reference); categorical and discrete
// parameters are drawn uniformly alongside.
//
// No state is kept: every suggestion carries its generation in the label
// "cmaes-generation" (and its run, counting restarts, in "cmaes-run"), and
// Suggest replays the finished trials generation by generation in creation
// order. A generation is told once `population` of its trials have a loss
// (the first ones, in creation order); until then it keeps handing out
// points, so failed trials are replaced. Trials without the label (another
// sampler's) are not told.
//
// Boundaries: a draw outside the cube is drawn again (up to 100 times), then
// clipped; the strategy learns from the point that was actually run (snapped
// onto ints and steps). Ints and steps keep a floor under their spread
// (AddMargin), so the search doesn't stall on one value. A draw whose point is already taken is
// drawn again with a growing step size, and at last uniformly, so a converged run in a discrete
// space keeps proposing new points.
//
// Restarts (restart_strategy ipop or bipop) follow Hansen's termination
// criteria (CmaEs::ShouldStop). IPOP doubles the population at each restart;
// BIPOP (Hansen 2009) alternates between that regime and small populations
// with smaller step sizes, whichever has used fewer evaluations. A restart's
// mean is uniform in the cube, drawn from a generator seeded with the seed
// and the generation, so the replay repeats it.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "tune/cmaes_strategy.h"
#include "tune/history_rng.h"
#include "tune/samplers.h"
#include "tune/settings.h"

namespace trainyard::tune {
namespace {

constexpr char kGenerationLabel[] = "cmaes-generation";
constexpr char kRunLabel[] = "cmaes-run";
constexpr uint64_t kRestartStream = 0xc4a3e5;
constexpr int kMaxPopulation = 4096;

enum class RestartStrategy { kNone, kIpop, kBipop };

// The strategy after replaying the history, and where it stands.
struct Replay {
  CmaEs strategy;
  int generation = 0;  // the generation new points belong to
  int run = 0;         // 0 for the first run, +1 per restart
};

class CmaEsSampler : public Sampler {
 public:
  CmaEsSampler(Space space, std::vector<size_t> numeric, double sigma, RestartStrategy restart,
               uint64_t seed)
      : space_(std::move(space)),
        numeric_(std::move(numeric)),
        sigma0_(sigma),
        restart_(restart),
        seed_(seed) {}

  Result<SuggestResult> Suggest(std::span<const TrialRecord> trials, int count) override {
    Replay replay = Rebuild(trials);
    std::set<std::string> taken;
    for (const TrialRecord& trial : trials) taken.insert(space_.Key(trial.point));
    std::mt19937_64 rng = HistoryRng(seed_, trials.size());
    SuggestResult result;
    for (int k = 0; k < count; ++k) {
      std::optional<Point> point = Draw(replay.strategy, rng, taken);
      if (!point) break;
      result.suggestions.push_back(
          {.point = std::move(*point),
           .labels = {{kGenerationLabel, std::to_string(replay.generation)},
                      {kRunLabel, std::to_string(replay.run)}}});
    }
    // A finite space is exhausted once every point is taken.
    std::optional<int64_t> size = space_.Size();
    result.exhausted = size && static_cast<int64_t>(taken.size()) >= *size;
    return result;
  }

 private:
  Eigen::VectorXd UnitOf(const Point& point) const {
    Eigen::VectorXd x(numeric_.size());
    for (size_t j = 0; j < numeric_.size(); ++j)
      x[j] = space_.ToUnit(numeric_[j], point[numeric_[j]]);
    return x;
  }

  Replay Rebuild(std::span<const TrialRecord> trials) const {
    // Each generation's told trials, in creation order.
    std::map<int, std::vector<size_t>> told;
    for (size_t t = 0; t < trials.size(); ++t) {
      std::optional<int> g = LabelInt(trials[t], kGenerationLabel);
      if (g && trials[t].loss && trials[t].state != TrialState::kFailed &&
          trials[t].state != TrialState::kPending) {
        told[*g].push_back(t);
      }
    }
    const int n = static_cast<int>(numeric_.size());
    const int default_population = CmaEs::DefaultPopulation(n);
    Replay replay{.strategy =
                      CmaEs(Eigen::VectorXd::Constant(n, 0.5), sigma0_, default_population)};
    // BIPOP's bookkeeping: evaluations per regime, restarts of the large one.
    int64_t large_budget = 0;
    int64_t small_budget = 0;
    bool small_regime = false;
    int large_restarts = 0;
    while (true) {
      auto it = told.find(replay.generation);
      size_t lambda = static_cast<size_t>(replay.strategy.population());
      if (it == told.end() || it->second.size() < lambda) break;
      std::vector<Eigen::VectorXd> solutions;
      std::vector<double> losses;
      for (size_t k = 0; k < lambda; ++k) {
        const TrialRecord& trial = trials[it->second[k]];
        solutions.push_back(UnitOf(trial.point));
        losses.push_back(*trial.loss);
      }
      replay.strategy.Tell(solutions, losses);
      ++replay.generation;
      if (restart_ == RestartStrategy::kNone ||
          replay.strategy.ShouldStop() == CmaEs::Stop::kNone) {
        continue;
      }
      // A restart: a new run from a random mean.
      std::mt19937_64 rng =
          HistoryRng(seed_, static_cast<size_t>(replay.generation), kRestartStream);
      std::uniform_real_distribution<double> uniform(0.0, 1.0);
      Eigen::VectorXd mean(n);
      for (int j = 0; j < n; ++j) mean[j] = uniform(rng);
      int64_t used = int64_t{replay.strategy.generation()} * replay.strategy.population();
      (small_regime ? small_budget : large_budget) += used;
      int population;
      double sigma = sigma0_;
      int large_population = default_population << std::min(large_restarts, 12);
      if (restart_ == RestartStrategy::kBipop && small_budget < large_budget) {
        small_regime = true;
        double u1 = uniform(rng);
        double u2 = uniform(rng);
        population = static_cast<int>(std::floor(
            default_population * std::pow(0.5 * large_population / default_population, u1 * u1)));
        population = std::max(population, default_population);
        sigma = sigma0_ * std::pow(10.0, -2 * u2);
      } else {
        small_regime = false;
        ++large_restarts;
        population = default_population << std::min(large_restarts, 12);
      }
      replay.strategy = CmaEs(mean, sigma, std::min(population, kMaxPopulation));
      ++replay.run;
    }
    return replay;
  }

  // A new point from the strategy: numeric coordinates from CMA-ES (inside
  // the cube, not taken), the others uniform. nullopt when none was found.
  std::optional<Point> Draw(const CmaEs& strategy, std::mt19937_64& rng,
                            std::set<std::string>& taken) const {
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    constexpr int kInsideAttempts = 100;
    constexpr int kFreshAttempts = 200;
    for (int attempt = 0; attempt < kFreshAttempts; ++attempt) {
      // After 32 tries the step size doubles every 8, and the last quarter of
      // the tries are uniform.
      double widen = attempt < 32 ? 1 : std::pow(2.0, (attempt - 32) / 8 + 1);
      bool uniform_draw = attempt >= kFreshAttempts * 3 / 4;
      Eigen::VectorXd x;
      for (int inside = 0; inside < kInsideAttempts; ++inside) {
        if (uniform_draw) {
          x = Eigen::VectorXd(static_cast<Eigen::Index>(numeric_.size()));
          for (double& v : x) v = uniform(rng);
        } else {
          x = strategy.Sample(rng, widen);
          AddMargin(strategy, rng, x);
        }
        if ((x.array() >= 0).all() && (x.array() <= 1).all()) break;
      }
      Point unit(space_.size());
      for (double& u : unit) u = uniform(rng);
      for (size_t j = 0; j < numeric_.size(); ++j) unit[numeric_[j]] = std::clamp(x[j], 0.0, 1.0);
      Point point = space_.FromUnit(unit);
      if (taken.insert(space_.Key(point)).second) return point;
    }
    return std::nullopt;
  }

  // A coordinate with k values (an int, a stepped double) whose marginal
  // standard deviation has shrunk below 0.4 / k gets independent noise that
  // brings it back to 0.4 / k, so a fifth of the draws still leave the
  // current value: without it the strategy stalls on a plateau of one value
  // (the problem CMA-ES with margin, Hamano et al. 2022, solves by moving the
  // mean; this floor is pycma's minstd for integer variables).
  void AddMargin(const CmaEs& strategy, std::mt19937_64& rng, Eigen::VectorXd& x) const {
    std::normal_distribution<double> normal;
    for (size_t j = 0; j < numeric_.size(); ++j) {
      std::optional<int64_t> k = space_.Cardinality(numeric_[j]);
      if (!k || *k < 2) continue;
      double floor = 0.4 / static_cast<double>(*k);
      double variance =
          strategy.sigma() * strategy.sigma() *
          strategy.covariance()(static_cast<Eigen::Index>(j), static_cast<Eigen::Index>(j));
      if (variance < floor * floor) {
        x[static_cast<Eigen::Index>(j)] += std::sqrt(floor * floor - variance) * normal(rng);
      }
    }
  }

  Space space_;
  std::vector<size_t> numeric_;  // the int and double parameters
  double sigma0_;
  RestartStrategy restart_;
  uint64_t seed_;
};

}  // namespace

Result<std::unique_ptr<Sampler>> MakeCmaEsSampler(const Space& space,
                                                  const SamplerOptions& options) {
  ASSIGN_OR_RETURN(SettingsReader reader,
                   SettingsReader::Make("cmaes", options.settings,
                                        {"random_state", "sigma", "restart_strategy"}));
  ASSIGN_OR_RETURN(double sigma, reader.Double("sigma", 1.0 / 6, 0));
  ASSIGN_OR_RETURN(std::string restart,
                   reader.OneOf("restart_strategy", "none", {"ipop", "bipop", "none"}));
  ASSIGN_OR_RETURN(uint64_t seed, reader.Seed(options.default_seed));
  std::vector<size_t> numeric;
  for (size_t i = 0; i < space.size(); ++i) {
    if (space[i].type == ParameterType::kInt || space[i].type == ParameterType::kDouble) {
      numeric.push_back(i);
    }
  }
  if (numeric.size() < 2) {
    return InvalidArgumentError(
        "CMA-ES only supports two or more dimensional continuous search space.");
  }
  RestartStrategy strategy = restart == "ipop"    ? RestartStrategy::kIpop
                             : restart == "bipop" ? RestartStrategy::kBipop
                                                  : RestartStrategy::kNone;
  return std::unique_ptr<Sampler>(
      std::make_unique<CmaEsSampler>(space, std::move(numeric), sigma, strategy, seed));
}

}  // namespace trainyard::tune
