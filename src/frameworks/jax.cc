// JAXJob: the coordinator on worker-0 and each process's id, as upstream's
// jax envvar.go injects them into every container.
#include <fmt/format.h>

#include "frameworks/framework_internal.h"

namespace trainyard::frameworks {
namespace {

class Jax final : public Framework {
 public:
  Result<Env> InjectedEnv(const api::TrainingJob& job, const ReplicaRef& replica, size_t,
                          const Placement& placement) const override {
    int port = placement.PortOf("Worker", 0);
    if (port == 0) return FailedPreconditionError("default container port is not exposed");
    return Env{{"PYTHONUNBUFFERED", "1"},
               {"COORDINATOR_PORT", std::to_string(port)},
               {"COORDINATOR_ADDRESS", placement.HostOf(job, {"Worker", 0})},
               {"NUM_PROCESSES", std::to_string(job.TotalReplicas())},
               {"PROCESS_ID", std::to_string(replica.index)}};
  }

  Verdict Evaluate(const api::TrainingJob& job, const ReplicaStates& states) const override {
    bool done = internal::CountsOf(states, "Worker").succeeded == job.Replicas("Worker");
    return internal::Conclude(
        job, states, done, fmt::format("JAXJob {} is successfully completed.", job.metadata.name));
  }

  bool IsMasterRole(const api::TrainingJob&, const ReplicaRef& r) const override {
    return r.index == 0;
  }
};

}  // namespace

const Framework& JaxFramework() {
  static const Jax framework;
  return framework;
}

}  // namespace trainyard::frameworks
