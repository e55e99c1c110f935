// trainyard's scheduler on a cluster, over a store: gangs from PodGroups,
// capacity from Nodes less every bound pod, bindings made through the
// binder, and the reason a gang waits written as kube-scheduler does.
#include "cluster/cluster_scheduler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>

#include "api/registry.h"
#include "store/sqlite_store.h"

namespace trainyard::cluster {
namespace {

using ::testing::HasSubstr;

class ClusterSchedulerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = std::move(*store::SqliteStore::Open({.clock = &clock_}));
    for (const char* ns : {"default"}) {
      Create({{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns}}}});
    }
    AddNode("node-a", 2);
    AddNode("node-b", 2);
    scheduler_ = std::make_unique<ClusterScheduler>(
        ClusterSchedulerOptions{.store = store_.get(), .clock = &clock_, .bind = Binder()});
  }

  void Create(api::Json object) { ASSERT_TRUE(store_->Create(std::move(object)).ok()); }

  void AddNode(const std::string& name, int gpus) {
    Create({{"apiVersion", "v1"},
            {"kind", "Node"},
            {"metadata", {{"name", name}}},
            {"status",
             {{"allocatable",
               {{"cpu", "8"}, {"memory", "32Gi"}, {"pods", "110"}, {"nvidia.com/gpu", gpus}}}}}});
  }

  void AddGroup(const std::string& name, int members) {
    Create({{"apiVersion", "scheduling.x-k8s.io/v1alpha1"},
            {"kind", "PodGroup"},
            {"metadata", {{"name", name}, {"namespace", "default"}}},
            {"spec", {{"minMember", members}}}});
  }

  // A pod asking for `gpus` GPUs, for `scheduler`, in `group` (if any),
  // on `node` (if bound).
  void AddPod(const std::string& name, int gpus, const std::string& group,
              const std::string& scheduler = "trainyard", const std::string& node = "") {
    api::Json pod = {
        {"apiVersion", "v1"},
        {"kind", "Pod"},
        {"metadata", {{"name", name}, {"namespace", "default"}}},
        {"spec",
         {{"schedulerName", scheduler},
          {"containers",
           {{{"name", "main"},
             {"image", "x"},
             {"resources", {{"limits", {{"cpu", "1"}, {"nvidia.com/gpu", gpus}}}}}}}}}}};
    if (!group.empty()) pod["metadata"]["labels"]["scheduling.x-k8s.io/pod-group"] = group;
    if (!node.empty()) pod["spec"]["nodeName"] = node;
    Create(pod);
  }

  // As kube-apiserver's pods/binding: sets the node once.
  std::function<Status(const std::string&, const std::string&, const std::string&)> Binder() {
    return [this](const std::string& ns, const std::string& pod, const std::string& node) {
      ++bindings_;
      ASSIGN_OR_RETURN(api::Json doc, store_->Get({"Pod", ns, pod}));
      if (!api::StringAt(doc, {"spec", "nodeName"}).empty())
        return FailedPreconditionError("bound");
      doc["spec"]["nodeName"] = node;
      return store_->Update(doc).status();
    };
  }

  std::string NodeOf(const std::string& pod) {
    return api::StringAt(*store_->Get({"Pod", "default", pod}), {"spec", "nodeName"});
  }
  api::Json ScheduledCondition(const std::string& pod) {
    api::Json doc = *store_->Get({"Pod", "default", pod});
    const api::Json* conditions = api::FindAt(doc, {"status", "conditions"});
    if (conditions == nullptr || !conditions->is_array()) return nullptr;
    for (const api::Json& c : *conditions) {
      if (api::StringAt(c, "type") == "PodScheduled") return c;
    }
    return nullptr;
  }
  std::string EventReasons() {
    std::string out;
    Result<store::ObjectStore::ListResult> events = store_->List("Event", "default");
    for (const api::Json& e : events->items) {
      out += api::StringAt(e, {"involvedObject", "name"}) + ":" + api::StringAt(e, "reason") + " ";
    }
    return out;
  }

  FakeClock clock_;
  std::unique_ptr<store::SqliteStore> store_;
  std::unique_ptr<ClusterScheduler> scheduler_;
  int bindings_ = 0;
};

