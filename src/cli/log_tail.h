// Follows the log files of a run's pods and prints each complete line once,
// prefixed with its replica: "[worker-1] loss=0.31".
#pragma once

#include <cstdio>
#include <map>
#include <set>
#include <string>

#include "engine/engine.h"

namespace trainyard::cli {

enum class LogMode { kAll, kMaster, kNone };

class LogTail {
 public:
  LogTail(engine::Engine& engine, LogMode mode, bool several_jobs, std::FILE* out)
      : engine_(engine), mode_(mode), several_jobs_(several_jobs), out_(out) {}
  // Prints what was appended since the last call; `flush` prints a last
  // line that has no newline yet.
  void Poll(bool flush = false);

 private:
  struct Followed {
    std::string prefix;
    long offset = 0;
    std::string partial;
  };
  engine::Engine& engine_;
  LogMode mode_;
  bool several_jobs_;
  std::FILE* out_;
  std::map<std::string, Followed> files_;  // by path
  std::set<std::string> seen_;             // pods looked at, "<namespace>/<name>"
};

}  // namespace trainyard::cli
