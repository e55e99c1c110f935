#include "controller/mpi_config.h"

#include <fmt/format.h>

#include <algorithm>

#include "controller/replica_pod.h"

namespace trainyard::controller {

std::string LocalKubexecScript(const std::string& exec_command, const std::string& namespace_) {
  // On one machine every "remote" Open MPI daemon shares the host with
  // mpirun, and its hwloc topology sharing (rtc/hwloc) then crashes the
  // daemon; each worker on Kubernetes is a machine of its own. Users may
  // still set OMPI_MCA_rtc themselves. Options meant for ssh (a Trainer
  // MPI runtime's `-o ConnectionAttempts=10`) come before the host.
  return fmt::format(
      "#!/bin/sh\n"
      "set -e\n"
      "while [ \"${{1#-}}\" != \"$1\" ]; do\n"
      "  case \"$1\" in -[BbcDEeFIiJLlmOoPpQRSWw]) shift 2 ;; *) shift ;; esac\n"
      "done\n"
      "POD_NAME=$1\n"
      "shift\n"
      "exec {} -n '{}' \"$POD_NAME\" -- /bin/sh -c \"export "
      "OMPI_MCA_rtc=\\${{OMPI_MCA_rtc:-^hwloc}}; $*\"\n",
      exec_command, namespace_);
}

api::ConfigMap MpiConfigMap(const api::TrainingJob& job, const std::string& exec_command) {
  api::ConfigMap map;
  map.metadata.name = job.metadata.name + "-config";
  map.metadata.namespace_ = job.metadata.namespace_;
  map.metadata.labels["app"] = job.metadata.name;
  map.metadata.owner_references.push_back(OwnerOf(job));
  map.data["hostfile"] = frameworks::MpiHostfile(job);
  map.data["kubexec.sh"] = LocalKubexecScript(exec_command, job.metadata.namespace_);
  std::string discover = "#!/bin/sh\n";
  for (int32_t i = 0; i < job.Replicas("Worker"); ++i)
    discover += fmt::format("echo {}:{}\n", frameworks::ReplicaName(job, {"Worker", i}),
                            job.spec.slots_per_worker.value_or(1));
  map.data["discover_hosts.sh"] = discover;
  return map;
}

api::ConfigMap MpiClusterConfigMap(const api::TrainingJob& job,
                                   std::vector<std::string> running_workers) {
  api::ConfigMap map = MpiConfigMap(job, "");
  std::sort(running_workers.begin(), running_workers.end());
  std::string discover = "#!/bin/sh\n";
  for (const std::string& worker : running_workers) {
    discover += fmt::format("echo {}:{}\n", worker, job.spec.slots_per_worker.value_or(1));
  }
  map.data["discover_hosts.sh"] = discover;
  std::string kubexec = "#!/bin/sh\nset -x\nPOD_NAME=$1\nshift\n/opt/kube/kubectl exec ${POD_NAME}";
  if (!job.spec.main_container.empty()) kubexec += " --container " + job.spec.main_container;
  map.data["kubexec.sh"] = kubexec + " -- /bin/sh -c \"$*\"";
  return map;
}

void MountMpiConfig(const api::TrainingJob& job, const frameworks::ReplicaRef& replica,
                    api::PodSpec& spec) {
  if (spec.containers.empty()) return;
  bool launcher = replica.type == "Launcher";
  api::Volume volume;
  volume.name = std::string(kMpiConfigVolume);
  volume.config_map.emplace();
  volume.config_map->name = job.metadata.name + "-config";
  auto item = [](const char* key, int32_t mode) {
    api::KeyToPath k;
    k.key = key;
    k.path = key;
    k.mode = mode;
    return k;
  };
  volume.config_map->items.push_back(item("kubexec.sh", 0555));
  if (launcher) {
    volume.config_map->items.push_back(item("hostfile", 0444));
    volume.config_map->items.push_back(item("discover_hosts.sh", 0555));
  }
  spec.volumes.push_back(std::move(volume));
  api::VolumeMount mount;
  mount.name = std::string(kMpiConfigVolume);
  mount.mount_path = std::string(kMpiConfigDir);
  spec.containers[0].volume_mounts.push_back(std::move(mount));
}

}  // namespace trainyard::controller
