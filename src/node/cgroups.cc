#include "node/cgroups.h"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/strings.h"

namespace trainyard::node {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kCfsPeriodUs = 100'000;  // the kubelet's period

Status WriteFile(const std::string& path, const std::string& value) {
  std::ofstream out(path);
  out << value;
  out.flush();
  if (!out) {
    return UnavailableError(fmt::format("cannot write {} to {}: {}", value, path, strerror(errno)));
  }
  return OkStatus();
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The value of `key` in a "key value" per line file (memory.events,
// memory.oom_control).
int64_t Field(const std::string& text, const std::string& key) {
  std::istringstream lines(text);
  std::string name;
  int64_t value = 0;
  while (lines >> name >> value) {
    if (name == key) return value;
  }
  return 0;
}

// trainyard's own group in hierarchy `controller` (v1), or the unified one
// ("" for v2), from /proc/self/cgroup.
std::optional<std::string> OwnGroup(const std::string& self, const std::string& controller) {
  std::istringstream lines(ReadFile(self));
  for (std::string line; std::getline(lines, line);) {
    size_t first = line.find(':'), second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    std::string controllers = line.substr(first + 1, second - first - 1);
    std::string path = line.substr(second + 1);
    if (controller.empty()
            ? controllers.empty()
            : ("," + controllers + ",").find("," + controller + ",") != std::string::npos) {
      return path;
    }
  }
  return std::nullopt;
}

bool Writable(const std::string& dir) { return access(dir.c_str(), W_OK) == 0; }

// Makes `dir` (and its parents) writable groups.
Status MakeGroup(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    return UnavailableError(fmt::format("cannot make control group {}: {}", dir, ec.message()));
  return OkStatus();
}

}  // namespace

Cgroups Cgroups::Detect(const std::string& root, const std::string& self) {
  Cgroups c;
  std::error_code ec;
  if (fs::exists(root + "/cgroup.controllers", ec)) {
    c.v2_ = true;
    std::string controllers = ReadFile(root + "/cgroup.controllers");
    std::optional<std::string> own = OwnGroup(self, "");
    if (controllers.find("memory") == std::string::npos) {
      c.problem_ = "cgroup v2 offers no memory controller here";
    } else if (!own || *own != "/") {
      // A group with processes in it cannot hand controllers to groups
      // under it (v2's rule): trainyard would need a delegated group.
      c.problem_ = fmt::format(
          "cgroup v2: trainyard runs in group {}, which holds processes and so cannot give "
          "controllers to groups under it; run it at the root of its cgroup namespace, or in a "
          "delegated scope (systemd-run --scope -p Delegate=yes)",
          own.value_or("?"));
    } else if (!Writable(root)) {
      c.problem_ = fmt::format("cannot write {} (only root, or a delegated user, may)", root);
    } else {
      c.memory_parent_ = root + "/trainyard";
      Status enabled = WriteFile(root + "/cgroup.subtree_control", "+memory +cpu");
      // pids where the machine offers it: bounds are kept without it.
      if (enabled.ok() && controllers.find("pids") != std::string::npos) {
        (void)WriteFile(root + "/cgroup.subtree_control", "+pids");
        c.controllers_ = "+memory +cpu +pids";
      }
      if (enabled.ok()) enabled = MakeGroup(c.memory_parent_);
      if (enabled.ok())
        enabled = WriteFile(c.memory_parent_ + "/cgroup.subtree_control", c.controllers_);
      if (!enabled.ok()) c.problem_ = std::string(enabled.message());
    }
    return c;
  }
  std::optional<std::string> memory = OwnGroup(self, "memory");
  std::string memory_root = root + "/memory";
  if (!memory || !fs::exists(memory_root + *memory, ec)) {
    c.problem_ = fmt::format("no cgroup memory hierarchy at {}", memory_root);
    return c;
  }
  if (!Writable(memory_root + *memory)) {
    c.problem_ = fmt::format("cannot write {} (only root may)", memory_root + *memory);
    return c;
  }
  c.memory_parent_ = memory_root + (*memory == "/" ? "" : *memory) + "/trainyard";
  std::optional<std::string> cpu = OwnGroup(self, "cpu");
  std::string cpu_root = root + "/cpu";
  if (cpu && fs::exists(cpu_root + *cpu, ec) && Writable(cpu_root + *cpu)) {
    c.cpu_parent_ = cpu_root + (*cpu == "/" ? "" : *cpu) + "/trainyard";
  }
  std::optional<std::string> pids = OwnGroup(self, "pids");
  std::string pids_root = root + "/pids";
  if (pids && fs::exists(pids_root + *pids, ec) && Writable(pids_root + *pids)) {
    c.pids_parent_ = pids_root + (*pids == "/" ? "" : *pids) + "/trainyard";
  }
  return c;
}

Result<std::vector<std::string>> Cgroups::Make(const std::string& name,
                                               const CgroupLimits& limits) const {
  if (!problem_.empty()) return FailedPreconditionError(problem_);
  std::vector<std::string> dirs;
  std::string pod = name.substr(0, name.find('/'));
  std::string memory = memory_parent_ + "/" + name;
  if (v2_) {
    // The pod's group hands its controllers down to its runs' groups, and
    // bounds the tasks of them all.
    std::string pod_dir = memory_parent_ + "/" + pod;
    RETURN_IF_ERROR(MakeGroup(pod_dir));
    RETURN_IF_ERROR(WriteFile(pod_dir + "/cgroup.subtree_control", controllers_));
    if (limits.pod_max_pids && controllers_.find("pids") != std::string::npos) {
      RETURN_IF_ERROR(WriteFile(pod_dir + "/pids.max", std::to_string(*limits.pod_max_pids)));
    }
  }
  RETURN_IF_ERROR(MakeGroup(memory));
  dirs.push_back(memory);
  if (!v2_ && !pids_parent_.empty()) {
    std::string pids = pids_parent_ + "/" + pod;
    RETURN_IF_ERROR(MakeGroup(pids));
    if (limits.pod_max_pids) {
      RETURN_IF_ERROR(WriteFile(pids + "/pids.max", std::to_string(*limits.pod_max_pids)));
    }
    dirs.push_back(pids);
  }
  std::string cpu = v2_ ? memory : cpu_parent_ + "/" + name;
  if (v2_) {
    if (limits.memory_bytes) {
      RETURN_IF_ERROR(WriteFile(memory + "/memory.max", std::to_string(*limits.memory_bytes)));
      // No swap beyond the limit, as a node without swap gives none.
      (void)WriteFile(memory + "/memory.swap.max", "0");
    }
    if (limits.cpu_limit_milli) {
      RETURN_IF_ERROR(WriteFile(
          cpu + "/cpu.max",
          fmt::format("{} {}",
                      std::max<int64_t>(1000, *limits.cpu_limit_milli * kCfsPeriodUs / 1000),
                      kCfsPeriodUs)));
    }
    if (limits.cpu_request_milli) {
      // The kubelet's shares (1024 per CPU) mapped onto v2's weights.
      int64_t shares = std::max<int64_t>(2, *limits.cpu_request_milli * 1024 / 1000);
      RETURN_IF_ERROR(
          WriteFile(cpu + "/cpu.weight", std::to_string(1 + ((shares - 2) * 9999) / 262142)));
    }
    return dirs;
  }
  if (limits.memory_bytes) {
    std::string bytes = std::to_string(*limits.memory_bytes);
    RETURN_IF_ERROR(WriteFile(memory + "/memory.limit_in_bytes", bytes));
    // Memory and swap together held to the limit: no swap beyond it.
    if (fs::exists(memory + "/memory.memsw.limit_in_bytes")) {
      (void)WriteFile(memory + "/memory.memsw.limit_in_bytes", bytes);
    }
  }
  if (!cpu_parent_.empty() && (limits.cpu_limit_milli || limits.cpu_request_milli)) {
    RETURN_IF_ERROR(MakeGroup(cpu));
    dirs.push_back(cpu);
    if (limits.cpu_limit_milli) {
      RETURN_IF_ERROR(WriteFile(cpu + "/cpu.cfs_period_us", std::to_string(kCfsPeriodUs)));
      RETURN_IF_ERROR(WriteFile(
          cpu + "/cpu.cfs_quota_us",
          std::to_string(std::max<int64_t>(1000, *limits.cpu_limit_milli * kCfsPeriodUs / 1000))));
    }
    if (limits.cpu_request_milli) {
      RETURN_IF_ERROR(
          WriteFile(cpu + "/cpu.shares",
                    std::to_string(std::max<int64_t>(2, *limits.cpu_request_milli * 1024 / 1000))));
    }
  }
  return dirs;
}

bool Cgroups::OomKilled(const std::string& name) const {
  if (!problem_.empty()) return false;
  std::string dir = memory_parent_ + "/" + name;
  if (v2_) return Field(ReadFile(dir + "/memory.events"), "oom_kill") > 0;
  return Field(ReadFile(dir + "/memory.oom_control"), "oom_kill") > 0;
}

void Cgroups::Kill(const std::string& name) const {
  if (!problem_.empty()) return;
  std::string procs = memory_parent_ + "/" + name + "/cgroup.procs";
  // A process may fork while its group is read: read again until it is
  // empty (the pod's pids bound keeps that short), a bounded number of
  // times.
  for (int round = 0; round < 100; ++round) {
    std::istringstream pids(ReadFile(procs));
    bool any = false;
    for (pid_t pid; pids >> pid;) {
      if (pid > 0 && pid != getpid()) any = kill(pid, SIGKILL) == 0 || any;
    }
    if (!any) return;
    usleep(1000);  // the kernel takes them out of the group as they die
  }
}

void Cgroups::Remove(const std::string& name) const {
  if (!problem_.empty()) return;
  std::string pod = name.substr(0, name.find('/'));
  for (const std::string& parent : {memory_parent_, cpu_parent_}) {
    if (parent.empty() || (v2_ && parent != memory_parent_)) continue;
    rmdir((parent + "/" + name).c_str());
    rmdir((parent + "/" + pod).c_str());  // fails while another run has a group
  }
  if (!v2_ && !pids_parent_.empty()) rmdir((pids_parent_ + "/" + pod).c_str());
}

void Cgroups::RemoveStale() const {
  if (!problem_.empty()) return;
  for (const std::string& parent : {memory_parent_, cpu_parent_, pids_parent_}) {
    std::error_code ec;
    if (parent.empty()) continue;
    for (const auto& pod : fs::directory_iterator(parent, ec)) {
      if (!pod.is_directory(ec)) continue;
      std::error_code inner;
      for (const auto& run : fs::directory_iterator(pod.path(), inner)) {
        if (run.is_directory(inner)) rmdir(run.path().c_str());  // fails while in use
      }
      rmdir(pod.path().c_str());
    }
  }
}

Cgroups Cgroups::Scoped(const std::string& scope) const {
  Cgroups scoped = *this;
  if (!problem_.empty()) return scoped;
  for (std::string* parent : {&scoped.memory_parent_, &scoped.cpu_parent_, &scoped.pids_parent_}) {
    if (parent->empty()) continue;
    *parent += "/" + scope;
    Status made = MakeGroup(*parent);
    // v2: the scope hands its controllers down to its pods' groups.
    if (made.ok() && v2_) made = WriteFile(*parent + "/cgroup.subtree_control", controllers_);
    if (!made.ok()) {
      scoped.problem_ = std::string(made.message());
      return scoped;
    }
  }
  return scoped;
}

void Cgroups::RemoveScope() const {
  if (!problem_.empty()) return;
  RemoveStale();
  for (const std::string& parent : {memory_parent_, cpu_parent_, pids_parent_}) {
    if (!parent.empty()) rmdir(parent.c_str());  // fails while a group is in it
  }
}

std::string ScopeOf(const std::string& state_dir) {
  return fmt::format("state-{:016x}", StableHash(state_dir));
}

int64_t DefaultPodMaxPids(const std::string& pid_max_file) {
  int64_t pid_max = 0;
  std::istringstream(ReadFile(pid_max_file)) >> pid_max;
  if (pid_max <= 0) pid_max = 32768;  // the kernel's own default
  return std::clamp<int64_t>(pid_max / 8, 256, 16384);
}

}  // namespace trainyard::node
