// What the layers below the command line say that is neither a status nor
// an event (a step retried, a file that could not be removed, a lease
// lost), through a logger they are given, with a level: the binary's
// writes them to stderr, a test's may keep them. Each component takes a
// `Logger*` in its options, the process's stderr logger by default.
#pragma once

#include <fmt/format.h>

#include <string>
#include <string_view>

#include "common/mutex.h"

namespace trainyard {

enum class LogLevel { kInfo, kWarning, kError };

class Logger {
 public:
  virtual ~Logger() = default;
  // One line, without its newline ("trainyard: ..."). Thread-safe.
  virtual void Write(LogLevel level, std::string_view line) = 0;

  template <class... Args>
  void Info(fmt::format_string<Args...> format, Args&&... args) {
    Write(LogLevel::kInfo, fmt::format(format, std::forward<Args>(args)...));
  }
  template <class... Args>
  void Warning(fmt::format_string<Args...> format, Args&&... args) {
    Write(LogLevel::kWarning, fmt::format(format, std::forward<Args>(args)...));
  }
  template <class... Args>
  void Error(fmt::format_string<Args...> format, Args&&... args) {
    Write(LogLevel::kError, fmt::format(format, std::forward<Args>(args)...));
  }
};

// Each line to stderr whole, at `min_level` and above.
class StderrLogger final : public Logger {
 public:
  explicit StderrLogger(LogLevel min_level = LogLevel::kInfo) : min_level_(min_level) {}
  void Write(LogLevel level, std::string_view line) override;

 private:
  LogLevel min_level_;
  Mutex mu_;  // lines from several threads never interleave
};

// The process's stderr logger: what options default to.
Logger& StderrLog();

}  // namespace trainyard
