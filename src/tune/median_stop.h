// Early stopping by the median rule (Katib's `medianstop`, done properly).
//
// Katib evaluates its rule once, at the start_step-th report, against the
// mean of the other trials' averages (its defect). trainyard applies the rule
// at every report from start_step on, against a true median, as Optuna's
// MedianPruner does: after the running trial's s-th report (s >= start_step)
// it is stopped when its best loss so far is worse than the median of the
// best losses that finished trials (succeeded or early-stopped) had reached
// by their own s-th report, provided at least min_trials_required finished
// trials reported s values.
#pragma once

#include <span>
#include <vector>

#include "common/status.h"
#include "tune/sampler.h"

namespace trainyard::tune {

struct MedianStopSettings {
  int min_trials_required = 3;  // > 0
  int start_step = 4;           // >= 1
};

// Katib's settings `min_trials_required` and `start_step`; unknown settings
// are rejected with upstream's message.
Result<MedianStopSettings> ParseMedianStopSettings(const Settings& settings);

// `running`: the trial's reported losses so far, in report order.
// `finished`: each finished trial's losses, in report order.
bool ShouldStopByMedian(const MedianStopSettings& settings, std::span<const double> running,
                        std::span<const std::vector<double>> finished);

// The early-stopping algorithms trainyard knows (Katib's spelling).
const std::vector<std::string>& EarlyStoppingNames();

}  // namespace trainyard::tune
