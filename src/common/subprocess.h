// Runs a helper program (skopeo, say) to its end: from an argv, never
// through a shell; its stdout and stderr read as one stream of lines.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"

namespace trainyard {

struct ToolRun {
  int exit_code = 0;   // 128 + the signal when one ended it
  std::string output;  // its last lines, at most kToolOutputKept bytes
};

inline constexpr size_t kToolOutputKept = 64 * 1024;

struct ToolOptions {
  // Added to (or replacing in) trainyard's own environment.
  std::vector<std::pair<std::string, std::string>> env;
  // Called with each line as it comes (without its newline).
  std::function<void(std::string_view)> on_line;
};

// Starts `argv` (argv[0] looked up on PATH) and waits for it. An error only
// when it could not start; a program that fails is a ToolRun whose
// exit_code says so. It dies with trainyard (PR_SET_PDEATHSIG).
Result<ToolRun> RunTool(const std::vector<std::string>& argv, const ToolOptions& options = {});

}  // namespace trainyard
