// Containers' resource limits, enforced as the kubelet enforces them: one
// control group per container run, within a group per pod, under a
// `trainyard` group beneath trainyard's own (cgroup v1's memory, cpu and
// pids hierarchies, or the v2 unified one): limits.memory as the memory
// limit (no swap beyond it), limits.cpu as a CFS quota per 100 ms period,
// requests.cpu as the weight (cpu.shares, or cpu.weight on v2), and the
// pod's tasks bounded (pids.max). A run the kernel killed for memory reads
// as OOMKilled; what a run leaves behind (a daemon, an exec'd command) is
// killed with its group.
//
// Where the machine gives no writable hierarchy (not root, no
// delegation), Detect() says why, and nothing is enforced.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace trainyard::node {

struct CgroupLimits {
  std::optional<int64_t> memory_bytes;
  std::optional<int64_t> cpu_limit_milli;
  std::optional<int64_t> cpu_request_milli;
  // Tasks (processes and threads) the whole pod may have at once, as the
  // kubelet's --pod-max-pids; unset: no bound.
  std::optional<int64_t> pod_max_pids;
  bool any() const { return memory_bytes || cpu_limit_milli || cpu_request_milli; }
};

// The kubelet leaves pods unbounded by default; here a pod takes at most
// an eighth of what the machine may run (kernel.pid_max), at most 16,384,
// so that no fork bomb takes the machine.
// A scope's name for a state folder: "state-" and 16 hex digits of its
// path's FNV-1a hash, the same from run to run and build to build.
std::string ScopeOf(const std::string& state_dir);

int64_t DefaultPodMaxPids(const std::string& pid_max_file = "/proc/sys/kernel/pid_max");

class Cgroups {
 public:
  // Which hierarchy this machine has (v2 when `root` holds
  // cgroup.controllers), and trainyard's own groups in it from `self`
  // (/proc/self/cgroup): the parents of the groups it makes.
  static Cgroups Detect(const std::string& root = "/sys/fs/cgroup",
                        const std::string& self = "/proc/self/cgroup");

  // Empty when groups can be made; else why not.
  const std::string& problem() const { return problem_; }
  bool v2() const { return v2_; }

  // Makes the group of a container's run `name` ("<pod uid>/<run>") with
  // `limits`, inside its pod's group (which bounds the pod's tasks): the
  // directories a process joins.
  Result<std::vector<std::string>> Make(const std::string& name, const CgroupLimits& limits) const;
  // Whether the kernel killed a process of group `name` for want of memory.
  bool OomKilled(const std::string& name) const;
  // Kills every process in group `name` (what a run's process left: a
  // daemon, a command `kubectl exec` started), until none is left.
  void Kill(const std::string& name) const;
  // Removes group `name` (once nothing runs in it), and its pod's group
  // once it holds no other.
  void Remove(const std::string& name) const;
  // Removes the groups an earlier trainyard left with nothing in them.
  void RemoveStale() const;

  // The same hierarchy with every group under `scope` (made if missing):
  // one engine's groups apart from another's on the same machine, so that
  // neither's RemoveStale takes a group the other has just made (a
  // `trainyard run` beside a server, test binaries side by side). Give it
  // a name stable per state folder (ScopeOf), so that a restarted server
  // finds its pods' groups.
  Cgroups Scoped(const std::string& scope) const;
  // Removes the scope's own groups, where nothing is left in them.
  void RemoveScope() const;

 private:
  bool v2_ = false;
  std::string memory_parent_;  // v2: the one parent
  std::string cpu_parent_;     // v1 only; empty: no cpu hierarchy
  std::string pids_parent_;    // v1 only; empty: no pids hierarchy (v2: memory_parent_)
  std::string problem_;
  std::string controllers_ = "+memory +cpu";  // v2: what groups hand down
};

}  // namespace trainyard::node
