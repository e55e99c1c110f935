#include "controller/pod_state.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

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

namespace {

// The end of a termination message, for a one-line condition: its last
// three lines, " | "-joined, at most about 400 bytes.
std::string LastLines(std::string_view message) {
  constexpr size_t kBytes = 400;
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) {
    message.remove_suffix(1);
  }
  if (message.empty()) return "";
  std::vector<std::string_view> lines;
  size_t end = message.size();
  for (size_t used = 0; lines.size() < 3 && end > 0 && used < kBytes;) {
    size_t newline = message.rfind('\n', end - 1);
    size_t begin = newline == std::string_view::npos ? 0 : newline + 1;
    std::string_view line = message.substr(begin, end - begin);
    if (line.size() > kBytes - used) line = line.substr(line.size() - (kBytes - used));
    lines.insert(lines.begin(), line);
    used += line.size();
    if (newline == std::string_view::npos) break;
    end = newline;
  }
  return fmt::format(": {}", fmt::join(lines, " | "));
}

}  // namespace

std::string LatestContainerFailure(const std::vector<const api::Pod*>& pods) {
  std::string latest;  // finishedAt: RFC 3339 in UTC sorts as time does
  std::string said;
  for (const api::Pod* pod : pods) {
    for (const auto* statuses :
         {&pod->status.init_container_statuses, &pod->status.container_statuses}) {
      for (const api::ContainerStatus& c : *statuses) {
        for (const auto* state : {&c.state, &c.last_state}) {
          const auto& ended = state->terminated;
          if (!ended || ended->exit_code == 0 || ended->finished_at < latest) continue;
          latest = ended->finished_at;
          said = fmt::format("pod {}, container {}, exit code {}{}{}", pod->metadata.name, c.name,
                             ended->exit_code, ended->reason.empty() ? "" : ", " + ended->reason,
                             LastLines(ended->message));
        }
      }
    }
  }
  return said;
}

}  // namespace trainyard::controller
