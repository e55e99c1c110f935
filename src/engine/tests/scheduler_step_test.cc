// The scheduling step over a store: gangs read from pods and their jobs,
// decisions carried out, reasons and queue status written.
#include "engine/scheduler_step.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/pod_object.h"
#include "engine/inventory.h"
#include "store/sqlite_store.h"

namespace trainyard::engine {
namespace {

using ::testing::HasSubstr;

class SchedulerStepTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = std::move(*store::SqliteStore::Open({.clock = &clock_}));
    runtime::MachineFacts box{
        .cpus = 4, .memory_bytes = 8LL << 30, .gpus = {{"0", "", ""}, {"1", "", ""}}};
    step_ = std::make_unique<SchedulerStep>(SchedulerStepOptions{
        .store = store_.get(), .clock = &clock_, .nodes = {MachineNode("box", box)}});
  }

  // A job `owner` (any labels, schedulingPolicy) and its pods, each asking
  // for `gpus` GPUs and one CPU.
  void AddJob(const std::string& owner, int pods, int gpus, api::Json extra = api::Json::object()) {
    api::Json job = {{"apiVersion", "kubeflow.org/v1"},
                     {"kind", "PyTorchJob"},
                     {"metadata", {{"name", owner}, {"namespace", "default"}}},
                     {"spec", api::Json::object()}};
    job.merge_patch(extra);
    ASSERT_TRUE(store_->Create(job).ok());
    for (int i = 0; i < pods; ++i) AddPod(owner + "-" + std::to_string(i), owner, gpus);
  }
  void AddPod(const std::string& name, const std::string& owner, int gpus) {
    api::Pod pod;
    pod.metadata.name = name;
    pod.metadata.namespace_ = "default";
    api::OwnerReference ref;
    ref.api_version = "kubeflow.org/v1";
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
  void Apply(const std::string& yaml_json) {
    ASSERT_TRUE(store_->Create(api::Json::parse(yaml_json)).ok());
  }
  void Finish(const std::string& name) {
    api::Json doc = *store_->Get({"Pod", "default", name});
    doc["status"]["phase"] = "Succeeded";
    ASSERT_TRUE(store_->UpdateStatus(doc).ok());
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
  std::unique_ptr<SchedulerStep> step_;
  // A TrainJob and a JobSet of its name, controlled by it when `owned`.
  void AddTrainJobAndJobSet(const std::string& name, bool owned) {
    Apply(fmt::format(R"({{"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
      "metadata": {{"name": "{}", "namespace": "default"}},
      "spec": {{"runtimeRef": {{"name": "torch"}}}}}})",
                      name));
    api::Json jobset = {{"apiVersion", "jobset.x-k8s.io/v1alpha2"},
                        {"kind", "JobSet"},
                        {"metadata", {{"name", name}, {"namespace", "default"}}},
                        {"spec", {{"replicatedJobs", api::Json::array()}}}};
    if (owned) {
      jobset["metadata"]["ownerReferences"] = {
          {{"apiVersion", "trainer.kubeflow.org/v1alpha1"},
           {"kind", "TrainJob"},
           {"name", name},
           {"uid", (*store_->Get({"TrainJob", "default", name}))["metadata"]["uid"]},
           {"controller", true}}};
    }
    ASSERT_TRUE(store_->Create(jobset).ok());
  }
  // The controller reference to `name` of `kind`.
  api::Json ControllerRef(const char* kind, const std::string& name) {
    api::Json owner = *store_->Get({kind, "default", name});
    return api::Json::array({{{"apiVersion", owner["apiVersion"]},
                              {"kind", kind},
                              {"name", name},
                              {"uid", owner["metadata"]["uid"]},
                              {"controller", true}}});
  }
  // A pod of the JobSet's Job `job` (made, controlled by the JobSet, if
  // missing), asking for a GPU, marked with the gang when `grouped`.
  void AddJobSetPod(const std::string& job, const std::string& pod, const std::string& train_job,
                    bool grouped) {
    if (!store_->Get({"Job", "default", job}).ok()) {
      ASSERT_TRUE(
          store_
              ->Create({{"apiVersion", "batch/v1"},
                        {"kind", "Job"},
                        {"metadata",
                         {{"name", job},
                          {"namespace", "default"},
                          {"ownerReferences", ControllerRef("JobSet", train_job)}}},
                        {"spec", {{"template", {{"spec", {{"containers", api::Json::array()}}}}}}}})
              .ok());
    }
    AddPod(pod, job, 1);
    api::Json doc = *store_->Get({"Pod", "default", pod});
    doc["metadata"]["ownerReferences"] = ControllerRef("Job", job);
    doc["metadata"]["labels"]["jobset.sigs.k8s.io/jobset-name"] = train_job;
    if (grouped) doc["metadata"]["labels"]["scheduling.x-k8s.io/pod-group"] = train_job;
    ASSERT_TRUE(store_->Update(doc).ok());
  }
};

