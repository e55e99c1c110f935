// Helpers for the frameworks tests.
#pragma once

#include <string>

#include "api/tests/test_util.h"
#include "api/training_job.h"
#include "frameworks/framework.h"

namespace trainyard::frameworks::testing {

// Decodes, defaults and validates a job; fails the test when it is invalid.
inline api::TrainingJob Job(const std::string& yaml) {
  return api::testing::ValidTrainingJob(yaml);
}

// Ports 20000, 20001, ... to every replica in AllReplicas() order.
Placement LocalPlacement(const api::TrainingJob& job);

// The env of container `container` of `type`-`index`.
Env EnvOf(const api::TrainingJob& job, const std::string& type, int32_t index,
          const Placement& placement, size_t container = 0);

}  // namespace trainyard::frameworks::testing
