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
#include <boost/random/sobol.hpp>
#include <charconv>
#include <set>

#include "tune/samplers.h"
#include "tune/settings.h"

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
      if (auto it = trial.labels.find(kIndexLabel); it != trial.labels.end()) {
        int64_t index = 0;
        const std::string& text = it->second;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), index);
        if (ec == std::errc() && end == text.data() + text.size()) {
          next = std::max(next, index + 1);
        }
      }
    }
    boost::random::sobol engine(space_.size());
    engine.discard(static_cast<uint64_t>(next) * space_.size());
    // The engine gives integers in [0, 2^64); 2^-64 maps them into [0, 1).
    constexpr double kScale = 0x1p-64;
    SuggestResult result;
    for (int64_t index = next; index < next + count + kMaxSkips; ++index) {
      if (static_cast<int>(result.suggestions.size()) == count) break;
      Point unit(space_.size());
      for (double& u : unit) u = static_cast<double>(engine()) * kScale;
      Point point = space_.FromUnit(unit);
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
  // Boost's table of direction numbers ends at 3667 dimensions.
  if (space.size() > 3667) {
    return InvalidArgumentError("sobol supports at most 3667 parameters");
  }
  return std::unique_ptr<Sampler>(std::make_unique<SobolSampler>(space));
}

}  // namespace trainyard::tune
