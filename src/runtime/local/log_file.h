// A container's log file holds every run of the container, one after the
// other; a restart appends the offset where its run begins to a small index
// beside it (`<log>.runs`, made only once a container restarts), so that
// `kubectl logs` shows the current run and `--previous` the one before.
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"

namespace trainyard::runtime {

struct LogSpan {
  int64_t begin = 0;
  int64_t end = -1;  // -1: to the end of the file, growing while the run runs
};

// Records that a new run of the container begins at the log's current end
// (nothing while the log is empty: a first run costs no index file).
Status MarkNewRun(const std::string& log_path);

// The current run's span, or the previous run's (NOT_FOUND when there was
// none: the container never restarted).
Result<LogSpan> RunSpan(const std::string& log_path, bool previous);

// The end of the current run's output, at most `max_bytes` and its last
// `max_lines` lines: what the kubelet's FallbackToLogsOnError makes a
// failed container's termination message. Empty when there is none.
std::string CurrentRunTail(const std::string& log_path, size_t max_bytes, size_t max_lines);

}  // namespace trainyard::runtime
