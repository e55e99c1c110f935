// What Katib Experiments and OptimizationJobs share of early stopping
// (medianstop): its settings, and a trial's reported values of the
// objective, in order, as losses.
#pragma once

#include <string>
#include <vector>

#include "api/katib.h"
#include "common/status.h"
#include "store/observation_log.h"
#include "tune/median_stop.h"

namespace trainyard::controller {

Result<tune::MedianStopSettings> MedianStopOf(const std::vector<api::AlgorithmSetting>& settings);

// `metric`'s values in the log `log_id`, in order (printed and pushed
// alike), negated when it is maximized; text that is no number is left out.
Result<std::vector<double>> ObservedLosses(const store::ObservationLog& log,
                                           const std::string& log_id, const std::string& metric,
                                           bool maximize);

}  // namespace trainyard::controller
