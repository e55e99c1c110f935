#include "tune/median_stop.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "tune/settings.h"

namespace trainyard::tune {
namespace {

// A NaN loss is the worst loss there is.
double Worst(double loss) {
  return std::isnan(loss) ? std::numeric_limits<double>::infinity() : loss;
}

// The best (lowest) of the first `steps` losses.
double BestOfFirst(std::span<const double> losses, size_t steps) {
  double best = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < steps; ++i) best = std::min(best, Worst(losses[i]));
  return best;
}

// The true median: the mean of the two middle values for an even count.
double Median(std::vector<double> values) {
  size_t half = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + half, values.end());
  double upper = values[half];
  if (values.size() % 2 == 1) return upper;
  double lower = *std::max_element(values.begin(), values.begin() + half);
  if (std::isinf(lower) && std::isinf(upper)) return upper;  // inf + inf, not inf - inf
  return lower + (upper - lower) / 2;
}

}  // namespace

Result<MedianStopSettings> ParseMedianStopSettings(const Settings& settings) {
  ASSIGN_OR_RETURN(
      SettingsReader reader,
      SettingsReader::Make("medianstop", settings, {"min_trials_required", "start_step"}));
  constexpr int64_t kMax = std::numeric_limits<int>::max();
  ASSIGN_OR_RETURN(int64_t min_trials, reader.Int("min_trials_required", 3, 1));
  ASSIGN_OR_RETURN(int64_t start_step, reader.Int("start_step", 4, 1));
  return MedianStopSettings{.min_trials_required = static_cast<int>(std::min(min_trials, kMax)),
                            .start_step = static_cast<int>(std::min(start_step, kMax))};
}

bool ShouldStopByMedian(const MedianStopSettings& settings, std::span<const double> running,
                        std::span<const std::vector<double>> finished) {
  size_t step = running.size();
  if (step == 0 || step < static_cast<size_t>(settings.start_step)) return false;
  std::vector<double> peers;
  for (const std::vector<double>& losses : finished) {
    if (losses.size() >= step) peers.push_back(BestOfFirst(losses, step));
  }
  if (peers.empty() || peers.size() < static_cast<size_t>(settings.min_trials_required)) {
    return false;
  }
  return BestOfFirst(running, step) > Median(std::move(peers));
}

const std::vector<std::string>& EarlyStoppingNames() {
  static const std::vector<std::string> kNames = {"medianstop"};
  return kNames;
}

}  // namespace trainyard::tune
