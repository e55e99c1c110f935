// PaddleJob: job id, node count and the PADDLE_MASTER endpoint, as upstream's
// paddlepaddle envvar.go injects them: the Master in parameter-server mode,
// worker-0 in collective mode. `$(POD_IP_DUMMY)` is expanded by the engine
// as Kubernetes expands `$(VAR)` references.
#include <fmt/format.h>

#include "frameworks/framework_internal.h"

namespace trainyard::frameworks {
namespace {

class Paddle final : public Framework {
 public:
  Result<Env> InjectedEnv(const api::TrainingJob& job, const ReplicaRef& replica, size_t,
                          const Placement& placement) const override {
    Env env = {{"PYTHONUNBUFFERED", "1"},
               {"PADDLE_JOB_ID", job.metadata.name},
               {"PADDLE_NNODES", std::to_string(job.TotalReplicas())}};
    bool ps_mode = job.FindReplica("Master") != nullptr;
    ReplicaRef head = ps_mode ? ReplicaRef{"Master", 0} : ReplicaRef{"Worker", 0};
    int port = placement.PortOf(head.type, head.index);
    if (port == 0) port = job.info().port;
    if (replica == head) {
      // Upstream takes the pod's IP from the downward API; its own headless
      // Service's name resolves to the same address.
      env.emplace_back("POD_IP_DUMMY", placement.HostOf(job, head));
      env.emplace_back("PADDLE_MASTER", fmt::format("$(POD_IP_DUMMY):{}", port));
    } else {
      env.emplace_back("PADDLE_MASTER", fmt::format("{}:{}", placement.HostOf(job, head), port));
    }
    if (ps_mode) {
      env.emplace_back(replica.type == "Master" ? "PADDLE_SERVER_NUM" : "PADDLE_TRAINER_NUM", "1");
    }
    return env;
  }

  Verdict Evaluate(const api::TrainingJob& job, const ReplicaStates& states) const override {
    std::string driver = job.FindReplica("Master") != nullptr ? "Master" : "Worker";
    bool done = internal::CountsOf(states, driver).succeeded == job.Replicas(driver);
    return internal::Conclude(
        job, states, done,
        fmt::format("PaddleJob {} is successfully completed.", job.metadata.name));
  }

  bool IsMasterRole(const api::TrainingJob& job, const ReplicaRef& r) const override {
    return job.FindReplica("Master") != nullptr ? r.type == "Master"
                                                : r.type == "Worker" && r.index == 0;
  }
};

}  // namespace

const Framework& PaddleFramework() {
  static const Paddle framework;
  return framework;
}

}  // namespace trainyard::frameworks
