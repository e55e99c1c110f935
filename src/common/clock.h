// Time comes from an injected Clock so that every timer is testable: real
// code takes a Clock&, tests pass a FakeClock that moves only when told.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "common/mutex.h"

namespace trainyard {

using TimePoint = std::chrono::system_clock::time_point;
using Duration = std::chrono::system_clock::duration;

class Clock {
 public:
  virtual ~Clock() = default;
  virtual TimePoint Now() const = 0;
};

class RealClock final : public Clock {
 public:
  TimePoint Now() const override { return std::chrono::system_clock::now(); }
  static RealClock& Get();
};

// A clock that moves only when Advance() or Set() is called. Safe to read
// from several threads while the test thread advances it.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(TimePoint start = TimePoint(std::chrono::seconds(1'700'000'000)))
      : now_(start) {}

  TimePoint Now() const override {
    MutexLock lock(mu_);
    return now_;
  }
  void Advance(Duration d) {
    MutexLock lock(mu_);
    now_ += d;
  }
  void Set(TimePoint t) {
    MutexLock lock(mu_);
    now_ = t;
  }

 private:
  mutable Mutex mu_;
  TimePoint now_ TRAINYARD_GUARDED_BY(mu_);
};

// RFC 3339 in UTC with second precision, as Kubernetes writes metav1.Time:
// "2026-11-21T09:30:00Z".
std::string FormatRfc3339(TimePoint t);
// The inverse of FormatRfc3339, for "YYYY-MM-DDTHH:MM:SSZ"; nullopt otherwise.
std::optional<TimePoint> ParseRfc3339(const std::string& text);
// Any RFC 3339 time, as Go's time.Parse(time.RFC3339Nano) takes it: a
// fraction of a second (dropped) and a Z or ±hh:mm offset.
std::optional<TimePoint> ParseRfc3339Offset(const std::string& text);

// A duration as Go writes one, the form Kubernetes components' flags take:
// "15s", "500ms", "1m30s", "1.5h" (units ns, us, ms, s, m, h); nullopt
// when malformed or negative.
std::optional<Duration> ParseGoDuration(std::string_view text);

}  // namespace trainyard
