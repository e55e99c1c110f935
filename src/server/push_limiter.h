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
#include "server/api_status.h"

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

// A TrainJob's trainer reporting its progress (KEP-2779), on trainyard
// server's API and the operator's status server alike: a few a second per
// TrainJob at most (upstream's SDK sends one every 5 seconds), and the 429
// beyond, saying so.
inline constexpr double kTrainerPushesPerSecond = 2;
inline constexpr double kTrainerPushBurst = 10;
ApiError TrainerPushesTooFast(const std::string& namespace_, const std::string& name);

}  // namespace trainyard::server
