// hyperband: Katib's settings and schedule, without its defects (§2.7, §8
// item 26 of the Katib reference): the bracket size is never overwritten by
// the request count, a rung starts only once the rung below it has finished
// (until then Suggest offers fewer points, possibly none), failed trials rank
// last instead of aborting, and every bracket runs, down to s = 0.
//
// The sampler keeps no state: each trial carries its bracket and rung in its
// labels ("hyperband-bracket", "hyperband-rung"), and Suggest rebuilds where
// the schedule stands from them; trials without them are not hyperband's.
// Brackets run one after another; the next bracket starts as soon as the
// last rung of the one before has been handed out (nothing waits on that
// rung). Rung i + 1 re-runs the best floor(n * eta^-(i+1)) configurations of
// rung i by loss (ties by creation order; failed trials and trials without a
// loss rank last), the paper's floor(n_i / eta). Rung 0 draws uniform
// configurations (Space::FromUnit, so distributions hold), none equal to a
// taken point, and holds fewer when the space has fewer configurations. The
// resource parameter gets the rung's resource, rounded for an int.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>

#include "tune/history_rng.h"
#include "tune/hyperband_plan.h"
#include "tune/samplers.h"
#include "tune/settings.h"

namespace trainyard::tune {
namespace {

constexpr char kBracketLabel[] = "hyperband-bracket";
constexpr char kRungLabel[] = "hyperband-rung";

// Lower is better: a loss, or +inf for a trial that failed or reported none.
double RankingLoss(const TrialRecord& trial) {
  if (trial.state == TrialState::kFailed || !trial.loss || std::isnan(*trial.loss)) {
    return std::numeric_limits<double>::infinity();
  }
  return *trial.loss;
}

class HyperbandSampler : public Sampler {
 public:
  HyperbandSampler(Space space, HyperbandPlan plan, size_t resource, uint64_t seed)
      : space_(std::move(space)), plan_(std::move(plan)), resource_(resource), seed_(seed) {
    config_count_ = 1;
    for (size_t j = 0; j < space_.size() && config_count_; ++j) {
      if (j == resource_) continue;
      std::optional<int64_t> k = space_.Cardinality(j);
      if (!k || *k > (int64_t{1} << 40) / *config_count_) {
        config_count_.reset();
      } else {
        *config_count_ *= *k;
      }
    }
  }

  Result<SuggestResult> Suggest(std::span<const TrialRecord> trials, int count) override {
    // Trials by (bracket, rung), in creation order; unlabelled ones are not ours.
    std::map<std::pair<int, int>, std::vector<size_t>> rungs;
    std::set<std::string> taken;
    for (size_t t = 0; t < trials.size(); ++t) {
      taken.insert(space_.Key(trials[t].point));
      std::optional<int> s = LabelInt(trials[t], kBracketLabel);
      std::optional<int> i = LabelInt(trials[t], kRungLabel);
      if (s && i && *s >= 0 && *s <= plan_.s_max && *i >= 0 && *i <= *s) {
        rungs[{*s, *i}].push_back(t);
      }
    }
    SuggestResult result;
    for (const HyperbandBracket& bracket : plan_.brackets) {
      for (int i = 0; i <= bracket.s; ++i) {
        const std::vector<size_t>& members = rungs[{bracket.s, i}];
        if (i == 0) {
          int missing = FirstRungSize(bracket) - static_cast<int>(members.size());
          if (missing > 0) {
            result.suggestions =
                NewConfigs(bracket, std::min(count, missing), trials.size(), taken);
            result.exhausted =
                bracket.s == 0 && static_cast<int>(result.suggestions.size()) == missing;
            return result;
          }
        } else {
          std::vector<Suggestion> lacking =
              Promotions(bracket, i, trials, rungs[{bracket.s, i - 1}], members, taken);
          if (!lacking.empty()) {
            lacking.resize(std::min(lacking.size(), static_cast<size_t>(std::max(count, 0))));
            result.suggestions = std::move(lacking);
            return result;
          }
        }
        bool running = std::any_of(members.begin(), members.end(), [&](size_t t) {
          return trials[t].state == TrialState::kPending;
        });
        if (running && i < bracket.s) return result;  // the next rung needs all of these
      }
    }
    result.exhausted = true;
    return result;
  }

 private:
  Suggestion Labelled(Point point, int s, int i) const {
    point[resource_] = ResourceValue(plan_.brackets[plan_.s_max - s].rungs[i].resource);
    return {.point = std::move(point),
            .labels = {{kBracketLabel, std::to_string(s)}, {kRungLabel, std::to_string(i)}}};
  }

  // Ints are rounded; the value is not clamped into the parameter's range,
  // as upstream (its example runs num-epochs [1, 1] with r_l = 2).
  double ResourceValue(double resource) const {
    if (space_[resource_].type == ParameterType::kInt) return std::round(resource);
    return resource;
  }

