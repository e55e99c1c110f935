// The scheduler end to end: a real `trainyard server` with a declared
// inventory (--nodes), real replica processes, kubectl and the CLI's own
// verbs. Jobs that do not fit together run one after the other; a
// high-priority job preempts a low-priority one, which then restarts;
// queues admit by quota and show their usage.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli/tests/server_fixture.h"

namespace trainyard::cli::testing {
namespace {

using ::testing::HasSubstr;

// One node with room for exactly one 2-replica job of 1 CPU each.
constexpr char kOneSlotNode[] = R"(apiVersion: v1
kind: Node
metadata: {name: sim-1}
status: {allocatable: {cpu: "2", memory: 8Gi, pods: "20"}}
)";

class SchedulingE2eTest : public ServerFixture {
 protected:
  // A PyTorchJob of a master and a worker, 1 CPU each. Each replica
  // appends "<job> start" to the job's journal, waits for the file
  // `release-<job>` (if `wait`), then appends "<job> end".
  std::string Job(const std::string& name, bool wait, const std::string& extra_spec = "",
                  const std::string& labels = "{}") {
    std::string journal = (dir_ / "journal").string();
    std::string release = (dir_ / ("release-" + name)).string();
    std::string script = "echo " + name + " start >> " + journal + "; " +
                         (wait ? "while [ ! -e " + release + " ]; do sleep 0.05; done; " : "") +
                         "echo " + name + " end >> " + journal;
    std::string replica =
        "      replicas: 1\n"
        "      restartPolicy: OnFailure\n"
        "      template:\n"
        "        spec:\n"
        "          containers:\n"
        "          - name: pytorch\n"
        "            image: busybox\n"
        "            command: [/bin/sh, -c, '" +
        script +
        "']\n"
        "            resources: {requests: {cpu: '1'}}\n";
    return "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata:\n  name: " + name +
           "\n  labels: " + labels + "\nspec:\n" + extra_spec +
           "  pytorchReplicaSpecs:\n    Master:\n" + replica + "    Worker:\n" + replica;
  }
  void Apply(const std::string& file, const std::string& text) {
    CommandResult r = Kubectl({"apply", "-f", Write(file, text)});
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  std::vector<std::string> Journal() {
    std::vector<std::string> lines;
    std::istringstream in(ReadFile(dir_ / "journal"));
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  }
  int Count(const std::string& line) {
    std::vector<std::string> j = Journal();
    return static_cast<int>(std::count(j.begin(), j.end(), line));
  }
  bool Succeeded(const std::string& job) {
    return Field("pytorchjob/" + job, ".status.conditions[?(@.type==\"Succeeded\")].status") ==
           "True";
  }
  std::string WaitingMessage(const std::string& job) {
    return Field("pytorchjob/" + job, ".status.conditions[?(@.type==\"Scheduled\")].message");
  }
};

TEST_F(SchedulingE2eTest, TwoJobsWithRoomForOneRunOneAfterTheOther) {
  StartServer({"--nodes", Write("nodes.yaml", kOneSlotNode)});
  Apply("first.yaml", Job("first", /*wait=*/true));
  ASSERT_TRUE(Eventually([&] { return Count("first start") == 2; }, std::chrono::seconds(60)))
      << ReadFile(dir_ / "server.log");
  Apply("second.yaml", Job("second", /*wait=*/false));
  // second waits whole (no replica of it starts), and says why.
  ASSERT_TRUE(Eventually(
      [&] { return WaitingMessage("second").find("Insufficient cpu") != std::string::npos; },
      std::chrono::seconds(60)))
      << WaitingMessage("second");
  EXPECT_EQ(Count("second start"), 0);
  EXPECT_THAT(Kubectl({"get", "pods", "-o", "wide"}).output, HasSubstr("sim-1"));

  Write("release-first", "");
  ASSERT_TRUE(Eventually([&] { return Succeeded("first") && Succeeded("second"); },
                         std::chrono::seconds(90)))
      << ReadFile(dir_ / "journal");
  // second starts only once first is done: a PyTorchJob succeeds with its
  // master, and its worker, deleted then, may still be printing its last
  // line as second starts.
  std::vector<std::string> journal = Journal();
  auto first_end = std::find(journal.begin(), journal.end(), "first end");
  auto second_start = std::find(journal.begin(), journal.end(), "second start");
  EXPECT_LT(first_end, second_start) << "second started while first ran:\n"
                                     << ReadFile(dir_ / "journal");
}

TEST_F(SchedulingE2eTest, HighPriorityPreemptsLowWhichThenRestarts) {
  StartServer({"--nodes", Write("nodes.yaml", kOneSlotNode)});
  Apply("high-class.yaml",
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\n"
        "value: 1000\ndescription: urgent work\n");
  Apply("low.yaml", Job("low", /*wait=*/true));
  ASSERT_TRUE(Eventually([&] { return Count("low start") == 2; }, std::chrono::seconds(60)))
      << ReadFile(dir_ / "server.log");
  Apply("urgent.yaml", Job("urgent", /*wait=*/false,
                           "  runPolicy:\n    schedulingPolicy: {priorityClass: high}\n"));
  ASSERT_TRUE(Eventually([&] { return Succeeded("urgent"); }, std::chrono::seconds(90)))
      << ReadFile(dir_ / "journal") << ReadFile(dir_ / "server.log");
  EXPECT_EQ(Count("low end"), 0) << "low was stopped, not finished";
  CommandResult events = Trainyard({"events", "--for", "pytorchjob/low"});
  EXPECT_THAT(events.output, HasSubstr("Preempted"));
  EXPECT_THAT(events.output, HasSubstr("preempted by PyTorchJob default/urgent (priority 1000)"));
  // low's replicas come back on their own once urgent is done.
  ASSERT_TRUE(Eventually([&] { return Count("low start") == 4; }, std::chrono::seconds(60)))
      << ReadFile(dir_ / "journal");
  Write("release-low", "");
  ASSERT_TRUE(Eventually([&] { return Succeeded("low"); }, std::chrono::seconds(60)))
      << ReadFile(dir_ / "journal");
}

TEST_F(SchedulingE2eTest, QueuesAdmitByQuotaAndShowUsageAndPendingWork) {
  StartServer({"--nodes", Write("nodes.yaml", kOneSlotNode)});
  Apply("queues.yaml", R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: default-flavor}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: team}
spec:
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default-flavor
      resources: [{name: cpu, nominalQuota: "2"}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: team-queue, namespace: default}
spec: {clusterQueue: team}
)");
  std::string labels = "{kueue.x-k8s.io/queue-name: team-queue}";
  Apply("a.yaml", Job("a", /*wait=*/true, "", labels));
  ASSERT_TRUE(Eventually([&] { return Count("a start") == 2; }, std::chrono::seconds(60)));
  Apply("b.yaml", Job("b", /*wait=*/false, "", labels));
  ASSERT_TRUE(Eventually(
      [&] {
        return WaitingMessage("b").find("ClusterQueue team: cpu: needs 2, 2 of 2 in use") !=
               std::string::npos;
      },
      std::chrono::seconds(60)))
      << WaitingMessage("b");
  CommandResult queues = Trainyard({"get", "queues"});
  EXPECT_THAT(queues.output, HasSubstr("team-queue"));
  EXPECT_THAT(queues.output, HasSubstr("cpu 2"));
  CommandResult cqs = Kubectl({"get", "clusterqueues"});
  EXPECT_THAT(cqs.output, HasSubstr("PENDING WORKLOADS"));
  EXPECT_THAT(cqs.output, ::testing::ContainsRegex("team +(<none> +)?1 +1 +cpu 2/2"));
  // A bad queue is refused with the field and the fix, and changes nothing.
  CommandResult bad =
      Kubectl({"apply", "-f", Write("bad.yaml", R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: broken}
spec:
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default-flavor
      resources: [{name: cpu, nominalQuota: "2", borrowingLimit: "1"}]
)")});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_THAT(bad.output,
              HasSubstr("borrowingLimit: Forbidden: must not be set when spec.cohort is empty"));
  Write("release-a", "");
  ASSERT_TRUE(Eventually([&] { return Succeeded("b"); }, std::chrono::seconds(90)))
      << ReadFile(dir_ / "journal");
}

}  // namespace
}  // namespace trainyard::cli::testing