TEST_F(ClusterSchedulerTest, AGangIsBoundWholeAcrossNodes) {
  AddGroup("train", 3);
  for (const char* pod : {"train-0", "train-1", "train-2"}) AddPod(pod, 1, "train");
  Result<SchedulingPass> pass = scheduler_->Pass();
  ASSERT_TRUE(pass.ok()) << pass.status().message();
  EXPECT_EQ(pass->bound, 3);
  int on_a = 0;
  for (const char* pod : {"train-0", "train-1", "train-2"}) {
    ASSERT_NE(NodeOf(pod), "") << pod;
    on_a += NodeOf(pod) == "node-a";
  }
  EXPECT_EQ(on_a, 2);  // binpacked: two GPUs of one node, then the other
  EXPECT_THAT(EventReasons(), HasSubstr("train-0:Scheduled"));
}

TEST_F(ClusterSchedulerTest, AGangThatDoesNotFitWaitsWholeAndSaysWhy) {
  AddPod("other", 2, "", "default-scheduler", "node-a");  // another scheduler's, bound
  AddGroup("big", 3);
  for (const char* pod : {"big-0", "big-1", "big-2"}) AddPod(pod, 1, "big");
  Result<SchedulingPass> pass = scheduler_->Pass();
  ASSERT_TRUE(pass.ok()) << pass.status().message();
  EXPECT_EQ(pass->bound, 0);  // two GPUs are free, and the gang needs three
  EXPECT_EQ(pass->waiting, 3);
  EXPECT_EQ(NodeOf("big-0"), "");
  api::Json condition = ScheduledCondition("big-1");
  ASSERT_TRUE(condition.is_object());
  EXPECT_EQ(condition["status"], "False");
  EXPECT_EQ(condition["reason"], "Unschedulable");
  EXPECT_THAT(api::StringAt(condition, "message"), HasSubstr("nvidia.com/gpu"));
  EXPECT_THAT(EventReasons(), HasSubstr("big-2:FailedScheduling"));
  // Nothing changed, nothing is written again.
  int64_t version = store_->CurrentResourceVersion();
  ASSERT_TRUE(scheduler_->Pass().ok());
  EXPECT_EQ(store_->CurrentResourceVersion(), version);
  // The other pod finishes: its GPUs are free, and the gang goes.
  api::Json other = *store_->Get({"Pod", "default", "other"});
  other["status"]["phase"] = "Succeeded";
  ASSERT_TRUE(store_->UpdateStatus(other).ok());
  pass = scheduler_->Pass();
  ASSERT_TRUE(pass.ok()) << pass.status().message();
  EXPECT_EQ(pass->bound, 3);
}

TEST_F(ClusterSchedulerTest, APartOfAGangOrAMissingGroupWaits) {
  AddGroup("late", 3);
  AddPod("late-0", 1, "late");
  AddPod("late-1", 1, "late");  // the third is not made yet
  AddPod("lost-0", 1, "lost");  // its PodGroup is not made yet
  Result<SchedulingPass> pass = scheduler_->Pass();
  ASSERT_TRUE(pass.ok()) << pass.status().message();
  EXPECT_EQ(pass->bound, 0);
  EXPECT_THAT(api::StringAt(ScheduledCondition("late-0"), "message"),
              HasSubstr("has 2 of the 3 pods it needs at once"));
  EXPECT_THAT(api::StringAt(ScheduledCondition("lost-0"), "message"),
              HasSubstr("PodGroup default/lost does not exist yet"));
  AddPod("late-2", 1, "late");
  pass = scheduler_->Pass();
  ASSERT_TRUE(pass.ok()) << pass.status().message();
  EXPECT_EQ(pass->bound, 3);
}

TEST_F(ClusterSchedulerTest, OnlyItsOwnPodsArePlacedAndAloneWithoutAGroup) {
  AddPod("theirs", 1, "", "default-scheduler");
  AddPod("mine", 1, "");
  Result<SchedulingPass> pass = scheduler_->Pass();
  ASSERT_TRUE(pass.ok()) << pass.status().message();
  EXPECT_EQ(pass->bound, 1);
  EXPECT_EQ(NodeOf("theirs"), "");
  EXPECT_NE(NodeOf("mine"), "");
  EXPECT_EQ(bindings_, 1);
}

TEST_F(ClusterSchedulerTest, RunPlacesWhatArrivesUntilStopped) {
  std::thread running([&] { ASSERT_TRUE(scheduler_->Run().ok()); });
  AddGroup("live", 2);
  AddPod("live-0", 1, "live");
  AddPod("live-1", 1, "live");
  bool bound = false;
  for (auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
       !bound && std::chrono::steady_clock::now() < deadline;) {
    bound = !NodeOf("live-0").empty() && !NodeOf("live-1").empty();
    if (!bound) std::this_thread::yield();
  }
  scheduler_->RequestStop();
  running.join();
  EXPECT_TRUE(bound);
}

}  // namespace
}  // namespace trainyard::cluster
