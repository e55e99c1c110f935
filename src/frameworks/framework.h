// Framework plugins: what each kind of training job needs from the engine.
//
// For every replica: the environment upstream's operator injects (PyTorch's
// MASTER_ADDR/RANK/WORLD_SIZE and PET_*, TF_CONFIG, XGBoost's tracker
// address, MPI's hostfile and rsh agent, Paddle's and JAX's coordinators),
// with the local engine's addressing: every replica and service name is
// 127.0.0.1, and each replica listens on its own port.
//
// For the job: the success and failure rules that turn replica states into
// the job's phase. Pure functions; no I/O, no clock.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "api/training_job.h"
#include "common/status.h"

namespace trainyard::frameworks {

using Env = std::vector<std::pair<std::string, std::string>>;

struct ReplicaRef {
  std::string type;  // canonical: "Master", "Worker", ...
  int32_t index = 0;
  bool operator<(const ReplicaRef& o) const {
    return type != o.type ? type < o.type : index < o.index;
  }
  bool operator==(const ReplicaRef&) const = default;
};

// Where the engine placed a job: the host every name resolves to, the port
// each replica's framework port maps to, and MPI's files.
struct Placement {
  std::string host = "127.0.0.1";
  // On Kubernetes each replica is reached through its headless Service:
  // by its name (`<job>-master-0`), and in TF_CONFIG by
  // `<name>.<namespace>.svc[.<cluster_domain>]`, as upstream writes them.
  // `host` is then unused.
  bool service_dns = false;
  std::string cluster_domain;       // upstream's CUSTOM_CLUSTER_DOMAIN
  std::map<ReplicaRef, int> ports;  // the framework's named port, per replica
  std::string mpi_hostfile;         // path of the hostfile the launcher reads
  std::string mpi_rsh_agent;        // program mpirun runs to start ranks in workers
  // GPUs given to each replica (CUDA_VISIBLE_DEVICES), for nprocPerNode auto/gpu.
  std::map<ReplicaRef, int> gpus;

  int PortOf(const std::string& type, int32_t index) const;
  // The address of `replica` of `job`: `host`, or its Service's name.
  std::string HostOf(const api::TrainingJob& job, const ReplicaRef& replica) const;
  // As HostOf, fully qualified on Kubernetes (TF_CONFIG's form).
  std::string QualifiedHostOf(const api::TrainingJob& job, const ReplicaRef& replica) const;
};

// A replica's state as the success and failure rules see it. kFailed is
// final: the engine has already restarted whatever its restart policy
// allows, and a replica it is about to restart is kRestarting.
enum class ReplicaPhase { kPending, kRunning, kRestarting, kSucceeded, kFailed };

struct ReplicaState {
  ReplicaPhase phase = ReplicaPhase::kPending;
  int exit_code = 0;
};

using ReplicaStates = std::map<ReplicaRef, ReplicaState>;

enum class JobPhase { kCreated, kRunning, kRestarting, kSucceeded, kFailed };

struct Verdict {
  JobPhase phase = JobPhase::kCreated;
  std::string reason;   // "PyTorchJobSucceeded"
  std::string message;  // "PyTorchJob mnist is successfully completed."
};

class Framework {
 public:
  virtual ~Framework() = default;

  // The variables appended, after the user's own, to container
  // `container_index` of `replica`. The job must be defaulted and valid.
  virtual Result<Env> InjectedEnv(const api::TrainingJob& job, const ReplicaRef& replica,
                                  size_t container_index, const Placement& placement) const = 0;

  // The job's phase from its replicas' states.
  virtual Verdict Evaluate(const api::TrainingJob& job, const ReplicaStates& states) const = 0;

  // The replica upstream labels training.kubeflow.org/job-role=master.
  virtual bool IsMasterRole(const api::TrainingJob& job, const ReplicaRef& replica) const = 0;
};

const Framework& FrameworkFor(api::JobKind kind);

// `<job>-<lower(type)>-<index>`: the pod and service name upstream gives a
// replica (MPI's launcher is `<job>-launcher`).
std::string ReplicaName(const api::TrainingJob& job, const ReplicaRef& replica);

// The hostfile an MPIJob's launcher reads: `<job>-worker-<i> slots=<n>` per
// worker, led by the launcher itself when it has a GPU.
std::string MpiHostfile(const api::TrainingJob& job);

// The container of `type`'s template named after the framework, else the
// first; null if none.
const api::Container* DefaultContainer(const api::TrainingJob& job, const std::string& type);

// Every replica of the job, types in upstream's order, indices ascending.
std::vector<ReplicaRef> AllReplicas(const api::TrainingJob& job);

}  // namespace trainyard::frameworks