  // Random configurations for rung 0 of a bracket, none equal to a taken point.
  std::vector<Suggestion> NewConfigs(const HyperbandBracket& bracket, int n, size_t history,
                                     std::set<std::string>& taken) const {
    std::mt19937_64 rng = HistoryRng(seed_, history);
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    std::vector<Suggestion> out;
    constexpr int kAttempts = 100;
    for (int k = 0; k < n; ++k) {
      for (int attempt = 0; attempt < kAttempts; ++attempt) {
        Point unit(space_.size());
        for (double& u : unit) u = uniform(rng);
        Suggestion suggestion = Labelled(space_.FromUnit(unit), bracket.s, 0);
        if (taken.insert(space_.Key(suggestion.point)).second) {
          out.push_back(std::move(suggestion));
          break;
        }
      }
    }
    return out;
  }

  // A configuration's identity: its point without the resource.
  std::string ConfigKey(Point point) const {
    point[resource_] = plan_.r_l;
    return space_.Key(point);
  }

  // Rung 0's size: the bracket's n, or fewer when the configurations (the
  // points without the resource) are fewer than that.
  int FirstRungSize(const HyperbandBracket& bracket) const {
    int configs = bracket.rungs[0].configs;
    return config_count_ ? static_cast<int>(std::min<int64_t>(configs, *config_count_)) : configs;
  }

  // The best configurations of rung i - 1 that rung i does not hold yet,
  // less any whose point another trial has already taken.
  std::vector<Suggestion> Promotions(const HyperbandBracket& bracket, int i,
                                     std::span<const TrialRecord> trials,
                                     const std::vector<size_t>& below,
                                     const std::vector<size_t>& members,
                                     const std::set<std::string>& taken) const {
    std::vector<size_t> ranked = below;
    std::stable_sort(ranked.begin(), ranked.end(), [&](size_t a, size_t b) {
      return RankingLoss(trials[a]) < RankingLoss(trials[b]);
    });
    std::set<std::string> held;
    for (size_t t : members) held.insert(ConfigKey(trials[t].point));
    std::vector<Suggestion> out;
    size_t keep = std::min(ranked.size(), static_cast<size_t>(bracket.rungs[i].configs));
    for (size_t k = 0; k < keep; ++k) {
      const Point& point = trials[ranked[k]].point;
      if (!held.insert(ConfigKey(point)).second) continue;
      Suggestion suggestion = Labelled(point, bracket.s, i);
      if (!taken.contains(space_.Key(suggestion.point))) out.push_back(std::move(suggestion));
    }
    return out;
  }

  Space space_;
  HyperbandPlan plan_;
  size_t resource_;
  uint64_t seed_;
  std::optional<int64_t> config_count_;  // distinct configurations; nullopt: unbounded
};

}  // namespace

Result<std::unique_ptr<Sampler>> MakeHyperbandSampler(const Space& space,
                                                      const SamplerOptions& options) {
  ASSIGN_OR_RETURN(SettingsReader reader,
                   SettingsReader::Make("hyperband", options.settings,
                                        {"r_l", "resource_name", "eta", "random_state"}));
  std::optional<std::string> r_l_text = reader.Raw("r_l");
  std::optional<std::string> resource_name = reader.Raw("resource_name");
  if (!r_l_text || !resource_name) {
    return InvalidArgumentError("r_l and resource_name must be set.");
  }
  std::optional<double> r_l = ParseDouble(*r_l_text);
  if (!r_l || *r_l <= 0) return InvalidArgumentError("r_l must be a positive float number.");
  const std::vector<Parameter>& parameters = space.parameters();
  auto it = std::find_if(parameters.begin(), parameters.end(),
                         [&](const Parameter& p) { return p.name == *resource_name; });
  if (it == parameters.end()) {
    return InvalidArgumentError("value of resource_name setting must be in parameters.");
  }
  if (it->type != ParameterType::kInt && it->type != ParameterType::kDouble) {
    return InvalidArgumentError(
        fmt::format("resource_name \"{}\" must name an int or double parameter", *resource_name));
  }
  double eta = 3;
  if (std::optional<std::string> eta_text = reader.Raw("eta")) {
    std::optional<double> parsed = ParseDouble(*eta_text);
    if (!parsed)
      return InvalidArgumentError(fmt::format("eta must be a number, not \"{}\"", *eta_text));
    eta = *parsed <= 0 ? 3 : *parsed;  // upstream's rule
  }
  ASSIGN_OR_RETURN(HyperbandPlan plan, MakeHyperbandPlan(*r_l, eta));
  double needed = std::ceil(std::pow(eta, plan.s_max) - 1e-9);
  if (options.parallel_trial_count < needed) {
    return InvalidArgumentError(
        fmt::format("parallelTrialCount must be not less than {}.", static_cast<int64_t>(needed)));
  }
  ASSIGN_OR_RETURN(uint64_t seed, reader.Seed(options.default_seed));
  size_t resource = static_cast<size_t>(it - parameters.begin());
  return std::unique_ptr<Sampler>(
      std::make_unique<HyperbandSampler>(space, std::move(plan), resource, seed));
}

}  // namespace trainyard::tune
