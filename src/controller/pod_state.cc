#include "controller/pod_state.h"

#include <charconv>

namespace trainyard::controller {

int ExitCodeOf(const api::Pod& pod) {
  for (const api::ContainerStatus& c : pod.status.container_statuses) {
    if (c.state.terminated) return c.state.terminated->exit_code;
  }
  return 0;
}

int32_t RestartsOf(const api::Pod& pod) {
  int32_t restarts = 0;
  for (const api::ContainerStatus& c : pod.status.container_statuses) restarts += c.restart_count;
  auto it = pod.metadata.annotations.find(std::string(api::kRecreationsAnnotation));
  if (it != pod.metadata.annotations.end()) {
    int32_t n = 0;
    std::from_chars(it->second.data(), it->second.data() + it->second.size(), n);
    restarts += n;
  }
  return restarts;
}

bool RestartsWhenFailed(const api::Pod& pod, const std::string& replica_restart_policy) {
  // A pod Failed as a whole (evicted, its node lost) under OnFailure or
  // Always: its kubelet could not restart it in place, so the controller
  // makes it again, as upstream does since v1.8.
  if (replica_restart_policy == "OnFailure" || replica_restart_policy == "Always") return true;
  return replica_restart_policy == "ExitCode" && IsRetryableExitCode(ExitCodeOf(pod));
}

frameworks::ReplicaState StateOf(const api::Pod& pod, const std::string& replica_restart_policy) {
  using frameworks::ReplicaPhase;
  const std::string& phase = pod.status.phase;
  int exit_code = ExitCodeOf(pod);
  if (phase == "Succeeded") return {ReplicaPhase::kSucceeded, exit_code};
  if (phase == "Failed") {
    return {RestartsWhenFailed(pod, replica_restart_policy) ? ReplicaPhase::kRestarting
                                                            : ReplicaPhase::kFailed,
            exit_code};
  }
  if (phase == "Running") {
    for (const api::ContainerStatus& c : pod.status.container_statuses) {
      if (c.state.waiting && c.state.waiting->reason == api::kRestartWaitReason) {
        int last = c.last_state.terminated ? c.last_state.terminated->exit_code : 0;
        return {ReplicaPhase::kRestarting, last};
      }
    }
    return {ReplicaPhase::kRunning, 0};
  }
  return {ReplicaPhase::kPending, 0};
}

}  // namespace trainyard::controller
