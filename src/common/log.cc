#include "common/log.h"

#include <cstdio>

namespace trainyard {

void StderrLogger::Write(LogLevel level, std::string_view line) {
  if (level < min_level_) return;
  MutexLock lock(mu_);
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fputc('\n', stderr);
  std::fflush(stderr);
}

Logger& StderrLog() {
  static StderrLogger* logger = new StderrLogger();  // never destroyed: logged to at exit too
  return *logger;
}

}  // namespace trainyard
