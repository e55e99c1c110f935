// The job kinds trainyard runs and what upstream fixes for each: the field
// that holds the replica specs, the default container, port and restart
// policy, and the replica types the kind allows.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trainyard::api {

inline constexpr std::string_view kKubeflowGroupVersion = "kubeflow.org/v1";
inline constexpr std::string_view kBatchGroupVersion = "batch/v1";

enum class JobKind { kPyTorchJob, kTFJob, kXGBoostJob, kMPIJob, kPaddleJob, kJAXJob };

struct KindInfo {
  JobKind kind;
  std::string_view name;           // "PyTorchJob"
  std::string_view plural;         // "pytorchjobs"
  std::string_view replica_field;  // "pytorchReplicaSpecs"
  std::string_view default_container;
  std::string_view port_name;
  int port;
  bool defaults_port;  // MPIJob has a port constant but never adds it
  std::string_view default_restart_policy;
  std::vector<std::string> replica_types;  // canonical spelling, in upstream's order
  // Scales by its Workers: upstream's CRD gives it a scale subresource,
  // and its replica statuses a label selector.
  bool scales_by_workers = false;
  // mpirun on its Launcher starts the ranks in its Workers, through the
  // hostfile and rsh agent it is given: no Services, the Launcher's own
  // pod name, Workers that only stay up.
  bool mpi_launcher = false;
  // On a cluster its Workers wait for the Master's name to resolve before
  // they start (upstream's PyTorch init container).
  bool workers_wait_for_master = false;
};

const KindInfo& InfoFor(JobKind kind);
const std::vector<KindInfo>& AllKinds();
std::optional<JobKind> JobKindFromName(std::string_view name);

// Upstream's case normalisation of replica types: "worker", "WORKER" ->
// "Worker", "ps" -> "PS". Unknown types come back unchanged.
std::string CanonicalReplicaType(JobKind kind, std::string_view type);

}  // namespace trainyard::api
