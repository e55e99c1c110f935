// Job conditions, as upstream's setCondition keeps them, with one fix: the
// condition just set is moved to the end, so the last one is always the
// job's current state (kubectl's STATE column shows the last one; upstream
// could show "Running" after success, issues #1711 and #1650).
//
//  - once Failed is True, nothing changes any more;
//  - the same type, status, reason and message again is a no-op;
//  - the same status keeps its lastTransitionTime;
//  - Running and Restarting replace each other;
//  - Succeeded or Failed turn a Running condition False.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "api/training_job.h"
#include "common/clock.h"

namespace trainyard::controller {

// Returns whether anything changed. `now` is RFC 3339.
bool SetCondition(std::vector<api::JobCondition>& conditions, const std::string& type,
                  const std::string& status, const std::string& reason, const std::string& message,
                  const std::string& now);

const api::JobCondition* FindCondition(const std::vector<api::JobCondition>& conditions,
                                       const std::string& type);
bool IsTrue(const std::vector<api::JobCondition>& conditions, const std::string& type);

// Succeeded or Failed is True.
bool IsFinished(const std::vector<api::JobCondition>& conditions);

// Puts `next` in place of the condition of its type, or adds it, as
// Kubernetes' condition helpers do (meta.SetStatusCondition): one whose
// status stays keeps its lastTransitionTime. For any condition type with
// `type`, `status` and `last_transition_time` (a batch Job's, a JobSet's,
// a TrainJob's). Returns whether its status changed (or it is new).
template <class Condition>
bool PutCondition(std::vector<Condition>& conditions, Condition next) {
  auto it = std::find_if(conditions.begin(), conditions.end(),
                         [&](const Condition& c) { return c.type == next.type; });
  if (it == conditions.end()) {
    conditions.push_back(std::move(next));
    return true;
  }
  bool changed = it->status != next.status;
  if (!changed) next.last_transition_time = it->last_transition_time;
  *it = std::move(next);
  return changed;
}

// ttlSecondsAfterFinished as Kubernetes' TTL controller applies it: how
// long until an object that finished at `finished` is due for deletion
// (zero or less: it is due); nullopt when it has no TTL or has not
// finished.
inline std::optional<Duration> TtlLeft(std::optional<int64_t> ttl_seconds,
                                       std::optional<TimePoint> finished, TimePoint now) {
  if (!ttl_seconds || !finished) return std::nullopt;
  return *finished + std::chrono::seconds(*ttl_seconds) - now;
}

}  // namespace trainyard::controller
