// The ML policies of a TrainJob's runtime (torch, MPI, JAX, XGBoost, or
// none), as upstream's plugins apply them: how many pods each step runs,
// and the variables, ports, volumes and files the trainer's pods get.
#pragma once

#include <string>
#include <vector>

#include "controller/trainjob_build.h"

namespace trainyard::controller {

struct PolicyPlan {
  int32_t nodes = 1;         // the TrainJob's numNodes, else the policy's, else 1
  int32_t trainer_pods = 1;  // pods of the trainer step (MPI's launcher: 1)
  bool mpi = false;
  bool launcher_is_node = false;  // MPI's runLauncherAsNode
  int32_t node_pods = 1;          // MPI: pods of the `node` step
  int32_t slots = 1;              // MPI: processes per node
  std::string procs_per_node;     // torch: PET_NPROC_PER_NODE
  int64_t gpus = 0;               // per node, from resourcesPerNode or the runtime
};

PolicyPlan PlanPolicy(const TrainJobSource& job, const RuntimeSource& runtime);

// Adds the policy's variables, ports and volumes to the JobSet `spec` (as
// JSON), and the ConfigMaps its pods read to `config_maps`.
void ApplyPolicy(const TrainJobSource& job, const RuntimeSource& runtime, const PolicyPlan& plan,
                 const BuildOptions& options, api::Json& spec, std::vector<api::Json>& config_maps);

// The variables a policy sets and a TrainJob's env may not.
std::vector<std::string> ReservedEnv(const api::MlPolicy& policy);

}  // namespace trainyard::controller
