#include "server/push_limiter.h"

#include <fmt/format.h>

#include <algorithm>

namespace trainyard::server {
namespace {

// Beyond this many keys, those idle for a minute (their buckets full
// again) are dropped: the map is bounded by the jobs that push now.
constexpr size_t kManyKeys = 4096;
constexpr auto kIdle = std::chrono::minutes(1);

}  // namespace

bool PushLimiter::Allow(const std::string& key, TimePoint now) {
  MutexLock lock(mu_);
  if (buckets_.size() >= kManyKeys) {
    std::erase_if(buckets_, [&](const auto& entry) { return now - entry.second.last > kIdle; });
  }
  auto [it, added] = buckets_.try_emplace(key, Bucket{burst_, now});
  Bucket& bucket = it->second;
  if (!added && now > bucket.last) {
    double elapsed = std::chrono::duration<double>(now - bucket.last).count();
    bucket.tokens = std::min(burst_, bucket.tokens + elapsed * per_second_);
  }
  bucket.last = std::max(bucket.last, now);
  if (bucket.tokens < 1) return false;
  bucket.tokens -= 1;
  return true;
}

ApiError TrainerPushesTooFast(const std::string& namespace_, const std::string& name) {
  return MakeApiError(
      429, "TooManyRequests",
      fmt::format("TrainJob {}/{} reports its status more than {} times a second: report less "
                  "often (upstream's SDK sends one every 5 seconds)",
                  namespace_, name, kTrainerPushesPerSecond));
}

}  // namespace trainyard::server
