#include "common/clock.h"

#include <charconv>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>
#include <utility>

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

std::optional<TimePoint> ParseRfc3339(const std::string& text) {
  std::tm tm{};
  const char* end = strptime(text.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm);
  if (end == nullptr || *end != '\0') return std::nullopt;
  return std::chrono::system_clock::from_time_t(timegm(&tm));
}

std::optional<TimePoint> ParseRfc3339Offset(const std::string& text) {
  std::tm tm{};
  const char* rest = strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (rest == nullptr) return std::nullopt;
  if (*rest == '.') {  // a fraction of a second: kept to the second, as metav1.Time
    const char* digits = ++rest;
    while (*rest >= '0' && *rest <= '9') ++rest;
    if (rest == digits) return std::nullopt;
  }
  int offset_minutes = 0;
  if (*rest == 'Z' || *rest == 'z') {
    ++rest;
  } else if (*rest == '+' || *rest == '-') {
    int sign = *rest == '-' ? -1 : 1;
    int hours = 0, minutes = 0;
    if (std::sscanf(rest + 1, "%2d:%2d", &hours, &minutes) != 2 || hours > 23 || minutes > 59 ||
        std::strlen(rest) != 6) {
      return std::nullopt;
    }
    offset_minutes = sign * (hours * 60 + minutes);
    rest += 6;
  } else {
    return std::nullopt;
  }
  if (*rest != '\0') return std::nullopt;
  return std::chrono::system_clock::from_time_t(timegm(&tm)) - std::chrono::minutes(offset_minutes);
}

std::optional<Duration> ParseGoDuration(std::string_view text) {
  static constexpr std::pair<std::string_view, double> kUnits[] = {
      {"ns", 1e-9}, {"us", 1e-6}, {"ms", 1e-3}, {"s", 1}, {"m", 60}, {"h", 3600}};
  if (text.empty()) return std::nullopt;
  if (text == "0") return Duration::zero();
  double seconds = 0;
  while (!text.empty()) {
    size_t digits = text.find_first_not_of("0123456789.");
    if (digits == 0 || digits == std::string_view::npos) return std::nullopt;
    double value = 0;
    const char* end = text.data() + digits;
    auto [stop, error] = std::from_chars(text.data(), end, value);
    if (error != std::errc() || stop != end) return std::nullopt;
    text.remove_prefix(digits);
    double scale = 0;
    // The two-letter units come first in kUnits: "ms" is not "m" then "s".
    for (const auto& [unit, factor] : kUnits) {
      if (text.starts_with(unit)) {
        scale = factor;
        text.remove_prefix(unit.size());
        break;
      }
    }
    if (scale == 0) return std::nullopt;
    seconds += value * scale;
  }
  // What int64 nanoseconds hold (292 years): beyond, the cast is undefined.
  if (!(seconds < 9.2e9)) return std::nullopt;
  return std::chrono::duration_cast<Duration>(std::chrono::duration<double>(seconds));
}

}  // namespace trainyard
