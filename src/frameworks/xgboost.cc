// XGBoostJob: the tracker's address on the Master, ranks and world size, as
// upstream's xgboost controller injects them into every container.
#include <fmt/format.h>

#include "frameworks/framework_internal.h"

namespace trainyard::frameworks {
namespace {

class XGBoost final : public Framework {
 public:
  Result<Env> InjectedEnv(const api::TrainingJob& job, const ReplicaRef& replica, size_t,
                          const Placement& placement) const override {
    int master_port = placement.PortOf("Master", 0);
    if (master_port == 0) return FailedPreconditionError("port not found for Master-0");
    int32_t total = job.TotalReplicas();
    int32_t masters = job.Replicas("Master");
    int32_t rank = replica.type == "Worker" ? replica.index + masters : replica.index;
    Env env = {{"MASTER_PORT", std::to_string(master_port)},
               {"MASTER_ADDR", placement.HostOf(job, {"Master", 0})},
               {"WORLD_SIZE", std::to_string(total)},
               {"RANK", std::to_string(rank)},
               {"PYTHONUNBUFFERED", "1"}};
    if (total > 1) {
      // One address per worker, as upstream (on one machine every one is
      // this host). A worker's port is its own; the master is told worker-0's.
      int32_t index = replica.type == "Worker" ? replica.index : 0;
      env.emplace_back("WORKER_PORT", std::to_string(placement.PortOf("Worker", index)));
      std::string addrs;
      for (int32_t i = 0; i + 1 < total; ++i) {
        addrs += (i > 0 ? "," : "") + placement.HostOf(job, {"Worker", i});
      }
      env.emplace_back("WORKER_ADDRS", addrs);
    }
    return env;
  }

  Verdict Evaluate(const api::TrainingJob& job, const ReplicaStates& states) const override {
    bool done = internal::CountsOf(states, "Master").succeeded == job.Replicas("Master");
    return internal::Conclude(
        job, states, done,
        fmt::format("XGBoostJob {} is successfully completed.", job.metadata.name));
  }

  bool IsMasterRole(const api::TrainingJob&, const ReplicaRef& r) const override {
    return r.type == "Master";
  }
};

}  // namespace

const Framework& XGBoostFramework() {
  static const XGBoost framework;
  return framework;
}

}  // namespace trainyard::frameworks
