#include "node/cgroups.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

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
      if (enabled.ok()) enabled = MakeGroup(c.memory_parent_);
      if (enabled.ok())
        enabled = WriteFile(c.memory_parent_ + "/cgroup.subtree_control", "+memory +cpu");
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
  return c;
}

Result<std::vector<std::string>> Cgroups::Make(const std::string& name,
                                               const CgroupLimits& limits) const {
  if (!problem_.empty()) return FailedPreconditionError(problem_);
  std::vector<std::string> dirs;
  std::string memory = memory_parent_ + "/" + name;
  RETURN_IF_ERROR(MakeGroup(memory));
  dirs.push_back(memory);
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

void Cgroups::Remove(const std::string& name) const {
  if (!problem_.empty()) return;
  rmdir((memory_parent_ + "/" + name).c_str());
  if (!v2_ && !cpu_parent_.empty()) rmdir((cpu_parent_ + "/" + name).c_str());
}

void Cgroups::RemoveStale() const {
  if (!problem_.empty()) return;
  for (const std::string& parent : {memory_parent_, cpu_parent_}) {
    std::error_code ec;
    if (parent.empty()) continue;
    for (const auto& entry : fs::directory_iterator(parent, ec)) {
      if (entry.is_directory(ec)) rmdir(entry.path().c_str());  // fails while in use
    }
  }
}

}  // namespace trainyard::node
