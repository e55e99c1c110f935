// What `trainyard metrics` prints of a job's own metrics (or a trial's),
// from the ObservationLog document its `observations` subresource serves:
// each metric's count, last, min and max values with a sparkline of them
// in order; or, for one metric, every value with its step (as logged:
// MLflow's, an event file's; else its place among that metric's values,
// from 0) and time.
#pragma once

#include <string>
#include <vector>

#include "api/json.h"

namespace trainyard::cli {

// `values` in `width` characters of ▁▂▃▄▅▆▇█, each the mean of its share of
// them; "" for none.
std::string Sparkline(const std::vector<double>& values, size_t width);

// The summary of every metric in `log`, or the history of `metric` (empty:
// the summary). A metric `log` lacks is said, with the ones it has.
std::string MetricsView(const api::Json& log, const std::string& metric);
// Whether `log` holds values of `metric`.
bool HasMetric(const api::Json& log, const std::string& metric);

}  // namespace trainyard::cli
