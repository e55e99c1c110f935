// Observation logs: the metric values each Katib trial reported, in the
// order they were collected (Katib keeps them in MySQL's observation_logs
// table; here they share the object store's SQLite file, so they are as
// durable as the trial that owns them, and written in the same transaction).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace trainyard::store {

// A value logged without a step (MLflow's steps may be any int64, negative
// ones too).
inline constexpr int64_t kNoStep = INT64_MIN;

struct ObservationRow {
  int64_t time_us = 0;  // the line's own timestamp, or when it was read
  std::string metric;
  std::string value;  // as reported: Katib keeps metric values as text
  // The training step it was logged at (MLflow's); kNoStep when none was
  // given, and the value's place among its metric's values stands for it.
  int64_t step = kNoStep;
  // Read back: the value's place among its metric's values (0 first),
  // which thinning (below) leaves as it was.
  int64_t index = 0;
  // Its step, or its place where it was logged without one.
  int64_t StepOrIndex() const { return step != kNoStep ? step : index; }
  bool operator==(const ObservationRow&) const = default;
};

// What a log keeps, however much a job prints: a metric's values are rows
// up to kKeptPerMetric of them (fewer when the log has many metrics, so
// that a log never holds more than kKeptPerLog); past that, one in every
// `stride` is kept (the stride doubling as the values do, as TensorBoard
// thins a long run), and its latest value always. Its count, minimum,
// maximum and latest are kept exactly, whatever is thinned. A log takes at
// most kMetricsPerLog metrics; values of any other are counted, not kept.
inline constexpr int64_t kKeptPerMetric = 10'000;
inline constexpr int64_t kKeptPerLog = 200'000;
inline constexpr size_t kMetricsPerLog = 1'000;

// One metric of a log: how many values it had, and its exact summary.
struct ObservationSeries {
  std::string metric;
  int64_t count = 0;   // values collected
  int64_t stride = 1;  // one value in `stride` is kept as a row
  // Over the numeric values, as tune::Summarize: "unavailable" when none.
  std::string min = "unavailable";
  std::string max = "unavailable";
  // The value of the greatest time (ties: the later one), as Katib's
  // metricStrategy "latest" reads it.
  ObservationRow latest;
  // The value of the greatest step (ties: the greater time), as MLflow
  // shows a metric's value.
  ObservationRow top;
  // The last value appended, and its place in the log's order.
  ObservationRow last;
  int64_t last_seq = 0;
  bool operator==(const ObservationSeries&) const = default;
};

struct ObservationSummary {
  std::vector<ObservationSeries> series;  // by metric name
  // Values of metrics past kMetricsPerLog: counted, not kept.
  int64_t dropped = 0;
  // Whether any metric's values were thinned.
  bool Thinned() const;
};

// Which of a log's rows to read: one metric's (empty: every one), those
// after `after` in the log's order (-1: from the first), at most `limit`.
struct ObservationQuery {
  std::string metric;
  int64_t after = -1;
  size_t limit = SIZE_MAX;
};

struct ObservationPage {
  std::vector<ObservationRow> rows;
  // Where the next page begins (pass as `after`); -1 when this was the last.
  int64_t next = -1;
};

// The log a job's own metrics go to: "PyTorchJob ns/name" (a trial's is
// "ns/name", so the two never meet).
inline std::string JobObservationsId(const std::string& kind, const std::string& namespace_,
                                     const std::string& name) {
  return kind + " " + namespace_ + "/" + name;
}

class ObservationLog {
 public:
  virtual ~ObservationLog() = default;
  // Appends `rows` to the log of `trial` ("namespace/name"), after those it
  // has, and records that the collector has read `source` (a file the
  // trial's metrics come from; empty: none) up to byte `read_to`, in the
  // same transaction: after a crash the collector resumes there, and no row
  // is lost or counted twice. Inside a write group they are durable with
  // the group.
  virtual Status AppendObservations(const std::string& trial,
                                    const std::vector<ObservationRow>& rows,
                                    const std::string& source, int64_t read_to) = 0;
  // Where the collector has read `source` up to (0: nothing yet).
  virtual Result<int64_t> ObservationsReadTo(const std::string& source) const = 0;
  // The rows of `trial`, in the order appended (none: an empty list): the
  // values kept, and each metric's latest.
  Result<std::vector<ObservationRow>> ListObservations(const std::string& trial) const;
  // A page of them.
  virtual Result<ObservationPage> ListObservations(const std::string& trial,
                                                   const ObservationQuery& query) const = 0;
  // Each metric's count and exact summary.
  virtual Result<ObservationSummary> SummarizeObservations(const std::string& trial) const = 0;
  // Drops the trial's rows and the read offsets of its sources.
  virtual Status DeleteObservations(const std::string& trial) = 0;
};

inline bool ObservationSummary::Thinned() const {
  for (const ObservationSeries& s : series) {
    if (s.stride > 1) return true;
  }
  return false;
}

inline Result<std::vector<ObservationRow>> ObservationLog::ListObservations(
    const std::string& trial) const {
  ASSIGN_OR_RETURN(ObservationPage page, ListObservations(trial, ObservationQuery{}));
  return std::move(page.rows);
}

}  // namespace trainyard::store
