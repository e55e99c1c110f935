// `trainyard operator`'s gang scheduling against `trainyard server
// --api-only`: Volcano's and scheduler-plugins' PodGroups, and trainyard's
// own scheduler binding whole gangs.
#include <gmock/gmock.h>

#include "cli/tests/operator_fixture.h"

namespace trainyard::cli::testing {
namespace {

using ::testing::HasSubstr;

constexpr const char* kGang = R"(
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: gang, namespace: kubeflow, annotations: {team: vision}}
spec:
  runPolicy: {schedulingPolicy: {queue: research}}
  pytorchReplicaSpecs:
    Master:
      template:
        spec:
          containers: [{name: pytorch, image: x, resources: {requests: {cpu: "2", memory: 1Gi}}}]
    Worker:
      replicas: 2
      template:
        spec:
          containers: [{name: pytorch, image: x, resources: {limits: {cpu: 500m, nvidia.com/gpu: 1}}}]
)";

// --gang-scheduler-name volcano, as upstream: one PodGroup per job with
// what the whole gang needs, no pod until Volcano lets the group in, then
// every pod at once, for Volcano, in its group; the group goes with the job.
TEST_F(OperatorE2eTest, WithVolcanoAJobWaitsForItsPodGroupThenStartsWhole) {
  StartCluster(/*install=*/true);
  StartOperator({"--gang-scheduler-name", "volcano"});
  ASSERT_EQ(InKubeflow({"apply", "-f", Write("gang.yaml", kGang)}).exit_code, 0);
  ASSERT_TRUE(Eventually([&] { return Names("podgroups") == "gang"; })) << OperatorLog();
  EXPECT_EQ(FieldIn("podgroup/gang", ".spec.minMember"), "3");
  // The master's requests, the workers' limits where they request nothing.
  EXPECT_EQ(FieldIn("podgroup/gang", ".spec.minResources"),
            R"({"cpu":"3","memory":"1Gi","nvidia.com/gpu":"2"})");
  EXPECT_EQ(FieldIn("podgroup/gang", ".spec.queue"), "research");
  EXPECT_EQ(FieldIn("podgroup/gang", ".metadata.annotations.team"), "vision");
  EXPECT_EQ(FieldIn("podgroup/gang", ".metadata.ownerReferences[0].name"), "gang");
  // Volcano has not let it in: no pod, however long one waits for the
  // operator to have looked (its Created condition says it has).
  ASSERT_TRUE(Eventually(
      [&] { return FieldIn("pytorchjob/gang", ".status.conditions[0].type") == "Created"; }));
  EXPECT_EQ(Names("pods"), "");
  CommandResult admitted = InKubeflow({"patch", "podgroup", "gang", "--subresource=status",
                                       "--type=merge", "-p", R"({"status":{"phase":"Inqueue"}})"});
  ASSERT_EQ(admitted.exit_code, 0) << admitted.output;
  ASSERT_TRUE(Eventually([&] {
    return Names("pods") == "gang-master-0 gang-worker-0 gang-worker-1";
  })) << OperatorLog();
  EXPECT_EQ(FieldIn("pod/gang-worker-1", ".spec.schedulerName"), "volcano");
  EXPECT_EQ(FieldIn("pod/gang-worker-1", ".metadata.annotations.scheduling\\.k8s\\.io/group-name"),
            "gang");
  EXPECT_EQ(FieldIn("pod/gang-worker-1", ".metadata.annotations.volcano\\.sh/task-spec"), "worker");
  SetPodPhase("gang-master-0", "Succeeded");
  ASSERT_TRUE(Eventually([&] { return Names("podgroups").empty(); })) << OperatorLog();
  EXPECT_EQ(FieldIn("pytorchjob/gang", ".status.conditions[?(@.type==\"Succeeded\")].status"),
            "True");
}

// --gang-scheduler-name naming a scheduler-plugins coscheduling scheduler,
// as upstream: a scheduling.x-k8s.io PodGroup per job, beside Volcano's
// kind of the same name but never mixed with it; every pod made at once,
// labelled with its group, for that scheduler; what such a group cannot
// hold is said; the group goes with the job.
TEST_F(OperatorE2eTest, WithSchedulerPluginsEveryPodIsMadeAtOnceInItsPodGroup) {
  StartCluster(/*install=*/true);
  StartOperator({"--gang-scheduler-name", "scheduler-plugins-scheduler"});
  std::string manifest = kGang;
  manifest.replace(manifest.find("{queue: research}"), std::string("{queue: research}").size(),
                   "{queue: research, minAvailable: 2, scheduleTimeoutSeconds: 90}");
  ASSERT_EQ(InKubeflow({"apply", "-f", Write("gang.yaml", manifest)}).exit_code, 0);
  ASSERT_TRUE(Eventually([&] {
    return Names("pods") == "gang-master-0 gang-worker-0 gang-worker-1";
  })) << OperatorLog();
  const std::string group = "podgroups.scheduling.x-k8s.io/gang";
  EXPECT_EQ(FieldIn(group, ".apiVersion"), "scheduling.x-k8s.io/v1alpha1");
  EXPECT_EQ(FieldIn(group, ".spec"),
            R"({"minMember":2,"minResources":{"cpu":"2500m","memory":"1Gi","nvidia.com/gpu":"1"},)"
            R"("scheduleTimeoutSeconds":90})");
  EXPECT_EQ(FieldIn(group, ".metadata.annotations.team"), "vision");
  EXPECT_EQ(FieldIn(group, ".metadata.ownerReferences[0].name"), "gang");
  EXPECT_EQ(Names("podgroups.scheduling.volcano.sh"), "");  // the other kind is untouched
  EXPECT_EQ(FieldIn("pod/gang-worker-1", ".spec.schedulerName"), "scheduler-plugins-scheduler");
  EXPECT_EQ(FieldIn("pod/gang-worker-1", ".metadata.labels.scheduling\\.x-k8s\\.io/pod-group"),
            "gang");
  EXPECT_EQ(FieldIn("pod/gang-worker-1", ".metadata.annotations.volcano\\.sh/task-spec"), "");
  EXPECT_THAT(InKubeflow({"get", "events"}).output,
              HasSubstr("schedulingPolicy.queue is not acted on"));
  SetPodPhase("gang-master-0", "Succeeded");
  ASSERT_TRUE(Eventually([&] { return Names("podgroups.scheduling.x-k8s.io").empty(); }))
      << OperatorLog();
}

