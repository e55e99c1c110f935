#include "frameworks/tests/frameworks_test_util.h"

#include <gtest/gtest.h>

#include "api/validation.h"
#include "api/yaml.h"

namespace trainyard::frameworks::testing {

Placement LocalPlacement(const api::TrainingJob& job) {
  Placement placement;
  int port = 20000;
  for (const ReplicaRef& r : AllReplicas(job)) placement.ports[r] = port++;
  placement.mpi_hostfile = "/run/job/etc/mpi/hostfile";
  placement.mpi_rsh_agent = "/usr/lib/trainyard/rsh-agent";
  return placement;
}

Env EnvOf(const api::TrainingJob& job, const std::string& type, int32_t index,
          const Placement& placement, size_t container) {
  Result<Env> env = FrameworkFor(job.kind).InjectedEnv(job, {type, index}, container, placement);
  EXPECT_TRUE(env.ok()) << env.status().ToString();
  return env.ok() ? *env : Env{};
}

}  // namespace trainyard::frameworks::testing
