// Observation logs: the metric values each Katib trial reported, in the
// order they were collected (Katib keeps them in MySQL's observation_logs
// table; here they share the object store's SQLite file, so they are as
// durable as the trial that owns them, and written in the same transaction).
#pragma once

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
  bool operator==(const ObservationRow&) const = default;
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
  // The rows of `trial`, in the order appended (none: an empty list).
  virtual Result<std::vector<ObservationRow>> ListObservations(const std::string& trial) const = 0;
  // Drops the trial's rows and the read offsets of its sources.
  virtual Status DeleteObservations(const std::string& trial) = 0;
};

}  // namespace trainyard::store
