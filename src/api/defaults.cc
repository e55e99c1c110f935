#include "api/defaults.h"

#include <algorithm>

#include "api/registry.h"
#include "api/well_known.h"

namespace trainyard::api {
namespace {

// Renames "worker"/"WORKER" to "Worker" and so on. A key whose canonical
// spelling is already present stays as written, so that validation reports
// the clash instead of one spec silently replacing the other.
void NormaliseReplicaTypes(TrainingJob& job) {
  std::map<std::string, ReplicaSpec> normalised;
  std::vector<std::pair<std::string, ReplicaSpec>> clashing;
  for (auto& [type, spec] : job.spec.replica_specs) {
    std::string canonical = CanonicalReplicaType(job.kind, type);
    bool taken = job.spec.replica_specs.contains(canonical) || normalised.contains(canonical);
    if (canonical != type && taken) {
      clashing.emplace_back(type, std::move(spec));
    } else {
      normalised.emplace(canonical, std::move(spec));
    }
  }
  for (auto& [type, spec] : clashing) normalised.emplace(type, std::move(spec));
  job.spec.replica_specs = std::move(normalised);
}

// Upstream's setDefaultPort: the container named after the framework, else
// the first container, gets the framework port unless a port of that name
// is already there.
void SetDefaultPort(const KindInfo& info, PodSpec& pod) {
  if (pod.containers.empty()) return;
  auto it = std::find_if(pod.containers.begin(), pod.containers.end(),
                         [&](const Container& c) { return c.name == info.default_container; });
  Container& container = it != pod.containers.end() ? *it : pod.containers.front();
  for (const ContainerPort& port : container.ports) {
    if (port.name == info.port_name) return;
  }
  ContainerPort port;
  port.name = info.port_name;
  port.container_port = info.port;
  container.ports.push_back(std::move(port));
}

// Upstream's setElasticPolicy, shared by PyTorchJob and PaddleJob.
template <class Policy>
void SetElasticReplicas(Policy& policy, const TrainingJob& job) {
  if (policy.min_replicas && !policy.max_replicas) {
    policy.max_replicas = policy.min_replicas;
  } else if (!policy.min_replicas && policy.max_replicas) {
    policy.min_replicas = policy.max_replicas;
  } else if (!policy.min_replicas && !policy.max_replicas) {
    auto worker = job.spec.replica_specs.find("Worker");
    if (worker != job.spec.replica_specs.end() && worker->second.replicas) {
      policy.min_replicas = worker->second.replicas;
      policy.max_replicas = worker->second.replicas;
    }
  }
}

void SetMpiDefaults(TrainingJob& job) {
  RunPolicy& run = *job.spec.run_policy;
  if (!job.spec.mpi_clean_pod_policy && !run.clean_pod_policy) {
    job.spec.mpi_clean_pod_policy = "None";
    run.clean_pod_policy = "None";
  }
  auto set = [&](const char* type, int32_t replicas) {
    auto it = job.spec.replica_specs.find(type);
    if (it == job.spec.replica_specs.end()) return;
    if (!it->second.replicas) it->second.replicas = replicas;
    if (it->second.restart_policy.empty()) it->second.restart_policy = "Never";
  };
  set("Launcher", 1);
  set("Worker", 0);
}

}  // namespace

void SetDefaults(TrainingJob& job) {
  // The CRD's only server-side default. Upstream's API server adds it only
  // inside a runPolicy the user wrote, so a second pass over its own output
  // would add it again; setting it always keeps defaulting idempotent, and
  // an unset suspend means false either way.
  RunPolicy& run_policy =
      job.spec.run_policy ? *job.spec.run_policy : job.spec.run_policy.emplace();
  if (!run_policy.suspend) run_policy.suspend = false;
  if (job.info().mpi_launcher) {
    SetMpiDefaults(job);
    return;
  }
  const KindInfo& info = job.info();
  RunPolicy& run = *job.spec.run_policy;
  if (!run.clean_pod_policy) run.clean_pod_policy = "None";
  NormaliseReplicaTypes(job);
  for (auto& [type, spec] : job.spec.replica_specs) {
    if (!spec.replicas) spec.replicas = 1;
    if (spec.restart_policy.empty()) spec.restart_policy = info.default_restart_policy;
    SetDefaultPort(info, spec.template_.spec);
  }
  switch (job.kind) {
    case JobKind::kTFJob:
      if (!job.spec.success_policy) job.spec.success_policy = "";
      break;
    case JobKind::kPyTorchJob:
      if (job.spec.elastic_policy) SetElasticReplicas(*job.spec.elastic_policy, job);
      if ((!job.spec.elastic_policy || !job.spec.elastic_policy->n_proc_per_node) &&
          !job.spec.nproc_per_node) {
        job.spec.nproc_per_node = "auto";
      }
      break;
    case JobKind::kPaddleJob:
      if (job.spec.paddle_elastic_policy) SetElasticReplicas(*job.spec.paddle_elastic_policy, job);
      break;
    default:
      break;
  }
}

void SetDefaults(BatchJob& job) {
  BatchJobSpec& spec = job.spec;
  if (!spec.completions && !spec.parallelism) {
    spec.completions = 1;
    spec.parallelism = 1;
  }
  if (!spec.parallelism) spec.parallelism = 1;
  if (!spec.backoff_limit) spec.backoff_limit = spec.backoff_limit_per_index ? INT32_MAX : 6;
  if (!spec.completion_mode) spec.completion_mode = "NonIndexed";
  if (!spec.suspend) spec.suspend = false;
  if (job.metadata.labels.empty()) job.metadata.labels = spec.template_.metadata.labels;
}

void SetDefaults(Object& object) {
  ResourceTypeOfKind(KindName(object))->hooks.set_defaults(object);
}

void SetDefaultsOnCreate(Json& object) {
  const ResourceType* type = ResourceTypeOf(object);
  if (type != nullptr && type->create_defaults) type->create_defaults(object);
}

void internal::SetBatchJobCreateDefaults(Json& object) {
  const Json* manual = FindAt(object, {"spec", "manualSelector"});
  if (manual != nullptr && manual->is_boolean() && manual->get<bool>()) return;
  Json& spec = object["spec"];
  if (!spec.is_object()) return;
  std::string uid = StringAt(object, {"metadata", "uid"});
  std::string name = StringAt(object, {"metadata", "name"});
  if (!spec.contains("selector") || spec["selector"].is_null() || spec["selector"].empty()) {
    spec["selector"] = {{"matchLabels", {{std::string(kBatchControllerUidLabel), uid}}}};
  }
  Json& labels = spec["template"]["metadata"]["labels"];
  if (!labels.is_object()) labels = Json::object();
  for (std::string_view key : {kBatchControllerUidLabel, std::string_view("controller-uid")}) {
    labels[std::string(key)] = uid;
  }
  for (std::string_view key : {kBatchJobNameLabel, std::string_view("job-name")}) {
    labels[std::string(key)] = name;
  }
  // Kubernetes defaults a Job's own empty labels to its template's as it
  // reads it back; set here, once, as kubectl then shows them.
  Json& own = object["metadata"]["labels"];
  if (!own.is_object() || own.empty()) own = labels;
}

std::string EffectiveCleanPodPolicy(const TrainingJob& job) {
  if (job.spec.run_policy && job.spec.run_policy->clean_pod_policy) {
    return *job.spec.run_policy->clean_pod_policy;
  }
  if (job.spec.mpi_clean_pod_policy) return *job.spec.mpi_clean_pod_policy;
  return "None";
}

}  // namespace trainyard::api
