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

#include <string>
#include <vector>

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

}  // namespace trainyard::controller
