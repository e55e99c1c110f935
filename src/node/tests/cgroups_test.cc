// Control groups as the node agent makes them, on this machine when it
// allows (root on cgroup v1 or a writable v2 root); skipped otherwise.
#include "node/cgroups.h"

#include <gtest/gtest.h>

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
  std::string name = "cgroups-test-" + std::to_string(getpid());
  Result<std::vector<std::string>> dirs = cgroups.Make(
      name, {.memory_bytes = 64 << 20, .cpu_limit_milli = 1500, .cpu_request_milli = 250});
  ASSERT_TRUE(dirs.ok()) << dirs.status().ToString();
  ASSERT_FALSE(dirs->empty());
  const std::string& memory = dirs->front();
  if (cgroups.v2()) {
    EXPECT_EQ(Read(memory + "/memory.max"), std::to_string(64 << 20) + "\n");
    EXPECT_EQ(Read(memory + "/cpu.max"), "150000 100000\n");
  } else {
    EXPECT_EQ(Read(memory + "/memory.limit_in_bytes"), std::to_string(64 << 20) + "\n");
    ASSERT_EQ(dirs->size(), 2u) << "a cpu group too";
    EXPECT_EQ(Read(dirs->at(1) + "/cpu.cfs_quota_us"), "150000\n");
    EXPECT_EQ(Read(dirs->at(1) + "/cpu.shares"), "256\n");
  }
  EXPECT_FALSE(cgroups.OomKilled(name));
  cgroups.Remove(name);
  for (const std::string& dir : *dirs) EXPECT_FALSE(std::filesystem::exists(dir)) << dir;
}

TEST(CgroupsTest, WithoutAHierarchyItSaysWhy) {
  Cgroups cgroups = Cgroups::Detect("/nonexistent-cgroup-root", "/proc/self/cgroup");
  EXPECT_NE(cgroups.problem(), "");
  EXPECT_FALSE(cgroups.Make("x", {.memory_bytes = 1}).ok());
}

}  // namespace
}  // namespace trainyard::node
