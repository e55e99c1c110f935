#include "tune/sampler.h"

#include <limits>
#include <set>

#include "tune/history_rng.h"
#include "tune/samplers.h"
#include "tune/settings.h"

namespace trainyard::tune {
namespace {

using Factory = Result<std::unique_ptr<Sampler>> (*)(const Space&, const SamplerOptions&);

struct Algorithm {
  const char* name;
  Factory make;
  bool distinct = true;  // held to suggesting each point once (DistinctSampler)
};

constexpr Algorithm kAlgorithms[] = {
    {"random", MakeRandomSampler},
    {"grid", MakeGridSampler},
    {"sobol", MakeSobolSampler},
    {"tpe", MakeTpeSampler},
    {"multivariate-tpe", MakeMultivariateTpeSampler},
    {"bayesianoptimization", MakeGpSampler},
    {"cmaes", MakeCmaEsSampler},
    {"hyperband", MakeHyperbandSampler},
    {"pbt", MakePbtSampler, /*distinct=*/false},
};

// A separate stream, so top-up draws differ from any sampler's own.
constexpr uint64_t kTopUpStream = 0xd15717c7;
// Random draws tried per missing point before enumerating the free ones.
constexpr int kDrawsPerPoint = 64;

// Holds every algorithm to the contract that a batch never repeats a pending
// or finished assignment: the inner sampler's duplicates are dropped and
// replaced by fresh points drawn from the prior (as many as were dropped, so
// a sampler that deliberately offers fewer, like hyperband between rungs,
// still offers fewer). A finite space whose points are all taken is
// exhausted whatever the algorithm says.
class DistinctSampler : public Sampler {
 public:
  DistinctSampler(Space space, std::unique_ptr<Sampler> inner, uint64_t seed)
      : space_(std::move(space)), inner_(std::move(inner)), seed_(seed) {}

  // It keeps nothing of its own between suggestions.
  bool worth_keeping() const override { return inner_->worth_keeping(); }

  Result<SuggestResult> Suggest(std::span<const TrialRecord> trials, int count) override {
    ASSIGN_OR_RETURN(SuggestResult answer, inner_->Suggest(trials, count));
    std::set<std::string> taken;
    for (const TrialRecord& trial : trials) taken.insert(space_.Key(trial.point));
    SuggestResult result{.suggestions = {}, .exhausted = answer.exhausted};
    int dropped = 0;
    for (Suggestion& s : answer.suggestions) {
      if (static_cast<int>(result.suggestions.size()) == count) break;
      if (taken.insert(space_.Key(s.point)).second) {
        result.suggestions.push_back(std::move(s));
      } else {
        ++dropped;
      }
    }
    std::mt19937_64 rng = HistoryRng(seed_, trials.size(), kTopUpStream);
    for (; dropped > 0; --dropped) {
      std::optional<Point> point = FreshPoint(rng, taken);
      if (!point) break;
      result.suggestions.push_back({.point = std::move(*point), .labels = {}});
    }
    std::optional<int64_t> size = space_.Size();
    if (size && static_cast<int64_t>(taken.size()) >= *size) result.exhausted = true;
    return result;
  }

 private:
  // A point not in `taken` (and now added to it): a draw from the prior, or
  // when draws keep colliding in a small space, the first free point.
  std::optional<Point> FreshPoint(std::mt19937_64& rng, std::set<std::string>& taken) const {
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    for (int attempt = 0; attempt < kDrawsPerPoint; ++attempt) {
      Point unit(space_.size());
      for (double& u : unit) u = uniform(rng);
      Point point = space_.FromUnit(unit);
      if (taken.insert(space_.Key(point)).second) return point;
    }
    std::optional<int64_t> size = space_.Size();
    if (!size) return std::nullopt;
    for (int64_t id = 0; id < *size; ++id) {
      Point point = space_.PointAt(id);
      if (taken.insert(space_.Key(point)).second) return point;
    }
    return std::nullopt;
  }

  Space space_;
  std::unique_ptr<Sampler> inner_;
  uint64_t seed_;
};

}  // namespace

std::optional<int> LabelInt(const TrialRecord& trial, std::string_view key) {
  auto it = trial.labels.find(std::string(key));
  if (it == trial.labels.end()) return std::nullopt;
  std::optional<int64_t> value = ParseInt(it->second);
  if (!value || *value < 0 || *value > std::numeric_limits<int>::max()) return std::nullopt;
  return static_cast<int>(*value);
}

const std::vector<std::string>& SamplerNames() {
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> names;
    for (const Algorithm& a : kAlgorithms) names.emplace_back(a.name);
    return names;
  }();
  return kNames;
}

Result<std::unique_ptr<Sampler>> MakeSampler(const Space& space, const SamplerOptions& options) {
  for (const Algorithm& a : kAlgorithms) {
    if (options.algorithm != a.name) continue;
    ASSIGN_OR_RETURN(std::unique_ptr<Sampler> inner, a.make(space, options));
    if (!a.distinct) return inner;
    return std::unique_ptr<Sampler>(
        std::make_unique<DistinctSampler>(space, std::move(inner), options.default_seed));
  }
  return NotFoundError("unknown algorithm name " + options.algorithm);
}

}  // namespace trainyard::tune
