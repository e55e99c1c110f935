#include "frameworks/framework.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "common/strings.h"
#include "frameworks/framework_internal.h"

namespace trainyard::frameworks {

// Defined one per file: pytorch.cc, tensorflow.cc, ...
const Framework& PyTorchFramework();
const Framework& TensorFlowFramework();
const Framework& XGBoostFramework();
const Framework& MpiFramework();
const Framework& PaddleFramework();
const Framework& JaxFramework();

const Framework& FrameworkFor(api::JobKind kind) {
  switch (kind) {
    case api::JobKind::kPyTorchJob:
      return PyTorchFramework();
    case api::JobKind::kTFJob:
      return TensorFlowFramework();
    case api::JobKind::kXGBoostJob:
      return XGBoostFramework();
    case api::JobKind::kMPIJob:
      return MpiFramework();
    case api::JobKind::kPaddleJob:
      return PaddleFramework();
    case api::JobKind::kJAXJob:
      return JaxFramework();
  }
  return PyTorchFramework();
}

int Placement::PortOf(const std::string& type, int32_t index) const {
  auto it = ports.find(ReplicaRef{type, index});
  return it == ports.end() ? 0 : it->second;
}

std::string Placement::HostOf(const api::TrainingJob& job, const ReplicaRef& replica) const {
  return service_dns ? ReplicaName(job, replica) : host;
}

std::string Placement::QualifiedHostOf(const api::TrainingJob& job,
                                       const ReplicaRef& replica) const {
  if (!service_dns) return host;
  std::string name = fmt::format("{}.{}.svc", ReplicaName(job, replica), job.metadata.namespace_);
  return cluster_domain.empty() ? name : name + "." + cluster_domain;
}

std::string ReplicaName(const api::TrainingJob& job, const ReplicaRef& replica) {
  std::string type = AsciiLower(replica.type);
  if (job.info().mpi_launcher && replica.type == "Launcher") {
    return job.metadata.name + "-launcher";
  }
  return fmt::format("{}-{}-{}", job.metadata.name, type, replica.index);
}

const api::Container* DefaultContainer(const api::TrainingJob& job, const std::string& type) {
  const api::ReplicaSpec* spec = job.FindReplica(type);
  if (spec == nullptr || spec->template_.spec.containers.empty()) return nullptr;
  for (const api::Container& c : spec->template_.spec.containers) {
    if (c.name == job.info().default_container) return &c;
  }
  return &spec->template_.spec.containers.front();
}

std::vector<ReplicaRef> AllReplicas(const api::TrainingJob& job) {
  std::vector<ReplicaRef> out;
  for (const std::string& type : job.info().replica_types) {
    for (int32_t i = 0; i < job.Replicas(type); ++i) out.push_back({type, i});
  }
  return out;
}

namespace internal {

Counts CountsOf(const ReplicaStates& states, const std::string& type) {
  Counts c;
  for (const auto& [ref, state] : states) {
    if (ref.type != type) continue;
    switch (state.phase) {
      case ReplicaPhase::kRunning:
        ++c.active;
        break;
      case ReplicaPhase::kRestarting:
        ++c.restarting;
        break;
      case ReplicaPhase::kSucceeded:
        ++c.succeeded;
        break;
      case ReplicaPhase::kFailed:
        ++c.failed;
        break;
      case ReplicaPhase::kPending:
        break;
    }
  }
  return c;
}

std::string Reason(const api::TrainingJob& job, const std::string& what) {
  return std::string(job.info().name) + what;
}

Verdict Conclude(const api::TrainingJob& job, const ReplicaStates& states, bool success,
                 const std::string& success_message, const FailureRules& rules) {
  const std::string kind(job.info().name);
  if (success) return {JobPhase::kSucceeded, Reason(job, "Succeeded"), success_message};
  for (const std::string& type : job.info().replica_types) {
    Counts c = CountsOf(states, type);
    bool tolerated = type == "Worker" && rules.tolerate_failed_workers;
    if (c.failed > 0 && !tolerated) {
      std::string message = rules.failed_message
                                ? rules.failed_message(c.failed, type)
                                : fmt::format("{} {} is failed because {} {} replica(s) failed.",
                                              kind, job.metadata.name, c.failed, type);
      return {JobPhase::kFailed, Reason(job, "Failed"), std::move(message)};
    }
  }
  for (const std::string& type : job.info().replica_types) {
    Counts c = CountsOf(states, type);
    if (c.restarting > 0) {
      return {JobPhase::kRestarting, Reason(job, "Restarting"),
              fmt::format("{} {} is restarting because {} {} replica(s) failed.", kind,
                          job.metadata.name, c.restarting, type)};
    }
  }
  for (const std::string& type : job.info().replica_types) {
    if (CountsOf(states, type).active > 0) {
      return {JobPhase::kRunning, Reason(job, "Running"),
              fmt::format("{} {} is running.", kind, job.metadata.name)};
    }
  }
  return {JobPhase::kCreated, Reason(job, "Created"),
          fmt::format("{} {} is created.", kind, job.metadata.name)};
}

}  // namespace internal
}  // namespace trainyard::frameworks
