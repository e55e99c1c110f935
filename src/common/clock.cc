#include "common/clock.h"

#include <ctime>

namespace trainyard {

RealClock& RealClock::Get() {
  static RealClock clock;
  return clock;
}

std::string FormatRfc3339(TimePoint t) {
  std::time_t seconds = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace trainyard