// A TrainJob whose runtime asks for a gang: the pods of all its Jobs are
// placed together or not at all; without the ask each Job is a gang.
TEST_F(SchedulerStepTest, ATrainJobsPodGroupIsOneGangAcrossItsJobs) {
  for (const char* name : {"grouped", "apart", "unowned"}) {
    // The TrainJob's own JobSet; "unowned"'s is someone else's of its name.
    AddTrainJobAndJobSet(name, std::string(name) != "unowned");
  }
  // A pod of another kind of job bearing the gang's marks is not of it:
  // alone, it needs nothing the gang waits for and starts.
  AddJob("impostor", 1, 0);
  api::Json impostor = *store_->Get({"Pod", "default", "impostor-0"});
  impostor["metadata"]["labels"]["jobset.sigs.k8s.io/jobset-name"] = "grouped";
  impostor["metadata"]["labels"]["scheduling.x-k8s.io/pod-group"] = "grouped";
  ASSERT_TRUE(store_->Update(impostor).ok());
  // Three GPUs asked, two on the machine: the group waits whole.
  AddJobSetPod("grouped-init-0", "grouped-init-0-0", "grouped", true);
  AddJobSetPod("grouped-node-0", "grouped-node-0-0", "grouped", true);
  AddJobSetPod("grouped-node-0", "grouped-node-0-1", "grouped", true);
  ASSERT_TRUE(step_->Sync().ok());
  for (const char* pod : {"grouped-init-0-0", "grouped-node-0-0", "grouped-node-0-1"}) {
    EXPECT_EQ(Pod(pod).spec.node_name, "") << pod;
  }
  EXPECT_THAT(Waiting("grouped-init-0-0"), ::testing::HasSubstr("Insufficient nvidia.com/gpu"));
  EXPECT_EQ(Pod("impostor-0").spec.node_name, "box");
  // Without a pod group, the Job that fits starts alone.
  AddJobSetPod("apart-init-0", "apart-init-0-0", "apart", false);
  ASSERT_TRUE(step_->Sync().ok());
  EXPECT_EQ(Pod("apart-init-0-0").spec.node_name, "box");
  // A mark naming a TrainJob that does not control the JobSet is no gang:
  // each of these Jobs is its own, and the one that fits starts.
  AddJobSetPod("unowned-init-0", "unowned-init-0-0", "unowned", true);
  AddJobSetPod("unowned-node-0", "unowned-node-0-0", "unowned", true);
  AddJobSetPod("unowned-node-0", "unowned-node-0-1", "unowned", true);
  ASSERT_TRUE(step_->Sync().ok());
  EXPECT_EQ(Pod("unowned-init-0-0").spec.node_name, "box");
}

