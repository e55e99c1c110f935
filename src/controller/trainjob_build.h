// What a TrainJob's runtime makes of it, as upstream's runtime plugins do
// (reference §8.3): one JobSet named as the TrainJob, from the runtime's
// JobSet template with the TrainJob's runtimePatches applied in order; the
// initializer steps given STORAGE_URI and their env; the trainer step given
// the TrainJob's image, command, args, resources and env, and node count;
// the ML policy's variables (torch's PET_*, JAX's, XGBoost's DMLC_*, MPI's
// OMPI_MCA_* and hostfile); the gang policy's pod labels. Pure: the caller
// reads the runtime and says where the rendezvous is.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "api/trainer.h"
#include "common/field_path.h"

namespace trainyard::controller {

// Where the built pods find one another. On a cluster: upstream's DNS name
// of the trainer's node 0 (`<trainjob>-node-0-0.<trainjob>`), port 29500,
// and MPI over SSH with the job's key Secret. On one machine: 127.0.0.1, a
// port of the job's own, and MPI's launcher reaching the nodes through an
// rsh agent.
struct BuildOptions {
  std::string rendezvous_host;
  int rendezvous_port = 29500;
  std::string mpi_rsh_agent;  // empty: over SSH
  // What the rsh agent runs where upstream's runs `kubectl exec`: on one
  // machine "'/usr/bin/trainyard' exec --state '/run/dir'", quoted.
  std::string mpi_exec_command;
  // On one machine: the trainyard binary, whose `initialize` stands for
  // Kubeflow's initializer images (their program is in the image); empty
  // on a cluster, where the images run.
  std::string initializer_program;
  // On one machine: the trainer step's pods are annotated
  // api::kTrainerStepAnnotation, so that the node agent gives them the
  // progress endpoint and token (node/trainer_status_env.h).
  bool mark_trainer_step = false;
  // On a cluster, where the trainer step's pods report their progress
  // (KEP-2779, controller/trainjob_status_endpoint.h): the operator's
  // status server ("https://<service>.<namespace>.svc:10443") and the CA of
  // its certificate; empty: not served.
  std::string status_server_url;
  std::string status_server_ca;
};

struct TrainJobSource {
  api::ObjectMeta meta;  // the TrainJob's: name, namespace, uid
  api::TrainJobSpec spec;
};

struct RuntimeSource {
  std::string kind;  // TrainingRuntime | ClusterTrainingRuntime
  api::ObjectMeta meta;
  api::TrainingRuntimeSpec spec;
};

struct TrainJobObjects {
  api::Json jobset;  // jobset.x-k8s.io/v1alpha2 JobSet, owned by the TrainJob
  // What the JobSet's pods read: an MPI runtime's hostfile ConfigMap, the
  // status server's CA.
  std::vector<api::Json> config_maps;
  // On a cluster, the PodGroup the runtime's podGroupPolicy asks for
  // (trainjob_pod_group.h).
  std::optional<api::Json> pod_group;
};

// The owner reference, as controller, of what the TrainJob makes.
api::Json OwnerReferenceTo(const TrainJobSource& job);

// Upstream's DNS name of the trainer's node 0: `<trainjob>-<job>-0-0.<subdomain>`.
std::string ClusterRendezvousHost(const TrainJobSource& job, const RuntimeSource& runtime);

// What the runtime cannot do for this TrainJob, at the TrainJob's paths,
// with upstream's messages: an initializer with no step to run it, a patch
// naming a job or container the runtime lacks or setting a step's env,
// reserved variables, an MPI node count the runtime cannot place.
FieldErrors CheckAgainstRuntime(const TrainJobSource& job, const RuntimeSource& runtime);

// The objects the TrainJob runs as. Call after CheckAgainstRuntime found
// nothing: what it refuses is skipped here.
TrainJobObjects BuildTrainJobObjects(const TrainJobSource& job, const RuntimeSource& runtime,
                                     const BuildOptions& options);

// On one machine, what keeps an initializer step that `program
// initialize` stands in for (BuildOptions::initializer_program) from
// running as it would on a cluster, each said as a line of `jobset`'s
// (built) replicated job and container: no volume mounted at its
// destination (it would write to this machine's own /workspace, shared by
// every job), or args, which `initialize` does not take.
std::vector<std::string> LocalInitializerProblems(const api::Json& jobset,
                                                  const std::string& program);

// The replicated job a runtime runs its trainer in: the one labelled
// trainer.kubeflow.org/trainjob-ancestor-step=trainer; nullptr if none.
const api::ReplicatedJob* TrainerJobOf(const api::JobSetSpec& spec);

}  // namespace trainyard::controller
