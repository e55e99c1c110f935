// random: points drawn from each parameter's prior (Space::FromUnit of a
// uniform point), as hyperopt's rand.suggest does. Duplicates are filtered by
// MakeSampler's wrapper, which draws again.
#include "tune/history_rng.h"
#include "tune/samplers.h"
#include "tune/settings.h"

namespace trainyard::tune {
namespace {

class RandomSampler : public Sampler {
 public:
  RandomSampler(Space space, uint64_t seed) : space_(std::move(space)), seed_(seed) {}

  Result<SuggestResult> Suggest(std::span<const TrialRecord> trials, int count) override {
    std::mt19937_64 rng = HistoryRng(seed_, trials.size());
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    SuggestResult result;
    for (int k = 0; k < count; ++k) {
      Point unit(space_.size());
      for (double& u : unit) u = uniform(rng);
      result.suggestions.push_back({.point = space_.FromUnit(unit), .labels = {}});
    }
    return result;
  }

 private:
  Space space_;
  uint64_t seed_;
};

}  // namespace

Result<std::unique_ptr<Sampler>> MakeRandomSampler(const Space& space,
                                                   const SamplerOptions& options) {
  ASSIGN_OR_RETURN(SettingsReader reader,
                   SettingsReader::Make("random", options.settings, {"random_state"}));
  ASSIGN_OR_RETURN(uint64_t seed, reader.Seed(options.default_seed));
  return std::unique_ptr<Sampler>(std::make_unique<RandomSampler>(space, seed));
}

}  // namespace trainyard::tune
