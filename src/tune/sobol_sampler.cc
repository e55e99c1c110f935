// sobol: the Sobol sequence (Joe and Kuo's direction numbers, from
// Boost.Random) mapped through each parameter's prior, so log and normal
// distributions are honoured (goptuna ignores them, §8 item 25 of the Katib
// reference). Unscrambled, like goptuna's: sobol has no settings. The
// sequence starts after the origin (Boost's choice), which would put every
// parameter at its minimum.
//
// Stateless: each suggestion carries its index in the sequence in the label
// "sobol-index"; the next call goes on after the greatest. An index whose
// point is already taken (ints and steps make neighbours collide) is skipped.
#include <fmt/format.h>

#include <set>

#include "tune/samplers.h"
#include "tune/settings.h"
#include "tune/sobol_points.h"

namespace trainyard::tune {
namespace {

constexpr char kIndexLabel[] = "sobol-index";
// How far past the last index one call looks for fresh points before it
// leaves the rest to MakeSampler's wrapper.
constexpr int64_t kMaxSkips = 4096;

class SobolSampler : public Sampler {
 public:
  explicit SobolSampler(Space space) : space_(std::move(space)) {}

  Result<SuggestResult> Suggest(std::span<const TrialRecord> trials, int count) override {
    int64_t next = 0;
    std::set<std::string> taken;
    for (const TrialRecord& trial : trials) {
      taken.insert(space_.Key(trial.point));
      if (std::optional<int> index = LabelInt(trial, kIndexLabel)) {
        next = std::max<int64_t>(next, *index + 1);
      }
    }
    SobolPoints sequence(space_.size(), static_cast<uint64_t>(next));
    SuggestResult result;
    for (int64_t index = next; index < next + count + kMaxSkips; ++index) {
      if (static_cast<int>(result.suggestions.size()) == count) break;
      Point point = space_.FromUnit(sequence.Next());
      if (!taken.insert(space_.Key(point)).second) continue;
      result.suggestions.push_back(
          {.point = std::move(point), .labels = {{kIndexLabel, std::to_string(index)}}});
    }
    return result;
  }

 private:
  Space space_;
};

}  // namespace

Result<std::unique_ptr<Sampler>> MakeSobolSampler(const Space& space,
                                                  const SamplerOptions& options) {
  ASSIGN_OR_RETURN(SettingsReader reader, SettingsReader::Make("sobol", options.settings, {}));
  (void)reader;
  if (space.size() > kMaxSobolDimensions) {
    return InvalidArgumentError(
        fmt::format("sobol supports at most {} parameters", kMaxSobolDimensions));
  }
  return std::unique_ptr<Sampler>(std::make_unique<SobolSampler>(space));
}

}  // namespace trainyard::tune
