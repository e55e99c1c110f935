// The node agent's stops: a pod's processes given their grace period, the
// replicas of deleted pods stopped and their files removed, and every
// process stopped as the agent ends.
#include <fmt/format.h>
#include <signal.h>

#include <filesystem>

#include "node/node_agent.h"
#include "node/node_agent_internal.h"

namespace trainyard::node {
namespace {

namespace fs = std::filesystem;

}  // namespace

void NodeAgent::RemovePodFiles(const Replica& replica) {
  if (options_.cgroups != nullptr && !replica.uid.empty()) {
    for (const auto& [name, run] : replica.runs) {
      std::string group = RunGroupName(replica.uid, name, run.run);
      options_.cgroups->Kill(group);
      options_.cgroups->Remove(group);
    }
  }
  RemoveVolumes(replica.volumes);
  std::error_code ec;
  if (!replica.namespace_.empty()) {
    std::vector<std::string> containers;
    for (const auto& [name, log] : replica.log_paths) containers.push_back(name);
    Status deleted = DeletePodEvents(*options_.store, replica.namespace_, replica.uid, containers);
    if (!deleted.ok()) {
      options_.log->Warning("trainyard: the events of pod {}/{} stay: {}", replica.namespace_,
                            replica.name, deleted.message());
    }
  }
  if (!options_.keep_logs) {
    for (const auto& [name, log] : replica.log_paths) {
      fs::remove(log, ec);
      fs::remove(log + ".runs", ec);
    }
  }
  // Most runs had theirs removed as they went; not one that failed to
  // start, nor the last.
  for (const auto& [name, prefix] : replica.exit_prefixes) {
    auto run = replica.runs.find(name);
    int32_t last = run == replica.runs.end() ? 0 : run->second.run;
    for (int32_t n = 0; n <= last + 1; ++n) {
      fs::remove(prefix + std::to_string(n) + std::string(internal::kExitSuffix), ec);
    }
  }
}

void NodeAgent::RemoveMemoryVolumes() {
  std::error_code ec;
  for (auto& [key, replica] : replicas_) {
    if (!replica.volumes.memory.empty()) (void)RemoveTree(replica.volumes.memory);
  }
}

Duration NodeAgent::GraceOf(const api::Pod& pod) const {
  const std::optional<int64_t>& seconds = pod.spec.termination_grace_period_seconds;
  if (!seconds) return options_.default_grace;
  return std::chrono::seconds(std::max<int64_t>(0, *seconds));
}

void NodeAgent::TakeDeletionGrace(const std::string& key, Replica& replica) {
  std::optional<Duration> grace;
  {
    MutexLock lock(changed_mu_);
    auto it = deletion_grace_.find(key);
    if (it == deletion_grace_.end()) return;
    if (it->second.first == replica.uid) grace = it->second.second;
    deletion_grace_.erase(it);
  }
  if (!grace) return;
  replica.grace = *grace;
  if (replica.kill_at) replica.kill_at = std::min(*replica.kill_at, options_.clock->Now() + *grace);
}

bool NodeAgent::Stopping(Replica& replica, std::optional<TimePoint>& wake) {
  bool running = false;
  for (auto& [name, run] : replica.runs) {
    running = running || (run.process && !run.process->TryWait());
  }
  if (!running) return false;
  TimePoint now = options_.clock->Now();
  bool first = !replica.kill_at;
  if (first) replica.kill_at = now + replica.grace;
  for (auto& [name, run] : replica.runs) {
    if (!run.process || run.process->TryWait()) continue;
    if (first) {
      run.process->Signal(SIGTERM);
      Event(replica, name, "Normal", "Killing", fmt::format("Stopping container {}", name));
    }
    if (now >= *replica.kill_at) run.process->Signal(SIGKILL);
  }
  wake = wake ? std::min(*wake, *replica.kill_at) : *replica.kill_at;
  return true;
}

void NodeAgent::StopOrphans(std::optional<TimePoint>& wake) {
  for (auto key = gone_.begin(); key != gone_.end();) {
    auto it = replicas_.find(*key);
    Replica* replica = it == replicas_.end() ? nullptr : &it->second;
    if (replica != nullptr) TakeDeletionGrace(*key, *replica);
    if (replica == nullptr || !Stopping(*replica, wake)) {
      if (replica != nullptr) {
        RemovePodFiles(*replica);  // the pod is gone: so are its emptyDirs and logs
        replicas_.erase(it);
      }
      active_.erase(*key);
      key = gone_.erase(key);
      continue;
    }
    ++key;
  }
}

void NodeAgent::StopAll() {
  // Every process is told at once; each gets its own pod's grace period
  // from then (a replica saving a checkpoint on SIGTERM has all of it).
  for (auto& [key, replica] : replicas_) {
    for (auto& [name, run] : replica.runs) {
      if (run.process) run.process->Signal(SIGTERM);
    }
  }
  // Measured on the steady clock, not the injected one: Stop waits for a
  // process in real time, and a fake clock that does not move would give
  // each replica its whole grace period again, one after another.
  auto told = std::chrono::steady_clock::now();
  for (auto& [key, replica] : replicas_) {
    for (auto& [name, run] : replica.runs) {
      if (!run.process) continue;
      auto left = std::chrono::ceil<std::chrono::milliseconds>(
          std::max(told + replica.grace - std::chrono::steady_clock::now(),
                   std::chrono::steady_clock::duration::zero()));
      run.process->Stop(left);
    }
  }
  RemoveMemoryVolumes();
}

}  // namespace trainyard::node
