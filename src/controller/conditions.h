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

#include "api/jobset.h"
#include "api/json.h"
#include "api/training_job.h"

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

// A metav1.Condition (a JobSet's, a TrainJob's), put as PutCondition
// does; `now` is RFC 3339.
inline bool PutCondition(std::vector<api::MetaCondition>& conditions, const std::string& type,
                         const std::string& status, const std::string& reason,
                         const std::string& message, const std::string& now) {
  return PutCondition(conditions, api::MetaCondition{.type = type,
                                                     .status = status,
                                                     .last_transition_time = now,
                                                     .reason = reason,
                                                     .message = message});
}

// A condition as the object was stored before this reconcile: what an
// event recorder compares with, so that each change is told once.
struct StoredCondition {
  std::string status;
  std::string reason;
};
// The condition of `type` in `stored`'s status.conditions, if any.
std::optional<StoredCondition> StoredConditionOf(const api::Json& stored, const std::string& type);

}  // namespace trainyard::controller
