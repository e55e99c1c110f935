// Runs every scenario in tests/scenarios/: the decision must match what the
// file expects, be the same when computed again, and be the same when
// every node is scanned instead of searched through the index.
#include "scheduler/tests/scenario.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>

namespace trainyard::scheduler::testing {
namespace {

std::filesystem::path ScenarioDir() {
  const char* root = std::getenv("TRAINYARD_SOURCE_DIR");
  return std::filesystem::path(root ? root : ".") / "src/scheduler/tests/scenarios";
}

std::vector<Scenario> All() {
  std::vector<Scenario> all;
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(ScenarioDir())) {
    if (entry.path().extension() == ".yaml") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& file : files) {
    Result<std::vector<Scenario>> loaded = LoadScenarios(file.string());
    EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
    if (loaded.ok()) all.insert(all.end(), loaded->begin(), loaded->end());
  }
  return all;
}

TEST(ScenarioTest, EveryScenarioDecidesAsExpected) {
  std::vector<Scenario> all = All();
  EXPECT_GE(all.size(), 20u) << "the scenario files went missing";
  for (const Scenario& s : all) {
    SCOPED_TRACE(s.file + ": " + s.name);
    Decision decision = Schedule(s.snapshot, s.options);
    EXPECT_EQ(Compare(decision, s.expect), "") << Render(decision);
    EXPECT_EQ(Render(Schedule(s.snapshot, s.options)), Render(decision)) << "not repeatable";
    ScheduleOptions reference = s.options;
    reference.reference_search = true;
    EXPECT_EQ(Render(Schedule(s.snapshot, reference)), Render(decision))
        << "the indexed search chose differently from a scan of every node";
  }
}

}  // namespace
}  // namespace trainyard::scheduler::testing
