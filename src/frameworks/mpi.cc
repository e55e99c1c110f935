// MPIJob: the launcher's mpirun reads a hostfile naming the worker replicas
// and starts its ranks through an rsh agent, as upstream's kubexec.sh does
// with `kubectl exec`; here the engine's agent starts them inside the named
// worker replica. Workers get nothing injected.
#include <fmt/format.h>

#include <algorithm>

#include "frameworks/framework_internal.h"

namespace trainyard::frameworks {
namespace {

// Upstream counts a launcher as a GPU one when a limit names a GPU.
bool IsGpuLauncher(const api::TrainingJob& job) {
  const api::ReplicaSpec* launcher = job.FindReplica("Launcher");
  if (launcher == nullptr || launcher->template_.spec.containers.empty()) return false;
  for (const auto& [name, quantity] : launcher->template_.spec.containers[0].resources.limits) {
    if (name.ends_with(".com/gpu") || name.find("gpu") != std::string::npos) return true;
  }
  return false;
}

int32_t Slots(const api::TrainingJob& job) { return job.spec.slots_per_worker.value_or(1); }

class Mpi final : public Framework {
 public:
  Result<Env> InjectedEnv(const api::TrainingJob& job, const ReplicaRef& replica,
                          size_t container_index, const Placement& placement) const override {
    if (replica.type != "Launcher" || container_index != 0) return Env{};
    const api::Container& c = job.FindReplica("Launcher")->template_.spec.containers[0];
    auto user_set = [&](const char* name) {
      return std::any_of(c.env.begin(), c.env.end(),
                         [&](const api::EnvVar& v) { return v.name == name; });
    };
    Env env = {{"OMPI_MCA_plm_rsh_agent", placement.mpi_rsh_agent},
               {"OMPI_MCA_orte_default_hostfile", placement.mpi_hostfile}};
    if (!IsGpuLauncher(job)) {
      env.emplace_back("NVIDIA_VISIBLE_DEVICES", "");
      env.emplace_back("NVIDIA_DRIVER_CAPABILITIES", "");
    }
    if (!user_set("I_MPI_HYDRA_BOOTSTRAP")) env.emplace_back("I_MPI_HYDRA_BOOTSTRAP", "rsh");
    if (!user_set("I_MPI_HYDRA_BOOTSTRAP_EXEC")) {
      env.emplace_back("I_MPI_HYDRA_BOOTSTRAP_EXEC", placement.mpi_rsh_agent);
    }
    return env;
  }

  Verdict Evaluate(const api::TrainingJob& job, const ReplicaStates& states) const override {
    bool done = internal::CountsOf(states, "Launcher").succeeded > 0;
    return internal::Conclude(job, states, done,
                              fmt::format("MPIJob {}/{} successfully completed.",
                                          job.metadata.namespace_, job.metadata.name));
  }

  bool IsMasterRole(const api::TrainingJob&, const ReplicaRef& r) const override {
    return r.type == "Launcher";
  }
};

}  // namespace

const Framework& MpiFramework() {
  static const Mpi framework;
  return framework;
}

std::string MpiHostfile(const api::TrainingJob& job) {
  std::string out;
  if (IsGpuLauncher(job)) {
    out += fmt::format("{} slots={}\n", ReplicaName(job, {"Launcher", 0}), Slots(job));
  }
  for (int32_t i = 0; i < job.Replicas("Worker"); ++i) {
    out += fmt::format("{} slots={}\n", ReplicaName(job, {"Worker", i}), Slots(job));
  }
  return out;
}

}  // namespace trainyard::frameworks
