// PyTorchJob: MASTER_ADDR/PORT, WORLD_SIZE, RANK and torchrun's PET_*
// variables, as upstream's pytorch envvar.go and elastic.go inject them.
//
// Fixed upstream defects: a worker-only, non-elastic job gets the same
// MASTER_*/RANK/WORLD_SIZE contract with worker-0 as master (upstream gives
// it none); nprocPerNode auto/gpu/cpu is resolved to the number of processes
// torchrun will really start here, and WORLD_SIZE and PET_NPROC_PER_NODE
// agree with it (upstream counts 1 per node for anything not an integer).
#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "frameworks/framework_internal.h"

namespace trainyard::frameworks {
namespace {

// Whole CPUs the replica's pytorch container asks for (limit, else
// request), at least 1.
int32_t CpuCount(const api::TrainingJob& job, const ReplicaRef& replica) {
  const api::Container* c = DefaultContainer(job, replica.type);
  if (c == nullptr) return 1;
  for (const api::ResourceList* list : {&c->resources.limits, &c->resources.requests}) {
    auto it = list->find("cpu");
    if (it != list->end()) return static_cast<int32_t>(std::max<int64_t>(1, it->second.Value()));
  }
  return 1;
}

// The processes torchrun starts in `replica`.
int32_t ProcessesPerNode(const api::TrainingJob& job, const ReplicaRef& replica,
                         const Placement& placement) {
  std::string value = job.spec.nproc_per_node.value_or("auto");
  if (!job.spec.nproc_per_node && job.spec.elastic_policy &&
      job.spec.elastic_policy->n_proc_per_node) {
    return *job.spec.elastic_policy->n_proc_per_node;
  }
  int32_t n = 0;
  auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
  if (ec == std::errc() && ptr == value.data() + value.size() && n > 0) return n;
  auto gpus = placement.gpus.find(replica);
  int32_t gpu_count = gpus == placement.gpus.end() ? 0 : gpus->second;
  if (value == "cpu") return CpuCount(job, replica);
  return gpu_count > 0 ? gpu_count : 1;  // auto and gpu
}

class PyTorch final : public Framework {
 public:
  Result<Env> InjectedEnv(const api::TrainingJob& job, const ReplicaRef& replica, size_t,
                          const Placement& placement) const override {
    Env env = {{"PYTHONUNBUFFERED", "1"}};
    bool has_master = job.FindReplica("Master") != nullptr;
    bool elastic = job.spec.elastic_policy.has_value();
    if (has_master || !elastic) {
      ReplicaRef master = has_master ? ReplicaRef{"Master", 0} : ReplicaRef{"Worker", 0};
      int port = placement.PortOf(master.type, master.index);
      if (port == 0) return FailedPreconditionError("port not found for " + master.type + "-0");
      int32_t world = 0;
      for (const ReplicaRef& r : AllReplicas(job)) world += ProcessesPerNode(job, r, placement);
      int32_t rank = replica.type == "Worker" && has_master ? replica.index + 1 : replica.index;
      env.insert(env.end(), {{"MASTER_PORT", std::to_string(port)},
                             {"PET_MASTER_PORT", std::to_string(port)},
                             {"MASTER_ADDR", placement.HostOf(job, master)},
                             {"PET_MASTER_ADDR", placement.HostOf(job, master)},
                             {"WORLD_SIZE", std::to_string(world)},
                             {"RANK", std::to_string(rank)},
                             {"PET_NODE_RANK", std::to_string(rank)}});
    }
    env.emplace_back("PET_NPROC_PER_NODE",
                     std::to_string(ProcessesPerNode(job, replica, placement)));
    if (!elastic) {
      env.emplace_back("PET_NNODES", std::to_string(job.TotalReplicas()));
      return env;
    }
    const api::ElasticPolicy& policy = *job.spec.elastic_policy;
    int port = policy.rdzv_port.value_or(placement.PortOf("Worker", 0));
    std::string host =
        policy.rdzv_host.empty() ? placement.HostOf(job, {"Worker", 0}) : policy.rdzv_host;
    env.emplace_back("PET_RDZV_ENDPOINT", fmt::format("{}:{}", host, port));
    env.emplace_back("PET_RDZV_BACKEND",
                     policy.rdzv_backend.empty() ? "c10d" : policy.rdzv_backend);
    int32_t workers = job.Replicas("Worker");
    env.emplace_back("PET_NNODES", fmt::format("{}:{}", policy.min_replicas.value_or(workers),
                                               policy.max_replicas.value_or(workers)));
    if (policy.max_restarts)
      env.emplace_back("PET_MAX_RESTARTS", std::to_string(*policy.max_restarts));
    if (!policy.rdzv_id.empty()) env.emplace_back("PET_RDZV_ID", policy.rdzv_id);
    std::string conf;
    bool user_is_host = false;
    for (const api::RdzvConf& kv : policy.rdzv_conf) {
      if (!conf.empty()) conf += ',';
      conf += kv.key + "=" + kv.value;
      user_is_host |= kv.key == "is_host";
    }
    // On Kubernetes only worker-0's hostname matches the rendezvous host, so
    // only it serves c10d's store; on one machine every replica's host is
    // 127.0.0.1, so say which one serves, unless the user already did.
    if (!placement.service_dns && policy.rdzv_host.empty() && !user_is_host) {
      if (!conf.empty()) conf += ',';
      conf += replica.type == "Worker" && replica.index == 0 ? "is_host=true" : "is_host=false";
    }
    if (!conf.empty()) env.emplace_back("PET_RDZV_CONF", conf);
    if (policy.standalone.value_or(false)) env.emplace_back("PET_STANDALONE", "");
    return env;
  }

  Verdict Evaluate(const api::TrainingJob& job, const ReplicaStates& states) const override {
    const std::string& name = job.metadata.name;
    if (job.FindReplica("Master") != nullptr) {
      bool done = internal::CountsOf(states, "Master").succeeded == job.Replicas("Master");
      return internal::Conclude(job, states, done,
                                fmt::format("PyTorchJob {} is successfully completed.", name));
    }
    int32_t succeeded = internal::CountsOf(states, "Worker").succeeded;
    // An elastic job is done when any worker finishes: the others have left
    // the rendezvous with it.
    bool done = succeeded == job.Replicas("Worker") ||
                (job.spec.elastic_policy.has_value() && succeeded > 0);
    return internal::Conclude(
        job, states, done,
        fmt::format("PyTorchJob {}/{} successfully completed.", job.metadata.namespace_, name));
  }

  bool IsMasterRole(const api::TrainingJob& job, const ReplicaRef& r) const override {
    return job.FindReplica("Master") != nullptr ? r.type == "Master"
                                                : r.type == "Worker" && r.index == 0;
  }
};

}  // namespace

const Framework& PyTorchFramework() {
  static const PyTorch framework;
  return framework;
}

}  // namespace trainyard::frameworks
