// Containers' resource limits, enforced as the kubelet enforces them: one
// control group per container run, under a `trainyard` group beneath
// trainyard's own (cgroup v1's memory and cpu hierarchies, or the v2
// unified one): limits.memory as the memory limit (no swap beyond it),
// limits.cpu as a CFS quota per 100 ms period, requests.cpu as the weight
// (cpu.shares, or cpu.weight on v2). A run the kernel killed for memory
// reads as OOMKilled.
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
  bool any() const { return memory_bytes || cpu_limit_milli || cpu_request_milli; }
};

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

  // Makes group `name` with `limits`: the directories a process joins.
  Result<std::vector<std::string>> Make(const std::string& name, const CgroupLimits& limits) const;
  // Whether the kernel killed a process of group `name` for want of memory.
  bool OomKilled(const std::string& name) const;
  // Removes group `name` (once nothing runs in it).
  void Remove(const std::string& name) const;
  // Removes the groups an earlier trainyard left with nothing in them.
  void RemoveStale() const;

 private:
  bool v2_ = false;
  std::string memory_parent_;  // v2: the one parent
  std::string cpu_parent_;     // v1 only; empty: no cpu hierarchy
  std::string problem_;
};

}  // namespace trainyard::node
