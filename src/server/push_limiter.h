// A token bucket per key for pushes from jobs' own code (a TrainJob's
// trainer reporting its progress): `per_second` on average, `burst` at
// once; a push beyond them is refused (429), never queued, so that a
// trainer that reports in a tight loop costs the server nothing. Keys idle
// for a minute are forgotten once there are many. Thread-safe.
#pragma once

#include <map>
#include <string>

#include "common/clock.h"
#include "common/mutex.h"

namespace trainyard::server {

class PushLimiter {
 public:
  PushLimiter(double per_second, double burst) : per_second_(per_second), burst_(burst) {}
  // Whether a push for `key` may go now (it takes a token if so).
  bool Allow(const std::string& key, TimePoint now);

 private:
  struct Bucket {
    double tokens;
    TimePoint last;
  };
  const double per_second_;
  const double burst_;
  Mutex mu_;
  std::map<std::string, Bucket> buckets_ TRAINYARD_GUARDED_BY(mu_);
};

}  // namespace trainyard::server
