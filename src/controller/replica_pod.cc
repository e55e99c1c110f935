#include "controller/replica_pod.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "common/strings.h"
#include "controller/mpi_config.h"

namespace trainyard::controller {
api::OwnerReference OwnerOf(const api::TrainingJob& job) {
  api::OwnerReference owner;
  owner.api_version = std::string(api::kKubeflowGroupVersion);
  owner.kind = std::string(job.info().name);
  owner.name = job.metadata.name;
  owner.uid = job.metadata.uid;
  owner.controller = true;
  owner.block_owner_deletion = true;
  return owner;
}

namespace {

// The framework's port on the container that carries it, set to the port
// this replica really listens on.
void SetLocalPort(const api::TrainingJob& job, const frameworks::ReplicaRef& replica,
                  const frameworks::Placement& placement, api::PodSpec& spec) {
  int port = placement.PortOf(replica.type, replica.index);
  if (port == 0) return;
  for (api::Container& c : spec.containers) {
    for (api::ContainerPort& p : c.ports) {
      if (p.name == job.info().port_name) p.container_port = port;
    }
  }
}

}  // namespace

Result<api::Pod> BuildReplicaPod(const api::TrainingJob& job, const frameworks::ReplicaRef& replica,
                                 const frameworks::Placement& placement) {
  const frameworks::Framework& framework = frameworks::FrameworkFor(job.kind);
  const api::ReplicaSpec& spec = job.spec.replica_specs.at(replica.type);
  api::Pod pod;
  pod.metadata.name = frameworks::ReplicaName(job, replica);
  pod.metadata.namespace_ = job.metadata.namespace_;
  pod.metadata.labels = spec.template_.metadata.labels;
  pod.metadata.annotations = spec.template_.metadata.annotations;
  pod.metadata.labels[std::string(api::kLabelOperatorName)] =
      AsciiLower(job.info().name) + "-controller";
  pod.metadata.labels[std::string(api::kLabelJobName)] = job.metadata.name;
  pod.metadata.labels[std::string(api::kLabelReplicaType)] = AsciiLower(replica.type);
  pod.metadata.labels[std::string(api::kLabelReplicaIndex)] = std::to_string(replica.index);
  if (framework.IsMasterRole(job, replica))
    pod.metadata.labels[std::string(api::kLabelJobRole)] = "master";
  pod.metadata.owner_references.push_back(OwnerOf(job));
  pod.spec = spec.template_.spec;
  // The replica's policy decides; ExitCode restarts are the controller's,
  // so the pod itself never restarts (upstream does the same).
  pod.spec.restart_policy = spec.restart_policy == "ExitCode" ? "Never" : spec.restart_policy;
  SetLocalPort(job, replica, placement, pod.spec);
  for (size_t i = 0; i < pod.spec.containers.size(); ++i) {
    ASSIGN_OR_RETURN(frameworks::Env env, framework.InjectedEnv(job, replica, i, placement));
    for (auto& [name, value] : env) {
      api::EnvVar var;
      var.name = name;
      var.value = value;
      pod.spec.containers[i].env.push_back(std::move(var));
    }
  }
  if (job.info().mpi_launcher) MountMpiConfig(job, replica, pod.spec);
  // MPI workers are where mpirun starts its ranks; one without a command
  // just stays up, as upstream's `sleep 365d`.
  if (job.info().mpi_launcher && replica.type == "Worker" && !pod.spec.containers.empty() &&
      pod.spec.containers[0].command.empty()) {
    pod.spec.containers[0].command = {"sleep"};
    pod.spec.containers[0].args = {"365d"};
  }
  return pod;
}

std::optional<frameworks::ReplicaRef> ReplicaOf(const api::TrainingJob& job, const api::Pod& pod) {
  const auto& labels = pod.metadata.labels;
  auto job_name = labels.find(std::string(api::kLabelJobName));
  auto type = labels.find(std::string(api::kLabelReplicaType));
  auto index = labels.find(std::string(api::kLabelReplicaIndex));
  if (job_name == labels.end() || job_name->second != job.metadata.name || type == labels.end() ||
      index == labels.end()) {
    return std::nullopt;
  }
  int32_t i = 0;
  const std::string& text = index->second;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), i);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return frameworks::ReplicaRef{api::CanonicalReplicaType(job.kind, type->second), i};
}

}  // namespace trainyard::controller
