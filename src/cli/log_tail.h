// Follows the log files of a run's pods and prints each complete line once,
// prefixed with its replica: "[worker-1] loss=0.31", or with its replica
// and container for any container but the pod's first:
// "[master-0/fetch] downloaded".
#pragma once

#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "engine/engine.h"

namespace trainyard::cli {

enum class LogMode { kAll, kMaster, kNone };

// The most of one line held in memory per replica: a longer one is printed
// in pieces of this size, so a replica writing 100 MB without a newline
// costs 64 KiB here, not 100 MB.
inline constexpr size_t kMaxLogLine = 64 * 1024;

// Splits bytes into lines (without their newlines), holding at most
// `max_line` bytes of an unfinished one.
class LineSplitter {
 public:
  using Emit = std::function<void(std::string_view line)>;
  explicit LineSplitter(size_t max_line = kMaxLogLine) : max_line_(max_line) {}
  // Emits every line `bytes` completes, and every full piece of a longer one.
  void Feed(std::string_view bytes, const Emit& emit);
  // Emits what is left of a line without a newline yet.
  void Flush(const Emit& emit);

 private:
  size_t max_line_;
  std::string partial_;
};

class LogTail {
 public:
  // Follows every pod the store holds now or gets later, however briefly:
  // a replica that starts, writes and is deleted between two polls (a
  // worker still running when its job succeeds) is printed too.
  // `hide_trials`: not a Katib trial's pods (an experiment shows its
  // table), nor those of a JobSet whose name starts with one of
  // `trial_prefixes` (an OptimizationJob's trials, "tune-trial-").
  LogTail(engine::Engine& engine, LogMode mode, bool several_jobs, std::FILE* out,
          bool hide_trials = false, std::vector<std::string> trial_prefixes = {});
  ~LogTail();
  LogTail(const LogTail&) = delete;
  LogTail& operator=(const LogTail&) = delete;
  // Prints what was appended since the last call; `flush` prints a last
  // line that has no newline yet.
  void Poll(bool flush = false);

 private:
  // Starts following `doc`'s log file, once per pod.
  void Follow(const api::Json& doc);

  struct Followed {
    std::string prefix;
    long offset = 0;
    LineSplitter lines;
  };
  engine::Engine& engine_;
  LogMode mode_;
  bool several_jobs_;
  bool hide_trials_;
  std::vector<std::string> trial_prefixes_;
  std::FILE* out_;
  std::map<std::string, Followed> files_;  // by path
  std::set<std::string> seen_;             // pods looked at, "<namespace>/<name>"
  std::optional<store::WatchId> watch_;    // for pods created and deleted between polls
};

}  // namespace trainyard::cli
