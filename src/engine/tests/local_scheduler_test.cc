// The scheduler step alone, over a store: gangs, order, reasons.
#include "engine/local_scheduler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/pod_object.h"
#include "store/sqlite_store.h"

namespace trainyard::engine {
namespace {

class LocalSchedulerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = std::move(*store::SqliteStore::Open({.clock = &clock_}));
    scheduler_ = std::make_unique<LocalScheduler>(LocalSchedulerOptions{
        .store = store_.get(),
        .clock = &clock_,
        .node_name = "box",
        .machine = {.capacity = {{"cpu", 4000}, {"nvidia.com/gpu", 2000}}, .gpus = {"0", "1"}}});
  }

  // A pod of job `owner` asking for `gpus` GPUs.
  void AddPod(const std::string& name, const std::string& owner, int gpus) {
    api::Pod pod;
    pod.metadata.name = name;
    pod.metadata.namespace_ = "default";
    api::OwnerReference ref;
    ref.kind = "PyTorchJob";
    ref.name = owner;
    ref.uid = "uid-" + owner;
    ref.controller = true;
    pod.metadata.owner_references.push_back(ref);
    api::Container c;
    c.name = "main";
    c.resources.limits["cpu"] = Quantity::FromUnits(1);
    if (gpus > 0) c.resources.limits["nvidia.com/gpu"] = Quantity::FromUnits(gpus);
    pod.spec.containers.push_back(c);
    ASSERT_TRUE(store_->Create(api::EncodePod(pod)).ok());
  }
  api::Pod Pod(const std::string& name) {
    return *api::DecodePod(*store_->Get({"Pod", "default", name}));
  }
  std::string Waiting(const std::string& name) {
    for (const api::PodCondition& c : Pod(name).status.conditions) {
      if (c.type == "PodScheduled" && c.status == "False") return c.reason + ": " + c.message;
    }
    return "";
  }

  FakeClock clock_;
  std::unique_ptr<store::SqliteStore> store_;
  std::unique_ptr<LocalScheduler> scheduler_;
};

TEST_F(LocalSchedulerTest, BindsWholeGangsInOrderAndHoldsBackThoseAfterOneThatWaits) {
  AddPod("a-0", "a", 1);
  AddPod("a-1", "a", 1);
  ASSERT_TRUE(scheduler_->Sync().ok());
  EXPECT_EQ(Pod("a-0").spec.node_name, "box");
  EXPECT_EQ(Pod("a-0").metadata.annotations.at("trainyard.dev/gpus"), "0");
  EXPECT_EQ(Pod("a-1").metadata.annotations.at("trainyard.dev/gpus"), "1");

  AddPod("b-0", "b", 1);        // no GPU left: waits
  AddPod("c-0", "c", 0);        // would fit, but b came first
  AddPod("huge-0", "huge", 3);  // can never fit: fails, holds nobody back
  ASSERT_TRUE(scheduler_->Sync().ok());
  EXPECT_EQ(Pod("b-0").spec.node_name, "");
  EXPECT_EQ(Waiting("b-0"), "Unschedulable: insufficient nvidia.com/gpu: needs 1, 0 of 2 free");
  EXPECT_EQ(Pod("b-0").status.phase, "Pending");
  EXPECT_EQ(Waiting("c-0"), "Unschedulable: waiting behind an earlier job that does not fit yet");
  EXPECT_EQ(Waiting("huge-0"), "ExceedsCapacity: needs 3 nvidia.com/gpu, this machine has 2");

  // a finishes: its GPUs are free again, and b then c are bound.
  for (const char* name : {"a-0", "a-1"}) {
    api::Json doc = *store_->Get({"Pod", "default", name});
    doc["status"]["phase"] = "Succeeded";
    ASSERT_TRUE(store_->UpdateStatus(doc).ok());
  }
  ASSERT_TRUE(scheduler_->Sync().ok());
  EXPECT_EQ(Pod("b-0").spec.node_name, "box");
  EXPECT_EQ(Pod("b-0").metadata.annotations.at("trainyard.dev/gpus"), "0");
  EXPECT_EQ(Pod("c-0").spec.node_name, "box");
  EXPECT_FALSE(Pod("c-0").metadata.annotations.contains("trainyard.dev/gpus"));
  EXPECT_EQ(Pod("huge-0").spec.node_name, "");
}

}  // namespace
}  // namespace trainyard::engine
