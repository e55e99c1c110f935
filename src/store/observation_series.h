// How a log's series are kept: each value added to its metric's exact
// summary, and which values stay rows as a series grows (observation_log.h
// says what is kept). Pure; SqliteStore writes what it decides. Internal
// to store/.
#pragma once

#include <map>
#include <string>

#include "api/json.h"
#include "store/observation_log.h"

namespace trainyard::store {

// Adds `row` (the `seq`-th of its log) to `series`: its place is the
// series' count so far, which it returns.
int64_t Observe(ObservationSeries& series, const ObservationRow& row, int64_t seq);

// Whether the value at `index` is kept as a row at the series' stride.
inline bool KeptAt(const ObservationSeries& series, int64_t index) {
  return index % series.stride == 0;
}

// The rows a metric may keep in a log of `metrics` metrics.
int64_t KeptCap(size_t metrics);

// Doubles `series`' stride until its rows fit `cap`; whether it changed.
bool Thin(ObservationSeries& series, int64_t cap);

// The series as stored, and back.
api::Json SeriesJson(const ObservationSeries& series);
ObservationSeries SeriesOf(const std::string& metric, const api::Json& body);

}  // namespace trainyard::store
