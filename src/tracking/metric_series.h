// A metric log as series to draw: per metric, its values by step, and a
// long one downsampled to a bounded number of buckets, each keeping the
// lowest and highest value in it (so a spike is never averaged away), as
// the dashboard's charts ask for it and again for a zoomed range.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "api/json.h"
#include "store/observation_log.h"

namespace trainyard::tracking {

struct SeriesOptions {
  std::string metric;  // empty: every metric
  size_t points = 1000;
  std::optional<int64_t> from_step;  // inclusive
  std::optional<int64_t> to_step;    // inclusive
};

// {"kind": "MetricSeries", "series": [{"name", "count" (values in range),
// "step": [...], "time": [seconds], "min": [...], "max": [...], "value":
// [...]}]}: each point the first step and time of its bucket, its lowest,
// highest and last value (a curve to compare by). A value logged without a
// step stands at its place among its metric's values (from 0); values that
// are no finite number are left out.
api::Json MetricSeries(const std::vector<store::ObservationRow>& rows,
                       const SeriesOptions& options);

}  // namespace trainyard::tracking
