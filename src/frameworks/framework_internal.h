// Helpers shared by the framework plugins; not a public API.
#pragma once

#include <functional>
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
// What a kind's failure rule changes of the generic one.
struct FailureRules {
  // Workers may fail without failing the job (a TFJob with dynamic
  // workers carries on without a lost one).
  bool tolerate_failed_workers = false;
  // The Failed message for `count` failed replicas of `type`; unset:
  // "<Kind> <name> is failed because <count> <type> replica(s) failed."
  std::function<std::string(int32_t count, const std::string& type)> failed_message;
};
Verdict Conclude(const api::TrainingJob& job, const ReplicaStates& states, bool success,
                 const std::string& success_message, const FailureRules& rules = {});

}  // namespace trainyard::frameworks::internal
