// Control groups as the node agent makes them, on this machine when it
// allows (root on cgroup v1 or a writable v2 root); skipped otherwise.
#include "node/cgroups.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace trainyard::node {
namespace {

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(CgroupsTest, AGroupHoldsTheLimitsAsTheKubeletSetsThem) {
  Cgroups cgroups = Cgroups::Detect();
  if (!cgroups.problem().empty()) GTEST_SKIP() << cgroups.problem();
  std::string pod = "cgroups-test-" + std::to_string(getpid());
  std::string name = pod + "/main_0";
  Result<std::vector<std::string>> dirs = cgroups.Make(name, {.memory_bytes = 64 << 20,
                                                              .cpu_limit_milli = 1500,
                                                              .cpu_request_milli = 250,
                                                              .pod_max_pids = 300});
  ASSERT_TRUE(dirs.ok()) << dirs.status().ToString();
  ASSERT_FALSE(dirs->empty());
  const std::string& memory = dirs->front();
  auto pids_max = [&](const std::string& dir) { return Read(dir + "/pids.max"); };
  if (cgroups.v2()) {
    EXPECT_EQ(Read(memory + "/memory.max"), std::to_string(64 << 20) + "\n");
    EXPECT_EQ(Read(memory + "/cpu.max"), "150000 100000\n");
    // The pod's tasks are bounded in the pod's group, above the run's.
    std::string pod_dir = std::filesystem::path(memory).parent_path().string();
    if (std::filesystem::exists(pod_dir + "/pids.max")) EXPECT_EQ(pids_max(pod_dir), "300\n");
  } else {
    EXPECT_EQ(Read(memory + "/memory.limit_in_bytes"), std::to_string(64 << 20) + "\n");
    auto find = [&](const char* hierarchy) {
      for (const std::string& d : *dirs) {
        if (d.find(hierarchy) != std::string::npos) return d;
      }
      return std::string();
    };
    std::string cpu = find("/cpu/");
    ASSERT_FALSE(cpu.empty()) << "a cpu group too";
    EXPECT_EQ(Read(cpu + "/cpu.cfs_quota_us"), "150000\n");
    EXPECT_EQ(Read(cpu + "/cpu.shares"), "256\n");
    std::string pids = find("/pids/");
    if (!pids.empty()) EXPECT_EQ(pids_max(pids), "300\n");
  }
  EXPECT_FALSE(cgroups.OomKilled(name));
  cgroups.Remove(name);
  for (const std::string& dir : *dirs) EXPECT_FALSE(std::filesystem::exists(dir)) << dir;
}

// What a run leaves behind (a daemon that left its process group) is
// killed with its group; a fork bomb meets its pod's bound.
TEST(CgroupsTest, WhatARunLeavesIsKilledWithItsGroupAndItsTasksAreBounded) {
  Cgroups cgroups = Cgroups::Detect();
  if (!cgroups.problem().empty()) GTEST_SKIP() << cgroups.problem();
  std::string name = "cgroups-kill-" + std::to_string(getpid()) + "/main_0";
  Result<std::vector<std::string>> dirs = cgroups.Make(name, {.pod_max_pids = 20});
  ASSERT_TRUE(dirs.ok()) << dirs.status().ToString();
  pid_t child = fork();
  if (child == 0) {
    for (const std::string& dir : *dirs) std::ofstream(dir + "/cgroup.procs") << getpid();
    setsid();
    // Forks until the bound stops it, each child sleeping on.
    for (int i = 0; i < 100; ++i) {
      if (fork() == 0) {
        pause();
        _exit(0);
      }
    }
    pause();
    _exit(0);
  }
  std::string procs = dirs->front() + "/cgroup.procs";
  auto count = [&] {
    std::istringstream in(Read(procs));
    int n = 0;
    for (pid_t p; in >> p;) ++n;
    return n;
  };
  // Waits (up to 10 s) for the forks to be made, or refused.
  for (int i = 0; i < 1000 && count() < 20; ++i) usleep(10'000);
  EXPECT_LE(count(), 20);
  EXPECT_GT(count(), 1);
  cgroups.Kill(name);
  EXPECT_EQ(count(), 0);
  int status = 0;
  waitpid(child, &status, 0);
  cgroups.Remove(name);
}

// Two engines on one machine (a run beside a server, test binaries side by
// side) keep their groups apart: one's sweep of stale groups never takes a
// group the other has just made, before its process joined it.
TEST(CgroupsTest, ScopesKeepEachEnginesGroupsFromTheOthersSweep) {
  Cgroups machine = Cgroups::Detect();
  if (!machine.problem().empty()) GTEST_SKIP() << machine.problem();
  std::string pid = std::to_string(getpid());
  Cgroups a = machine.Scoped(ScopeOf("/state/a-" + pid));
  Cgroups b = machine.Scoped(ScopeOf("/state/b-" + pid));
  ASSERT_EQ(a.problem(), "");
  std::string name = "scoped-" + pid + "/main_0";
  Result<std::vector<std::string>> dirs = a.Make(name, {.memory_bytes = 64 << 20});
  ASSERT_TRUE(dirs.ok()) << dirs.status().ToString();
  b.RemoveStale();
  b.RemoveScope();
  for (const std::string& dir : *dirs) EXPECT_TRUE(std::filesystem::exists(dir)) << dir;
  a.Remove(name);
  a.RemoveScope();
  std::string scope = std::filesystem::path(dirs->front()).parent_path().parent_path().string();
  EXPECT_FALSE(std::filesystem::exists(scope)) << "an emptied scope is removed";
  EXPECT_EQ(ScopeOf("/var/lib/trainyard/server"), ScopeOf("/var/lib/trainyard/server"));
  EXPECT_NE(ScopeOf("/var/lib/trainyard/server"), ScopeOf("/var/lib/trainyard/runs/x"));
}

TEST(CgroupsTest, WithoutAHierarchyItSaysWhy) {
  Cgroups cgroups = Cgroups::Detect("/nonexistent-cgroup-root", "/proc/self/cgroup");
  EXPECT_NE(cgroups.problem(), "");
  EXPECT_FALSE(cgroups.Make("x", {.memory_bytes = 1}).ok());
}

}  // namespace
}  // namespace trainyard::node
