// Resources through the whole engine, on a stated machine (4 CPUs, 2 GPUs)
// so that GPU pinning is tested where no GPU exists: the scheduler binds
// gangs that fit, the node agent pins CUDA_VISIBLE_DEVICES, the controller
// reports waiting and fails what can never fit.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "engine/tests/engine_fixture.h"

namespace trainyard::engine {
namespace {

namespace fs = std::filesystem;

class ResourcesTest : public testing::EngineFixture {
 protected:
  void SetUp() override {
    StartEngine("trainyard-resources-test",
                runtime::MachineFacts{.cpus = 4,
                                      .memory_bytes = 8LL << 30,
                                      .gpus = {{"0", "GPU-a", "test"}, {"1", "GPU-b", "test"}}});
  }
  const api::JobCondition* Condition(const store::ObjectKey& key, const std::string& type) {
    conditions_ = Job(key).status.conditions;
    return controller::FindCondition(conditions_, type);
  }
  std::string Log(const std::string& pod) { return EngineFixture::Log(pod, "pytorch"); }

  // A PyTorchJob whose replicas each ask for `gpus` GPUs and run `script`.
  static std::string JobAsking(const std::string& name, int workers, const std::string& gpus,
                               const std::string& script) {
    std::string container = "{name: pytorch, image: none, command: [sh, -c, '" + script +
                            "'], resources: {limits: {nvidia.com/gpu: " + gpus + "}}}";
    std::string yaml = "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: " + name +
                       "}\nspec:\n  pytorchReplicaSpecs:\n    Master: {template: {spec: "
                       "{containers: [" +
                       container + "]}}}\n";
    if (workers == 0) return yaml;
    return yaml + "    Worker: {replicas: " + std::to_string(workers) +
           ", template: {spec: {containers: [" + container + "]}}}\n";
  }

  std::vector<api::JobCondition> conditions_;
};

TEST_F(ResourcesTest, EachReplicaSeesOnlyTheGpusItWasGiven) {
  store::ObjectKey gpus = Submit(JobAsking("g", 1, "1", "echo \"[$CUDA_VISIBLE_DEVICES]\""));
  store::ObjectKey none = Submit(R"(
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: cpu}
spec:
  pytorchReplicaSpecs:
    Master:
      template:
        spec:
          containers:
            - name: pytorch
              image: none
              command: [sh, -c, 'echo "[$CUDA_VISIBLE_DEVICES]"']
              env: [{name: CUDA_VISIBLE_DEVICES, value: "0,1"}]
)");
  RunUntil([&] { return Finished(gpus) && Finished(none); });
  EXPECT_EQ(Job(gpus).status.conditions.back().type, "Succeeded");
  std::set<std::string> seen = {Log("g-master-0"), Log("g-worker-0")};
  EXPECT_EQ(seen, (std::set<std::string>{"[0]\n", "[1]\n"}));
  // No GPU asked, none seen, whatever the pod's own env says.
  EXPECT_EQ(Log("cpu-master-0"), "[]\n");
}

// resourceFieldRef without a limit means the machine's, the one the
// scheduler places against (4 CPUs here, whatever the host has).
TEST_F(ResourcesTest, LimitsWithoutALimitAreTheMachines) {
  store::ObjectKey key = Submit(R"(
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: facts}
spec:
  pytorchReplicaSpecs:
    Master:
      template:
        spec:
          containers:
            - name: pytorch
              image: none
              command: [sh, -c, 'echo "cpus=$CPUS"']
              env: [{name: CPUS, valueFrom: {resourceFieldRef: {resource: limits.cpu}}}]
)");
  RunUntil([&] { return Finished(key); });
  EXPECT_EQ(Log("facts-master-0"), "cpus=4\n");
}

TEST_F(ResourcesTest, AJobLargerThanTheMachineFailsSayingWhyAndStartsNothing) {
  store::ObjectKey key = Submit(JobAsking("big", 2, "1", "touch started"));
  RunUntil([&] { return Finished(key); });
  api::JobCondition last = Job(key).status.conditions.back();
  EXPECT_EQ(last.type, "Failed");
  EXPECT_EQ(last.message,
            "Job big has failed because it can never fit: the gang's 3 pods do not fit "
            "together even with nothing else running; pod big-worker-1: 0/1 nodes are available: "
            "1 Insufficient nvidia.com/gpu");
  EXPECT_FALSE(fs::exists(dir_ / "started"));
}

TEST_F(ResourcesTest, AJobWaitsForRoomWithTheReasonThenRuns) {
  store::ObjectKey first =
      Submit(JobAsking("first", 1, "1", "while [ ! -e release ]; do sleep 0.05; done"));
  store::ObjectKey second = Submit(JobAsking("second", 0, "1", "echo ran"));
  RunUntil([&] {
    const api::JobCondition* c = Condition(second, "Scheduled");
    return c != nullptr && c->status == "False";
  });
  EXPECT_EQ(Condition(second, "Scheduled")->message,
            "PyTorchJob second is waiting for room: 0/1 nodes are available: 1 Insufficient "
            "nvidia.com/gpu");
  EXPECT_EQ(conditions_.back().type, "Scheduled") << "the current state is the last condition";
  EXPECT_EQ(Log("second-master-0"), "") << "nothing of it started";

  std::ofstream(dir_ / "release").put('\n');
  RunUntil([&] { return Finished(first) && Finished(second); });
  EXPECT_EQ(Job(second).status.conditions.back().type, "Succeeded");
  EXPECT_EQ(Condition(second, "Scheduled")->status, "True");
  EXPECT_EQ(Log("second-master-0"), "ran\n");
}

}  // namespace
}  // namespace trainyard::engine