TEST_F(SchedulerStepTest, BindsWholeGangsWithGpuIdsAndSaysWhyOthersWait) {
  AddJob("a", 2, 1);
  ASSERT_TRUE(step_->Sync().ok());
  EXPECT_EQ(Pod("a-0").spec.node_name, "box");
  EXPECT_EQ(Pod("a-0").metadata.annotations.at("trainyard.dev/gpus"), "0");
  EXPECT_EQ(Pod("a-1").metadata.annotations.at("trainyard.dev/gpus"), "1");

  AddJob("b", 1, 1);     // no GPU left: waits
  AddJob("c", 1, 0);     // needs none of what b waits for: runs beside
  AddJob("huge", 1, 3);  // can never fit: told so
  ASSERT_TRUE(step_->Sync().ok());
  EXPECT_EQ(Pod("b-0").spec.node_name, "");
  EXPECT_EQ(Waiting("b-0"),
            "Unschedulable: 0/1 nodes are available: 1 Insufficient nvidia.com/gpu");
  EXPECT_EQ(Pod("b-0").status.phase, "Pending");
  EXPECT_EQ(Pod("c-0").spec.node_name, "box");
  EXPECT_EQ(
      Waiting("huge-0"),
      "ExceedsCapacity: pod huge-0 fits no node even with nothing else running: 0/1 nodes are "
      "available: 1 Insufficient nvidia.com/gpu");

  // a finishes: its GPUs are free again, and b is bound.
  Finish("a-0");
  Finish("a-1");
  ASSERT_TRUE(step_->Sync().ok());
  EXPECT_EQ(Pod("b-0").spec.node_name, "box");
  EXPECT_EQ(Pod("b-0").metadata.annotations.at("trainyard.dev/gpus"), "0");
  EXPECT_EQ(Pod("huge-0").spec.node_name, "");
}

// A Deployment's pods are placed one by one, as Kubernetes places them:
// those that fit run, the rest wait, and none is held back for the others.
TEST_F(SchedulerStepTest, ADeploymentsPodsArePlacedOneByOne) {
  Apply(R"({"apiVersion": "apps/v1", "kind": "Deployment",
    "metadata": {"name": "web", "namespace": "default"}, "spec": {}})");
  for (const char* name : {"web-0", "web-1", "web-2"}) {
    AddPod(name, "web", 1);
    api::Json doc = *store_->Get({"Pod", "default", name});
    doc["metadata"]["ownerReferences"] = ControllerRef("Deployment", "web");
    ASSERT_TRUE(store_->Update(doc).ok());
  }
  ASSERT_TRUE(step_->Sync().ok());
  int bound = 0;
  for (const char* name : {"web-0", "web-1", "web-2"}) bound += !Pod(name).spec.node_name.empty();
  EXPECT_EQ(bound, 2);  // the machine's two GPUs
}

TEST_F(SchedulerStepTest, QueuesAdmitByQuotaAndReportUsage) {
  Apply(
      R"({"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ClusterQueue", "metadata": {"name": "team"},
            "spec": {"resourceGroups": [{"coveredResources": ["cpu", "nvidia.com/gpu"],
                     "flavors": [{"name": "default-flavor", "resources": [
                       {"name": "cpu", "nominalQuota": "4"}, {"name": "nvidia.com/gpu", "nominalQuota": "1"}]}]}]}})");
  Apply(R"({"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "LocalQueue",
            "metadata": {"name": "mine", "namespace": "default"}, "spec": {"clusterQueue": "team"}})");
  api::Json labelled = {{"metadata", {{"labels", {{"kueue.x-k8s.io/queue-name", "mine"}}}}}};
  AddJob("first", 1, 1, labelled);
  AddJob("second", 1, 1, labelled);
  AddJob("lost", 1, 0, {{"metadata", {{"labels", {{"kueue.x-k8s.io/queue-name", "nope"}}}}}});
  ASSERT_TRUE(step_->Sync().ok());
  EXPECT_EQ(Pod("first-0").spec.node_name, "box");
  EXPECT_EQ(Waiting("second-0"),
            "QuotaExceeded: ClusterQueue team: nvidia.com/gpu: needs 1, 1 of 1 in use "
            "(position 2 in ClusterQueue team)");
  EXPECT_THAT(Waiting("lost-0"), HasSubstr("Inadmissible: LocalQueue default/nope does not exist"));
  api::Json cq = *store_->Get({"ClusterQueue", "", "team"});
  EXPECT_EQ(cq["status"]["pendingWorkloads"], 1);
  EXPECT_EQ(cq["status"]["admittedWorkloads"], 1);
  EXPECT_EQ(cq["status"]["flavorsUsage"][0]["name"], "default-flavor");
  EXPECT_EQ(cq["status"]["flavorsUsage"][0]["resources"][1],
            api::Json({{"name", "nvidia.com/gpu"}, {"total", "1"}, {"borrowed", "0"}}));
  api::Json lq = *store_->Get({"LocalQueue", "default", "mine"});
  EXPECT_EQ(lq["status"]["pendingWorkloads"], 1);
  EXPECT_EQ(lq["status"]["flavorUsage"][0]["resources"][1],
            api::Json({{"name", "nvidia.com/gpu"}, {"total", "1"}, {"borrowed", "0"}}))
      << "a LocalQueue shows its use, and what its ClusterQueue borrows";
}