// --gang-scheduler-name trainyard, beyond upstream: trainyard's own gang
// placement as a secondary scheduler. The test registers two nodes, as
// kubelets do; a job's pods are bound through pods/binding, the whole gang
// at once; a gang that does not fit has none of its pods bound, says why
// on each as kube-scheduler does, and goes once the first has finished.
TEST_F(OperatorE2eTest, TrainyardsOwnSchedulerBindsWholeGangsOrNone) {
  StartCluster(/*install=*/true);
  for (const char* node : {"node-a", "node-b"}) {
    std::string manifest = std::string("apiVersion: v1\nkind: Node\nmetadata: {name: ") + node +
                           "}\nstatus: {allocatable: {cpu: '8', memory: 32Gi, pods: '110', "
                           "nvidia.com/gpu: '2'}}\n";
    CommandResult registered =
        Kubectl({"apply", "-f", Write(std::string(node) + ".yaml", manifest)});
    ASSERT_EQ(registered.exit_code, 0) << registered.output;
    // Tainted not ready when registered, as kube-apiserver taints it:
    // nothing is placed there until the node is ready.
    EXPECT_THAT(Kubectl({"get", "node", node, "-o", "jsonpath={.spec.taints[*].key}"}).output,
                HasSubstr("node.kubernetes.io/not-ready"));
    MarkNodeReady(node);
  }
  StartOperator({"--gang-scheduler-name", "trainyard"});
  ASSERT_EQ(InKubeflow({"apply", "-f", Write("gang.yaml", kGang)}).exit_code, 0);
  // The pod's node; empty while it is unbound, or not made yet.
  auto node_of = [&](const std::string& pod) {
    CommandResult got = InKubeflow({"get", "pod", pod, "-o", "jsonpath={.spec.nodeName}"});
    return got.exit_code == 0 ? got.output : std::string();
  };
  ASSERT_TRUE(Eventually([&] {
    return !node_of("gang-master-0").empty() && !node_of("gang-worker-0").empty() &&
           !node_of("gang-worker-1").empty();
  })) << OperatorLog();
  EXPECT_EQ(FieldIn("pod/gang-worker-0", ".spec.schedulerName"), "trainyard") << OperatorLog();
  EXPECT_EQ(FieldIn("pod/gang-worker-0", ".status.conditions[?(@.type==\"PodScheduled\")].status"),
            "True");
  EXPECT_EQ(FieldIn("podgroups.scheduling.x-k8s.io/gang", ".spec.minMember"), "3");
  // As kube-apiserver: a bound pod is not bound again.
  CommandResult again =
      Kubectl({"create", "--raw", "/api/v1/namespaces/kubeflow/pods/gang-worker-0/binding", "-f",
               Write("binding.json",
                     R"({"apiVersion":"v1","kind":"Binding","metadata":{"name":"gang-worker-0"},)"
                     R"("target":{"kind":"Node","name":"node-b"}})")});
  EXPECT_NE(again.exit_code, 0);
  EXPECT_THAT(again.output, HasSubstr("is already assigned to node"));
  // Three GPUs asked for, two free: nothing of it is bound.
  ASSERT_EQ(InKubeflow({"apply", "-f", Write("big.yaml", R"(
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: big, namespace: kubeflow}
spec:
  pytorchReplicaSpecs:
    Master:
      template: {spec: {containers: [{name: pytorch, image: x, resources: {limits: {nvidia.com/gpu: 1}}}]}}
    Worker:
      replicas: 2
      template: {spec: {containers: [{name: pytorch, image: x, resources: {limits: {nvidia.com/gpu: 1}}}]}}
)")})
                .exit_code,
            0);
  // Once all three pods are there, the scheduler says what is short.
  const std::string scheduled = ".status.conditions[?(@.type==\"PodScheduled\")]";
  ASSERT_TRUE(Eventually([&] {
    return FieldIn("pod/big-worker-1", scheduled + ".message").find("nvidia.com/gpu") !=
           std::string::npos;
  })) << OperatorLog();
  EXPECT_EQ(FieldIn("pod/big-worker-1", scheduled + ".reason"), "Unschedulable");
  EXPECT_EQ(FieldIn("pod/big-worker-1", scheduled + ".status"), "False");
  for (const char* pod : {"big-master-0", "big-worker-0", "big-worker-1"}) {
    EXPECT_EQ(node_of(pod), "") << pod;
  }
  EXPECT_THAT(InKubeflow({"get", "events"}).output, HasSubstr("FailedScheduling"));
  // The master done, the job is, and its workers are deleted (cleanPodPolicy
  // Running): their GPUs are free.
  SetPodPhase("gang-master-0", "Succeeded");
  ASSERT_TRUE(Eventually([&] {
    FinishTerminatingPods();  // the kubelet's part: the workers stop, and go
    return !node_of("big-master-0").empty() && !node_of("big-worker-0").empty() &&
           !node_of("big-worker-1").empty();
  })) << OperatorLog();
}

}  // namespace
}  // namespace trainyard::cli::testing
