#include "server/table.h"

#include <gtest/gtest.h>

#include "api/printer_columns.h"
#include "server/resources.h"

namespace trainyard::server {
namespace {

TEST(TableTest, AgesReadAsKubectlPrintsThem) {
  using std::chrono::hours;
  using std::chrono::minutes;
  using std::chrono::seconds;
  EXPECT_EQ(api::HumanDuration(seconds(45)), "45s");
  EXPECT_EQ(api::HumanDuration(seconds(119)), "119s");
  EXPECT_EQ(api::HumanDuration(seconds(200)), "3m20s");
  EXPECT_EQ(api::HumanDuration(minutes(5)), "5m");
  EXPECT_EQ(api::HumanDuration(minutes(42)), "42m");
  EXPECT_EQ(api::HumanDuration(hours(5) + minutes(10)), "5h10m");
  EXPECT_EQ(api::HumanDuration(hours(30)), "30h");
  EXPECT_EQ(api::HumanDuration(hours(24 * 3 + 4)), "3d4h");
  EXPECT_EQ(api::HumanDuration(hours(24 * 30)), "30d");
}

TEST(TableTest, TrainingJobsShowTheLastConditionAsState) {
  TimePoint now = *ParseRfc3339("2026-11-22T10:05:00Z");
  api::Json job = {{"metadata", {{"name", "mnist"}, {"creationTimestamp", "2026-11-22T10:00:00Z"}}},
                   {"status",
                    {{"conditions",
                      {{{"type", "Created"}, {"status", "True"}},
                       {{"type", "Running"}, {"status", "False"}},
                       {{"type", "Succeeded"}, {"status", "True"}}}}}}};
  api::Json table = MakeTable(*api::ResourceTypeOfKind("PyTorchJob"), {&job}, "7", {.now = now});
  EXPECT_EQ(table["kind"], "Table");
  // Upstream's three, then trainyard's progress for -o wide (priority 1).
  EXPECT_EQ(table["columnDefinitions"].size(), 5u);
  EXPECT_EQ(table["columnDefinitions"][1]["name"], "State");
  EXPECT_EQ(table["columnDefinitions"][3]["name"], "Progress");
  EXPECT_EQ(table["columnDefinitions"][3]["priority"], 1);
  EXPECT_EQ(table["rows"][0]["cells"], api::Json({"mnist", "Succeeded", "5m", "", ""}));
  EXPECT_EQ(table["rows"][0]["object"]["kind"], "PartialObjectMetadata");
  EXPECT_EQ(table["rows"][0]["object"]["metadata"]["name"], "mnist");
}

// One object whose status no column expects (written by a client) shows
// with its name and "<invalid>" or blank cells; the others as always.
TEST(TableTest, AnObjectOfAnUnexpectedShapeNeverBreaksTheList) {
  TimePoint now = *ParseRfc3339("2026-11-22T10:05:00Z");
  api::Json bad = {
      {"metadata", {{"name", "bad"}, {"creationTimestamp", "2026-11-22T10:00:00Z"}}},
      {"status", {{"currentOptimalTrial", "not an object"}, {"conditions", "nor a list"}}}};
  api::Json worse = {{"metadata", {{"name", "worse"}}}, {"status", "a string"}};
  api::Json metric = {{"name", "loss"}, {"latest", "0.5"}};
  api::Json observation = {{"metrics", api::Json::array({metric})}};
  api::Json good = {{"metadata", {{"name", "good"}, {"creationTimestamp", "2026-11-22T10:00:00Z"}}},
                    {"spec", {{"objective", {{"objectiveMetricName", "loss"}}}}},
                    {"status",
                     {{"trials", 2},
                      {"trialsSucceeded", 1},
                      {"currentOptimalTrial", {{"observation", observation}}}}}};
  api::Json table =
      MakeTable(*api::ResourceTypeOfKind("Experiment"), {&bad, &worse, &good}, "1", {.now = now});
  ASSERT_EQ(table["rows"].size(), 3u);
  EXPECT_EQ(table["rows"][0]["cells"][0], "bad");
  EXPECT_EQ(table["rows"][1]["cells"][0], "worse");
  EXPECT_EQ(table["rows"][2]["cells"], api::Json({"good", "", "", "5m", "1/2", 0, "0.5"}));
  api::Json odd_priority = {{"metadata", {{"name", "odd"}}}, {"globalDefault", "yes"}};
  api::Json classes =
      MakeTable(*api::ResourceTypeOfKind("PriorityClass"), {&odd_priority}, "1", {.now = now});
  EXPECT_EQ(classes["rows"][0]["cells"][0], "odd");
  EXPECT_NE(classes["rows"][0]["cells"].dump().find("<invalid>"), std::string::npos);
}

TEST(TableTest, PodsShowReadyStatusAndRestartsAsKubectlDoes) {
  TimePoint now = *ParseRfc3339("2026-11-22T10:00:30Z");
  api::Json pod = {
      {"metadata", {{"name", "mnist-worker-0"}, {"creationTimestamp", "2026-11-22T10:00:00Z"}}},
      {"spec", {{"containers", {{{"name", "pytorch"}}}}}},
      {"status",
       {{"phase", "Running"},
        {"containerStatuses",
         {{{"name", "pytorch"},
           {"ready", false},
           {"restartCount", 2},
           {"state", {{"waiting", {{"reason", "CrashLoopBackOff"}}}}}}}}}}};
  api::Json table = MakeTable(*api::ResourceTypeOfKind("Pod"), {&pod}, "1", {.now = now});
  EXPECT_EQ(table["rows"][0]["cells"],
            api::Json({"mnist-worker-0", "0/1", "CrashLoopBackOff", "2", "30s", "", ""}));
  EXPECT_TRUE(MakeTable(*api::ResourceTypeOfKind("Pod"), {&pod}, "1",
                        {.now = now, .with_columns = false})["columnDefinitions"]
                  .empty());
}

TEST(TableTest, AnInitialisingPodShowsItsInitContainersAsKubectlDoes) {
  TimePoint now = *ParseRfc3339("2026-11-22T10:00:30Z");
  auto pod = [](api::Json init_statuses) {
    return api::Json{
        {"metadata", {{"name", "p"}, {"creationTimestamp", "2026-11-22T10:00:00Z"}}},
        {"spec",
         {{"initContainers", {{{"name", "side"}}, {{"name", "fetch"}}}},
          {"containers", {{{"name", "main"}}}}}},
        {"status",
         {{"phase", "Pending"},
          {"initContainerStatuses", std::move(init_statuses)},
          {"containerStatuses",
           {{{"name", "main"}, {"state", {{"waiting", {{"reason", "PodInitializing"}}}}}}}}}}};
  };
  auto cells = [&](const api::Json& p) {
    return MakeTable(*api::ResourceTypeOfKind("Pod"), {&p}, "1", {.now = now})["rows"][0]["cells"];
  };
  api::Json side = {
      {"name", "side"}, {"started", true}, {"state", {{"running", api::Json::object()}}}};
  api::Json running =
      pod({side, {{"name", "fetch"}, {"state", {{"running", api::Json::object()}}}}});
  EXPECT_EQ(cells(running)[2], "Init:1/2");
  api::Json failed = pod({side,
                          {{"name", "fetch"},
                           {"restartCount", 3},
                           {"state", {{"terminated", {{"exitCode", 2}, {"reason", "Error"}}}}}}});
  EXPECT_EQ(cells(failed)[2], "Init:Error");
  EXPECT_EQ(cells(failed)[3], "3") << "init containers' restarts count";
  api::Json backoff =
      pod({side, {{"name", "fetch"}, {"state", {{"waiting", {{"reason", "CrashLoopBackOff"}}}}}}});
  EXPECT_EQ(cells(backoff)[2], "Init:CrashLoopBackOff");
}

}  // namespace
}  // namespace trainyard::server
