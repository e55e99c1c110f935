// Client-side request limits, as client-go's token bucket: `qps` requests a
// second on average, up to `burst` at once after a quiet spell. Each call
// takes a token now or reserves the next one and says how long to wait for
// it, so callers are served in the order they asked. Thread-safe.
#pragma once

#include "common/clock.h"
#include "common/mutex.h"

namespace trainyard::kube {

class RateLimiter {
 public:
  // qps <= 0: no limit.
  RateLimiter(double qps, int burst);

  // How long the caller must wait, from `now`, before its request may go.
  Duration Reserve(TimePoint now);

 private:
  const double qps_;
  const double burst_;
  Mutex mu_;
  double tokens_ TRAINYARD_GUARDED_BY(mu_);  // negative: reserved ahead
  TimePoint last_ TRAINYARD_GUARDED_BY(mu_) = TimePoint();
  bool started_ TRAINYARD_GUARDED_BY(mu_) = false;
};

}  // namespace trainyard::kube