TEST_F(SchedulerStepTest, HigherPriorityPreemptsAndTheVictimsPodsGo) {
  Apply(
      R"({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000})");
  AddJob("low", 2, 1);
  ASSERT_TRUE(step_->Sync().ok());
  ASSERT_EQ(Pod("low-0").spec.node_name, "box");
  AddJob("urgent", 1, 2,
         {{"spec", {{"runPolicy", {{"schedulingPolicy", {{"priorityClass", "high"}}}}}}}});
  ASSERT_TRUE(step_->Sync().ok());
  EXPECT_FALSE(store_->Get({"Pod", "default", "low-0"}).ok()) << "the victim's pods are deleted";
  EXPECT_FALSE(store_->Get({"Pod", "default", "low-1"}).ok());
  EXPECT_EQ(Waiting("urgent-0"), "Preempting: preempting PyTorchJob default/low");
  ASSERT_TRUE(step_->Sync().ok());
  EXPECT_EQ(Pod("urgent-0").spec.node_name, "box");
  bool recorded = false;
  ASSERT_TRUE(store_
                  ->Scan("Event", "default",
                         [&](const api::Json& e) {
                           recorded = recorded || (e.value("reason", "") == "Preempted" &&
                                                   e["involvedObject"].value("name", "") == "low");
                         })
                  .ok());
  EXPECT_TRUE(recorded) << "the preempted job has an event saying so";
}

TEST_F(SchedulerStepTest, AMissingPriorityClassIsNamed) {
  AddJob("a", 1, 0,
         {{"spec", {{"runPolicy", {{"schedulingPolicy", {{"priorityClass", "gold"}}}}}}}});
  ASSERT_TRUE(step_->Sync().ok());
  EXPECT_THAT(Waiting("a-0"), HasSubstr("Inadmissible: PriorityClass gold does not exist"));
}

TEST(InventoryTest, NodesFileGivesNodesAndNamesWhatIsWrong) {
  std::string dir = ::testing::TempDir();
  std::string path = dir + "/nodes.yaml";
  FILE* f = fopen(path.c_str(), "w");
  fputs(
      "apiVersion: v1\nkind: Node\nmetadata: {name: gpu-1, labels: {zone: a}}\n"
      "spec: {taints: [{key: gpu, value: 'true', effect: NoSchedule}]}\n"
      "status: {allocatable: {cpu: '8', memory: 32Gi, nvidia.com/gpu: '4'}}\n---\n"
      "apiVersion: v1\nkind: Node\nmetadata: {name: cpu-1}\nstatus: {capacity: {cpu: '16'}}\n",
      f);
  fclose(f);
  Result<std::vector<scheduler::Node>> nodes = ReadNodesFile(path);
  ASSERT_TRUE(nodes.ok()) << nodes.status().ToString();
  ASSERT_EQ(nodes->size(), 2u);
  EXPECT_EQ((*nodes)[0].allocatable.at("nvidia.com/gpu"), 4000);
  EXPECT_EQ((*nodes)[0].devices.at("nvidia.com/gpu"),
            (std::vector<std::string>{"0", "1", "2", "3"}));
  EXPECT_EQ((*nodes)[0].labels.at("zone"), "a");
  EXPECT_EQ((*nodes)[0].taints[0].effect, "NoSchedule");
  EXPECT_EQ((*nodes)[1].allocatable.at("cpu"), 16000);

  f = fopen(path.c_str(), "w");
  fputs("apiVersion: v1\nkind: Node\nmetadata: {name: bad}\nstatus: {allocatable: {cpu: lots}}\n",
        f);
  fclose(f);
  nodes = ReadNodesFile(path);
  ASSERT_FALSE(nodes.ok());
  EXPECT_THAT(nodes.status().message(), HasSubstr("node bad: status.allocatable.cpu"));
}

}  // namespace
}  // namespace trainyard::engine
