#include "kube/rate_limiter.h"

#include <algorithm>

namespace trainyard::kube {

RateLimiter::RateLimiter(double qps, int burst)
    : qps_(qps), burst_(std::max(1, burst)), tokens_(std::max(1, burst)) {}

Duration RateLimiter::Reserve(TimePoint now) {
  if (qps_ <= 0) return Duration::zero();
  MutexLock lock(mu_);
  if (started_ && now > last_) {
    double elapsed = std::chrono::duration<double>(now - last_).count();
    tokens_ = std::min(burst_, tokens_ + elapsed * qps_);
  }
  if (!started_ || now > last_) last_ = now;
  started_ = true;
  tokens_ -= 1;
  if (tokens_ >= 0) return Duration::zero();
  return std::chrono::duration_cast<Duration>(std::chrono::duration<double>(-tokens_ / qps_));
}

}  // namespace trainyard::kube
