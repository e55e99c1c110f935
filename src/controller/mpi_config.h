// What an MPIJob's replicas find at /etc/mpi, as upstream's operator gives
// them: the ConfigMap <job>-config with the launcher's hostfile, the rsh
// agent mpirun starts its daemons through (kubexec.sh), and
// discover_hosts.sh; the launcher mounts all three, the workers the agent.
//
// Upstream's kubexec.sh runs `kubectl exec POD -- /bin/sh -c "$*"`; the
// local engine's runs `trainyard exec` with the same shape, which starts
// the daemon inside the worker replica (its env, directory and process
// group). `exec_command` is that command: "kubectl exec" or
// "'/usr/bin/trainyard' exec --state '/run/dir'", already quoted.
#pragma once

#include <string>
#include <vector>

#include "api/config_map.h"
#include "api/pod.h"
#include "api/training_job.h"
#include "frameworks/framework.h"

namespace trainyard::controller {

inline constexpr std::string_view kMpiConfigDir = "/etc/mpi";
inline constexpr std::string_view kMpiConfigVolume = "mpi-job-config";

// The rsh agent mpirun runs on one machine, as upstream's kubexec.sh with
// `kubectl exec`: `exec_command -n NAMESPACE HOST -- /bin/sh -c "$*"`,
// ssh-style options before the host (OMPI_MCA_plm_rsh_args) skipped.
std::string LocalKubexecScript(const std::string& exec_command, const std::string& namespace_);

// "<job>-config", owned by the job.
api::ConfigMap MpiConfigMap(const api::TrainingJob& job, const std::string& exec_command);
// The same on a cluster, with upstream's kubexec.sh word for word:
// `/opt/kube/kubectl exec ${POD_NAME} [--container <mainContainer>] --
// /bin/sh -c "$*"`, and upstream's discover_hosts.sh, which lists the
// workers that run (`running_workers`: pod names), sorted by name.
api::ConfigMap MpiClusterConfigMap(const api::TrainingJob& job,
                                   std::vector<std::string> running_workers);

// Adds the config volume and its /etc/mpi mount to the replica's first container.
void MountMpiConfig(const api::TrainingJob& job, const frameworks::ReplicaRef& replica,
                    api::PodSpec& spec);

}  // namespace trainyard::controller
