// Helpers shared by the framework plugins; not a public API.
#pragma once

#include <string>

#include "frameworks/framework.h"

namespace trainyard::frameworks::internal {

struct Counts {
  int32_t active = 0;  // running or about to restart
  int32_t succeeded = 0;
  int32_t failed = 0;
  int32_t restarting = 0;
};
Counts CountsOf(const ReplicaStates& states, const std::string& type);

// "<Kind>" + what: "PyTorchJobSucceeded".
std::string Reason(const api::TrainingJob& job, const std::string& what);

// The generic part of every kind's rules: a replica that failed for good
// fails the job; one being restarted makes the job Restarting; any running
// replica makes it Running. `success` has been decided by the kind.
Verdict Conclude(const api::TrainingJob& job, const ReplicaStates& states, bool success,
                 const std::string& success_message);

}  // namespace trainyard::frameworks::internal
