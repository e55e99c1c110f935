#include "controller/conditions.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "controller/ttl.h"

namespace trainyard::controller {
namespace {

std::vector<std::string> Summary(const std::vector<api::JobCondition>& conditions) {
  std::vector<std::string> out;
  for (const auto& c : conditions) out.push_back(c.type + "=" + c.status);
  return out;
}

TEST(ConditionsTest, TheLastConditionIsAlwaysTheCurrentState) {
  std::vector<api::JobCondition> c;
  EXPECT_TRUE(SetCondition(c, "Created", "True", "PyTorchJobCreated", "created", "t1"));
  EXPECT_TRUE(SetCondition(c, "Running", "True", "PyTorchJobRunning", "running", "t2"));
  EXPECT_TRUE(SetCondition(c, "Restarting", "True", "PyTorchJobRestarting", "restarting", "t3"));
  EXPECT_THAT(Summary(c), ::testing::ElementsAre("Created=True", "Restarting=True"));
  EXPECT_TRUE(SetCondition(c, "Running", "True", "PyTorchJobRunning", "running", "t4"));
  EXPECT_THAT(Summary(c), ::testing::ElementsAre("Created=True", "Running=True"));
  EXPECT_TRUE(SetCondition(c, "Succeeded", "True", "PyTorchJobSucceeded", "done", "t5"));
  EXPECT_THAT(Summary(c),
              ::testing::ElementsAre("Created=True", "Running=False", "Succeeded=True"));
  EXPECT_EQ(c[1].last_transition_time, "t5");
  EXPECT_TRUE(IsFinished(c));
}

TEST(ConditionsTest, RepeatsAreNoOpsAndKeepTheirTransitionTime) {
  std::vector<api::JobCondition> c;
  SetCondition(c, "Running", "True", "R", "running", "t1");
  EXPECT_FALSE(SetCondition(c, "Running", "True", "R", "running", "t2"));
  EXPECT_TRUE(SetCondition(c, "Running", "True", "R", "running again", "t3"));
  EXPECT_EQ(c.back().last_transition_time, "t1");
  EXPECT_EQ(c.back().last_update_time, "t3");
}

TEST(ConditionsTest, NothingChangesOnceFailed) {
  std::vector<api::JobCondition> c;
  SetCondition(c, "Running", "True", "R", "running", "t1");
  SetCondition(c, "Failed", "True", "F", "failed", "t2");
  EXPECT_FALSE(SetCondition(c, "Succeeded", "True", "S", "done", "t3"));
  EXPECT_FALSE(SetCondition(c, "Running", "True", "R", "running", "t3"));
  EXPECT_THAT(Summary(c), ::testing::ElementsAre("Running=False", "Failed=True"));
}

TEST(ConditionsTest, SuspendAndResume) {
  std::vector<api::JobCondition> c;
  SetCondition(c, "Created", "True", "C", "created", "t1");
  SetCondition(c, "Suspended", "True", "PyTorchJobSuspended", "suspended", "t2");
  EXPECT_TRUE(IsTrue(c, "Suspended"));
  SetCondition(c, "Suspended", "False", "PyTorchJobResumed", "resumed", "t3");
  EXPECT_FALSE(IsTrue(c, "Suspended"));
  EXPECT_EQ(FindCondition(c, "Suspended")->last_transition_time, "t3");
  EXPECT_FALSE(IsFinished(c));
}

TEST(ConditionsTest, AStoredConditionIsReadWhateverElseTheStatusHolds) {
  api::Json stored = api::Json::parse(R"({"status": {"conditions": [
      "not an object", {"type": 7}, {"type": "Failed", "status": "True", "reason": "BackoffLimit"}
  ]}})");
  std::optional<StoredCondition> failed = StoredConditionOf(stored, "Failed");
  ASSERT_TRUE(failed.has_value());
  EXPECT_EQ(failed->status, "True");
  EXPECT_EQ(failed->reason, "BackoffLimit");
  EXPECT_FALSE(StoredConditionOf(stored, "Running").has_value());
  EXPECT_FALSE(StoredConditionOf(api::Json::parse(R"({"status": "oops"})"), "Failed"));
}

TEST(TtlTest, AFinishedObjectIsRemovedOnlyOnceItsTimeHasCome) {
  TimePoint finished = TimePoint{} + std::chrono::hours(1);
  int removed = 0;
  auto remove = [&] {
    ++removed;
    return OkStatus();
  };
  Result<TtlStep> early = ExpireAfterTtl(60, finished, finished + std::chrono::seconds(20), remove);
  ASSERT_TRUE(early.ok());
  EXPECT_EQ(early->look_again, std::chrono::seconds(40));
  EXPECT_FALSE(early->deleted);
  EXPECT_EQ(removed, 0);

  EXPECT_FALSE(ExpireAfterTtl(std::nullopt, finished, finished, remove)->look_again);
  EXPECT_FALSE(ExpireAfterTtl(60, std::nullopt, finished, remove)->look_again);
  EXPECT_EQ(removed, 0);

  Result<TtlStep> due = ExpireAfterTtl(60, finished, finished + std::chrono::seconds(60), remove);
  ASSERT_TRUE(due.ok());
  EXPECT_TRUE(due->deleted);
  EXPECT_EQ(removed, 1);

  Result<TtlStep> failed =
      ExpireAfterTtl(0, finished, finished, [] { return UnavailableError("store is away"); });
  EXPECT_FALSE(failed.ok());
}

}  // namespace
}  // namespace trainyard::controller
