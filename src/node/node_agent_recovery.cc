// How a node agent takes over from an earlier one that crashed: the runs
// it started are adopted where their shims still run, or recorded as they
// ended; shims no pod may claim are stopped.
#include <fmt/format.h>
#include <signal.h>

#include <filesystem>

#include "node/node_agent.h"
#include "node/node_agent_internal.h"

namespace trainyard::node {
namespace {

namespace fs = std::filesystem;

// The ExitPrefix of an exit path ("<prefix><run>.exit"), or "".
std::string ExitPrefixOf(const std::string& exit_path) {
  if (!exit_path.ends_with(internal::kExitSuffix)) return "";
  size_t dot = exit_path.rfind('.', exit_path.size() - internal::kExitSuffix.size() - 1);
  return dot == std::string::npos ? "" : exit_path.substr(0, dot + 1);
}

}  // namespace

Result<bool> NodeAgent::ResumeUnrecordedRun(api::Pod& pod, Replica& replica, const Slot& slot) {
  // Without a shim, replicas die with the node agent that started them.
  if (options_.shim.empty()) return false;
  ContainerRun& run = replica.runs[slot.spec->name];
  run.run = StatusOf(pod, slot).restart_count;
  std::string exit_path = ExitPath(pod, slot.spec->name, run.run);
  if (auto stray = strays_.extract(exit_path)) {
    const ShimProcess& shim = stray.mapped();
    Result<runtime::Process> adopted =
        runtime::Process::Adopt(shim.pid, shim.start_time, exit_path);
    if (adopted.ok()) {
      replica.volumes = VolumeDirsOf(pod);
      run.process = std::move(*adopted);
      MarkRunning(pod, replica, slot);
      return true;
    }
  }
  // It ended while no node agent watched: its shim wrote how. (A stale
  // file cannot be this run's: the path names the pod's uid and the run.)
  if (std::optional<runtime::ExitStatus> exit = runtime::ReadExitFile(exit_path)) {
    OnExit(pod, replica, slot, *exit);
    return true;
  }
  return false;
}

void NodeAgent::Recover(api::Pod& pod, Replica& replica, const Slot& slot) {
  ContainerRun& run = replica.runs[slot.spec->name];
  const api::ContainerStatus& status = StatusOf(pod, slot);
  run.run = status.restart_count;
  std::string exit_path = ExitPath(pod, slot.spec->name, status.restart_count);
  strays_.erase(exit_path);  // recorded: no stray
  // "trainyard://<pid>-<start time>": a shim's, which may still run.
  std::string id = status.container_id.substr(
      std::min(status.container_id.size(), std::string_view("trainyard://").size()));
  size_t dash = id.find('-');
  if (dash != std::string::npos) {
    pid_t pid = static_cast<pid_t>(std::strtol(id.c_str(), nullptr, 10));
    uint64_t start = std::strtoull(id.c_str() + dash + 1, nullptr, 10);
    Result<runtime::Process> adopted = runtime::Process::Adopt(pid, start, exit_path);
    if (adopted.ok()) {
      run.process = std::move(*adopted);
      replica.volumes = VolumeDirsOf(pod);
      run.run = status.restart_count;
      run.container_id = status.container_id;
      return;  // still running: nothing to write
    }
    // It ended while no trainyard watched: its shim wrote how.
    if (std::optional<runtime::ExitStatus> exit = runtime::ReadExitFile(exit_path)) {
      OnExit(pod, replica, slot, *exit);
      return;
    }
  }
  // It died with an earlier trainyard (PDEATHSIG), or its shim was killed:
  // report that, and let the restart policy decide.
  OnExit(pod, replica, slot, runtime::ExitStatus{137, SIGKILL});
}

bool NodeAgent::Claimable(const std::string& exit_path) {
  // "<exits>/<namespace>/<pod>_<container>.<uid>.<run>.exit"; pod names
  // never hold '_'.
  fs::path path(exit_path);
  std::string file = path.filename().string();
  store::ObjectKey key{"Pod", path.parent_path().filename().string(),
                       file.substr(0, file.find('_'))};
  Result<api::Json> doc = options_.store->Get(key);
  if (!doc.ok()) return false;
  Result<const api::Pod*> pod = Decoded(*doc);
  if (!pod.ok() || api::HasFinished(**pod)) return false;
  std::string prefix = ExitPrefixOf(exit_path);
  for (const Slot& slot : SlotsOf(**pod)) {
    if (internal::ExitPrefix(exits_dir_, **pod, slot.spec->name) == prefix) return true;
  }
  return false;
}

void NodeAgent::StopStrays() {
  for (auto it = strays_.begin(); it != strays_.end();) {
    if (Claimable(it->first)) {
      ++it;
      continue;
    }
    const ShimProcess& shim = it->second;
    Result<runtime::Process> adopted =
        runtime::Process::Adopt(shim.pid, shim.start_time, it->first);
    if (adopted.ok()) {
      options_.log->Warning("trainyard: stopping a replica of no stored pod (shim {}, {})",
                            shim.pid, it->first);
      // Under a key no pod has: StopOrphans stops it, as a deleted pod's.
      Replica stray{.grace = options_.default_grace};
      stray.runs["stray"].process = std::move(*adopted);
      replicas_["stray " + it->first] = std::move(stray);
      gone_.insert("stray " + it->first);
    }
    it = strays_.erase(it);
  }
}

}  // namespace trainyard::node
