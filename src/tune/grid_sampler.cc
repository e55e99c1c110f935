// grid: every combination of the parameters' values, as Optuna's
// GridSampler (Katib's grid service) builds it: ints from min to max by step
// (default 1), doubles from min by step up to max, lists as written.
//
// The order: without random_state, itertools.product's, the first parameter
// varying slowest, so the values run in the order the user wrote them. With
// random_state, a fixed random permutation of the grid (Optuna picks at
// random among unvisited points), so a maxTrialCount below the grid's size
// samples it evenly instead of taking its first rows. Either way the order is
// a function of the settings alone: a batch never repeats a pending point and
// a restarted controller continues where it stopped.
#include <fmt/format.h>

#include <numeric>
#include <optional>
#include <random>
#include <set>

#include "common/int128.h"
#include "tune/samplers.h"
#include "tune/settings.h"

namespace trainyard::tune {
namespace {

// A bijection of [0, n): i -> (a*i + b) mod n with a coprime to n, a cheap
// random-looking permutation that needs no table for grids of any size.
class Permutation {
 public:
  // The identity without a seed.
  Permutation(int64_t n, std::optional<uint64_t> seed) : n_(n) {
    if (n_ <= 1 || !seed) return;
    std::mt19937_64 rng(*seed);
    b_ = static_cast<int64_t>(rng() % static_cast<uint64_t>(n_));
    a_ = static_cast<int64_t>(rng() % static_cast<uint64_t>(n_));
    while (std::gcd(a_, n_) != 1) a_ = (a_ + 1) % n_;
  }
  int64_t operator()(int64_t i) const {
    if (n_ <= 1) return 0;
    auto product = static_cast<Int128>(a_) * i + b_;
    return static_cast<int64_t>(product % n_);
  }

 private:
  int64_t n_;
  int64_t a_ = 1;
  int64_t b_ = 0;
};

class GridSampler : public Sampler {
 public:
  GridSampler(Space space, int64_t size, std::optional<uint64_t> seed)
      : space_(std::move(space)), size_(size), order_(size, seed) {}

  Result<SuggestResult> Suggest(std::span<const TrialRecord> trials, int count) override {
    std::set<std::string> taken;
    for (const TrialRecord& trial : trials) taken.insert(space_.Key(trial.point));
    SuggestResult result;
    // Walks the permutation from its start: taken points are skipped, so the
    // walk costs O(trials) and never depends on state kept between calls.
    for (int64_t i = 0; i < size_ && static_cast<int>(result.suggestions.size()) < count; ++i) {
      Point point = space_.PointAt(order_(i));
      if (taken.insert(space_.Key(point)).second) {
        result.suggestions.push_back({.point = std::move(point), .labels = {}});
      }
    }
    result.exhausted = static_cast<int64_t>(taken.size()) >= size_;
    return result;
  }

 private:
  Space space_;
  int64_t size_;
  Permutation order_;
};

}  // namespace

Result<std::unique_ptr<Sampler>> MakeGridSampler(const Space& space,
                                                 const SamplerOptions& options) {
  ASSIGN_OR_RETURN(SettingsReader reader,
                   SettingsReader::Make("grid", options.settings, {"random_state"}));
  std::optional<uint64_t> seed;
  if (reader.Raw("random_state")) {
    ASSIGN_OR_RETURN(seed, reader.Seed(0));
  }
  for (size_t i = 0; i < space.size(); ++i) {
    if (!space.Cardinality(i)) {
      return InvalidArgumentError("For discrete search space, all parameters must include step");
    }
  }
  std::optional<int64_t> size = space.Size();
  if (!size) return InvalidArgumentError("the grid has more than 2^62 points");
  if (options.max_trial_count && *options.max_trial_count > *size) {
    return InvalidArgumentError(
        fmt::format("Max Trial Count: {} > all possible search combinations: {}",
                    *options.max_trial_count, *size));
  }
  return std::unique_ptr<Sampler>(std::make_unique<GridSampler>(space, *size, seed));
}

}  // namespace trainyard::tune
