// Client-side request limits, as client-go's token bucket: `qps` requests a
// second on average, up to `burst` at once after a quiet spell. Each call
// takes a token now or reserves the next one and says how long to wait for
// it, so callers are served in the order they asked. Thread-safe.
#pragma once

#include <mutex>

#include "common/clock.h"

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
  std::mutex mu_;
  double tokens_;         // guarded by mu_; negative: reserved ahead
  TimePoint last_{};      // guarded by mu_
  bool started_ = false;  // guarded by mu_
};

}  // namespace trainyard::kube
