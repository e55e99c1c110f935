// ttlSecondsAfterFinished, as Kubernetes' TTL-after-finished controller
// applies it to a batch Job, and Kubeflow's and JobSet's controllers to
// theirs: a finished object is deleted that long after it finished.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include "common/clock.h"
#include "common/status.h"

namespace trainyard::controller {

// How long until an object that finished at `finished` is due for
// deletion (zero or less: it is due); nullopt when it has no TTL or has not
// finished.
inline std::optional<Duration> TtlLeft(std::optional<int64_t> ttl_seconds,
                                       std::optional<TimePoint> finished, TimePoint now) {
  if (!ttl_seconds || !finished) return std::nullopt;
  return *finished + std::chrono::seconds(*ttl_seconds) - now;
}

// What the TTL asked of an object this time.
struct TtlStep {
  std::optional<Duration> look_again;  // not due yet: when it will be
  bool deleted = false;                // due: it was deleted
};

// Once the object is due, `remove` deletes it (and what it owns, which its
// controller knows); until then, says when to look again.
inline Result<TtlStep> ExpireAfterTtl(std::optional<int64_t> ttl_seconds,
                                      std::optional<TimePoint> finished, TimePoint now,
                                      const std::function<Status()>& remove) {
  std::optional<Duration> left = TtlLeft(ttl_seconds, finished, now);
  if (!left) return TtlStep{};
  if (*left > Duration::zero()) return TtlStep{.look_again = left};
  RETURN_IF_ERROR(remove());
  return TtlStep{.deleted = true};
}

}  // namespace trainyard::controller
