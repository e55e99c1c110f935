// `trainyard operator` against `trainyard server --api-only`, as upstream's
// envtest runs its controllers against a bare kube-apiserver: nothing runs
// the pods, so the test plays the kubelet, patching pod status through the
// real kubectl. The operator is a separate process that reads the
// server's kubeconfig (HTTPS, its CA) as it would a cluster's.
#include <gmock/gmock.h>

#include <map>

#include "cli/tests/server_fixture.h"

namespace trainyard::cli::testing {
namespace {

using ::testing::HasSubstr;

// Upstream's own example, where ../shared has it; the same job inline
// otherwise.
std::string UpstreamSimpleJob() {
  fs::path upstream = fs::path(TRAINYARD_SOURCE_DIR) /
                      "../shared/conformance/training-operator-v1.9.4/examples/pytorch/simple.yaml";
  if (fs::exists(upstream)) return ReadFile(upstream);
  return R"(apiVersion: "kubeflow.org/v1"
kind: PyTorchJob
metadata: {name: pytorch-simple, namespace: kubeflow}
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      restartPolicy: OnFailure
      template: {spec: {containers: [{name: pytorch, image: docker.io/kubeflowkatib/pytorch-mnist:v1beta1-45c5727, command: [python3, /opt/pytorch-mnist/mnist.py, --epochs=1]}]}}
    Worker:
      replicas: 1
      restartPolicy: OnFailure
      template: {spec: {containers: [{name: pytorch, image: docker.io/kubeflowkatib/pytorch-mnist:v1beta1-45c5727, command: [python3, /opt/pytorch-mnist/mnist.py, --epochs=1]}]}}
)";
}

constexpr const char* kTfJob = R"(
apiVersion: kubeflow.org/v1
kind: TFJob
metadata: {name: dist, namespace: kubeflow}
spec:
  tfReplicaSpecs:
    PS:
      replicas: 1
      template: {spec: {containers: [{name: tensorflow, image: tf, command: ["true"]}]}}
    Worker:
      replicas: 2
      template: {spec: {containers: [{name: tensorflow, image: tf, command: ["true"]}]}}
)";

constexpr const char* kWorkers = R"(
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: wide, namespace: kubeflow}
spec:
  pytorchReplicaSpecs:
    Master:
      template: {spec: {containers: [{name: pytorch, image: x, command: ["true"]}]}}
    Worker:
      replicas: 3
      template: {spec: {containers: [{name: pytorch, image: x, command: ["true"]}]}}
)";

class OperatorE2eTest : public ServerFixture {
 protected:
  void TearDown() override {
    for (auto& [n, p] : operators_) p.Stop(std::chrono::seconds(10));
    operators_.clear();
    ServerFixture::TearDown();
  }
  // An API-only server over HTTPS, and the kubeflow namespace.
  void StartCluster() {
    std::string cert, key;
    ASSERT_TRUE(MakeCertificate(cert, key)) << "openssl is needed for the server's certificate";
    StartServer({"--api-only", "--tls-cert", cert, "--tls-key", key});
    CommandResult ns = Kubectl({"create", "namespace", "kubeflow"});
    ASSERT_EQ(ns.exit_code, 0) << ns.output;
  }
  // Starts operator number `n` (its log: operator-<n>.log).
  void StartOperator(std::vector<std::string> flags = {}, int n = 1) {
    std::vector<std::string> argv = {TRAINYARD_BINARY, "operator", "--kubeconfig",
                                     Kubeconfig().string()};
    argv.insert(argv.end(), flags.begin(), flags.end());
    fs::path log = dir_ / ("operator-" + std::to_string(n) + ".log");
    fs::remove(log);
    Result<runtime::Process> p =
        runtime::Process::Start({.argv = argv,
                                 .env = {{"PATH", kPath}, {"HOME", dir_.string()}},
                                 .working_dir = dir_.string(),
                                 .log_path = log.string()});
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    operators_.erase(n);
    operators_.emplace(n, std::move(*p));
  }
  runtime::Process& Operator(int n = 1) { return operators_.at(n); }
  std::string OperatorLog(int n = 1) const {
    return ReadFile(dir_ / ("operator-" + std::to_string(n) + ".log"));
  }
  CommandResult InKubeflow(std::vector<std::string> args) {
    args.insert(args.begin(), {"-n", "kubeflow"});
    return Kubectl(std::move(args));
  }
  std::string FieldIn(const std::string& object, const std::string& jsonpath) {
    return InKubeflow({"get", object, "-o", "jsonpath={" + jsonpath + "}"}).output;
  }
  // What a kubelet reports: a pod's phase and its container's state.
  void SetPodPhase(const std::string& pod, const std::string& phase, int exit_code = 0) {
    std::string state = phase == "Running"
                            ? R"({"running":{"startedAt":"2026-01-01T00:00:00Z"}})"
                            : R"({"terminated":{"exitCode":)" + std::to_string(exit_code) +
                                  R"(,"reason":")" + (exit_code == 0 ? "Completed" : "Error") +
                                  R"("}})";
    std::string container = FieldIn("pod/" + pod, ".spec.containers[0].name");
    std::string patch =
        R"({"status":{"phase":")" + phase + R"(","containerStatuses":[{"name":")" + container +
        R"(","ready":false,"restartCount":0,"image":"x","imageID":"","state":)" + state + "}]}}";
    CommandResult patched =
        InKubeflow({"patch", "pod", pod, "--subresource=status", "--type=merge", "-p", patch});
    ASSERT_EQ(patched.exit_code, 0) << patched.output;
  }
  std::string Names(const std::string& kind) {
    return InKubeflow({"get", kind, "-o", "jsonpath={.items[*].metadata.name}"}).output;
  }

  std::map<int, runtime::Process> operators_;
};

TEST_F(OperatorE2eTest, UpstreamsPodsAndServicesAndConditionsOnTheApiServer) {
  StartCluster();
  StartOperator();
  ASSERT_EQ(InKubeflow({"apply", "-f", Write("simple.yaml", UpstreamSimpleJob())}).exit_code, 0);
  ASSERT_TRUE(Eventually([&] {
    return Names("pods") == "pytorch-simple-master-0 pytorch-simple-worker-0" &&
           Names("services") == "pytorch-simple-master-0 pytorch-simple-worker-0";
  })) << Names("pods")
      << "\n"
      << OperatorLog();

  // Upstream's labels, owner reference and environment, by Service names.
  std::string worker = "pod/pytorch-simple-worker-0";
  EXPECT_EQ(FieldIn(worker, ".metadata.labels.training\\.kubeflow\\.org/operator-name"),
            "pytorchjob-controller");
  EXPECT_EQ(FieldIn(worker, ".metadata.labels.training\\.kubeflow\\.org/replica-type"), "worker");
  EXPECT_EQ(
      FieldIn("pod/pytorch-simple-master-0", ".metadata.labels.training\\.kubeflow\\.org/job-role"),
      "master");
  std::string uid = FieldIn("pytorchjob/pytorch-simple", ".metadata.uid");
  EXPECT_EQ(FieldIn(worker, ".metadata.ownerReferences[0].uid"), uid);
  EXPECT_EQ(FieldIn(worker, ".metadata.ownerReferences[0].controller"), "true");
  EXPECT_EQ(FieldIn(worker, ".metadata.ownerReferences[0].blockOwnerDeletion"), "true");
  auto env = [&](const std::string& pod, const std::string& name) {
    return FieldIn("pod/" + pod, ".spec.containers[0].env[?(@.name==\"" + name + "\")].value");
  };
  EXPECT_EQ(env("pytorch-simple-worker-0", "MASTER_ADDR"), "pytorch-simple-master-0");
  EXPECT_EQ(env("pytorch-simple-worker-0", "MASTER_PORT"), "23456");
  EXPECT_EQ(env("pytorch-simple-worker-0", "WORLD_SIZE"), "2");
  EXPECT_EQ(env("pytorch-simple-worker-0", "RANK"), "1");
  EXPECT_EQ(env("pytorch-simple-master-0", "RANK"), "0");
  std::string service = "service/pytorch-simple-worker-0";
  EXPECT_EQ(FieldIn(service, ".spec.clusterIP"), "None");
  EXPECT_EQ(FieldIn(service, ".spec.selector.training\\.kubeflow\\.org/replica-index"), "0");
  EXPECT_EQ(FieldIn(service, ".spec.ports[0].port"), "23456");
  EXPECT_EQ(FieldIn(service, ".metadata.ownerReferences[0].uid"), uid);
  // Nothing runs them: the API server is API only.
  EXPECT_EQ(FieldIn(worker, ".status.phase"), "");

  // The kubelet's part: they run, then the master ends well.
  SetPodPhase("pytorch-simple-master-0", "Running");
  SetPodPhase("pytorch-simple-worker-0", "Running");
  ASSERT_TRUE(Eventually([&] {
    return FieldIn("pytorchjob/pytorch-simple",
                   ".status.conditions[?(@.type==\"Running\")].status") == "True";
  }));
  SetPodPhase("pytorch-simple-master-0", "Succeeded");
  ASSERT_TRUE(Eventually([&] {
    return FieldIn("pytorchjob/pytorch-simple",
                   ".status.conditions[?(@.type==\"Succeeded\")].reason") == "PyTorchJobSucceeded";
  }));
  EXPECT_EQ(FieldIn("pytorchjob/pytorch-simple", ".status.replicaStatuses.Master.succeeded"), "1");
  CommandResult events = InKubeflow({"get", "events"});
  EXPECT_THAT(events.output, HasSubstr("Created pod: pytorch-simple-master-0"));
  EXPECT_THAT(events.output, HasSubstr("Created service: pytorch-simple-worker-0"));

  // TF_CONFIG names each replica by its Service's cluster DNS name.
  ASSERT_EQ(InKubeflow({"apply", "-f", Write("tf.yaml", kTfJob)}).exit_code, 0);
  ASSERT_TRUE(Eventually([&] { return !FieldIn("pod/dist-worker-1", ".metadata.name").empty(); }));
  std::string tf_config = env("dist-worker-1", "TF_CONFIG");
  EXPECT_EQ(
      tf_config,
      R"({"cluster":{"ps":["dist-ps-0.kubeflow.svc:2222"],"worker":["dist-worker-0.kubeflow.svc:2222","dist-worker-1.kubeflow.svc:2222"]},"task":{"type":"worker","index":1},"environment":"cloud"})");

  // A bad manifest is refused with its field path, as `trainyard validate` says.
  CommandResult bad = InKubeflow({"apply", "-f", Write("bad.yaml", kTwoMasters)});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_THAT(bad.output, HasSubstr("spec.pytorchReplicaSpecs[Master].replicas"));
}

// kill -9 of the operator while a job runs: the one started again finds
// the pods by their names and owner, creates none twice, and keeps the
// job's status.
TEST_F(OperatorE2eTest, ARestartedOperatorCreatesNoDuplicateAndKeepsTheStatus) {
  StartCluster();
  StartOperator();
  ASSERT_EQ(InKubeflow({"apply", "-f", Write("wide.yaml", kWorkers)}).exit_code, 0);
  const std::string all = "wide-master-0 wide-worker-0 wide-worker-1 wide-worker-2";
  ASSERT_TRUE(Eventually([&] { return Names("pods") == all; })) << OperatorLog();
  SetPodPhase("wide-master-0", "Running");
  ASSERT_TRUE(Eventually([&] {
    return FieldIn("pytorchjob/wide", ".status.conditions[?(@.type==\"Running\")].status") ==
           "True";
  }));
  std::string uids = InKubeflow({"get", "pods", "-o", "jsonpath={.items[*].metadata.uid}"}).output;
  std::string started = FieldIn("pytorchjob/wide", ".status.startTime");
  Operator().Signal(SIGKILL);
  Operator().WaitFor(std::chrono::seconds(10));
  // While it is down a worker is deleted (an eviction): the next one makes it again.
  ASSERT_EQ(InKubeflow({"delete", "pod", "wide-worker-2", "--wait=false"}).exit_code, 0);
  StartOperator();
  ASSERT_TRUE(Eventually([&] { return Names("pods") == all; })) << OperatorLog();
  std::string after = InKubeflow({"get", "pods", "-o", "jsonpath={.items[*].metadata.uid}"}).output;
  // Three of the four are the very pods the first operator made.
  EXPECT_EQ(after.substr(0, after.rfind(' ')), uids.substr(0, uids.rfind(' ')));
  EXPECT_NE(after.substr(after.rfind(' ')), uids.substr(uids.rfind(' ')));
  EXPECT_EQ(FieldIn("pytorchjob/wide", ".status.startTime"), started);
  SetPodPhase("wide-master-0", "Succeeded");
  ASSERT_TRUE(Eventually([&] {
    return FieldIn("pytorchjob/wide", ".status.conditions[?(@.type==\"Succeeded\")].status") ==
           "True";
  })) << OperatorLog();
  // Each pod was created once, but worker-2 twice.
  std::string events = InKubeflow({"get", "events", "-o",
                                   "jsonpath={range .items[?(@.reason==\"SuccessfulCreatePod\")]}{"
                                   ".message}{\"\\n\"}{end}"})
                           .output;
  EXPECT_EQ(std::count(events.begin(), events.end(), '\n'), 5) << events;
  // A SIGTERM ends it gracefully.
  Operator().Signal(SIGTERM);
  std::optional<runtime::ExitStatus> ended = Operator().WaitFor(std::chrono::seconds(20));
  ASSERT_TRUE(ended.has_value());
  EXPECT_EQ(ended->exit_code, 0) << OperatorLog();
}

TEST_F(OperatorE2eTest, SaysWhatItCannotDoBeforeDoingAnything) {
  StartCluster();
  StartOperator({"--enable-scheme", "pytorchjob", "--enable-scheme", "sparkjob"});
  std::optional<runtime::ExitStatus> ended = Operator().WaitFor(std::chrono::seconds(20));
  ASSERT_TRUE(ended.has_value());
  EXPECT_EQ(ended->exit_code, 2);
  EXPECT_THAT(OperatorLog(), HasSubstr("--enable-scheme \"sparkjob\": not one of pytorchjob"));
  StartOperator({"--gang-scheduler-name", "volcano"});
  ended = Operator().WaitFor(std::chrono::seconds(20));
  ASSERT_TRUE(ended.has_value());
  EXPECT_EQ(ended->exit_code, 2);
  EXPECT_THAT(OperatorLog(), HasSubstr("PodGroups are not made on a cluster yet"));
}

// Two operators with --leader-elect: one acts, the other waits; the leader
// killed, the other takes the lease over once it runs out and carries on.
TEST_F(OperatorE2eTest, OfTwoElectedOperatorsOneActsAndTheOtherTakesOver) {
  StartCluster();
  const std::vector<std::string> elect = {"--leader-elect",
                                          "--leader-elect-lease-duration",
                                          "3s",
                                          "--leader-elect-renew-deadline",
                                          "2s",
                                          "--leader-elect-retry-period",
                                          "200ms"};
  StartOperator(elect, 1);
  ASSERT_TRUE(Eventually([&] { return OperatorLog(1).find("leading") != std::string::npos; }))
      << OperatorLog(1);
  StartOperator(elect, 2);
  ASSERT_TRUE(Eventually([&] { return OperatorLog(2).find("is held by") != std::string::npos; }))
      << OperatorLog(2);
  std::string first =
      Field("lease/1ca428e5.training-operator.kubeflow.org", ".spec.holderIdentity");
  EXPECT_THAT(OperatorLog(2), HasSubstr(first));
  ASSERT_EQ(InKubeflow({"apply", "-f", Write("wide.yaml", kWorkers)}).exit_code, 0);
  const std::string all = "wide-master-0 wide-worker-0 wide-worker-1 wide-worker-2";
  ASSERT_TRUE(Eventually([&] { return Names("pods") == all; })) << OperatorLog(1);
  EXPECT_THAT(OperatorLog(2), ::testing::Not(HasSubstr("reconciling")));

  Operator(1).Signal(SIGKILL);
  Operator(1).WaitFor(std::chrono::seconds(10));
  ASSERT_TRUE(Eventually([&] { return OperatorLog(2).find("reconciling") != std::string::npos; },
                         std::chrono::seconds(30)))
      << OperatorLog(2);
  EXPECT_NE(Field("lease/1ca428e5.training-operator.kubeflow.org", ".spec.holderIdentity"), first);
  EXPECT_EQ(Field("lease/1ca428e5.training-operator.kubeflow.org", ".spec.leaseTransitions"), "1");
  SetPodPhase("wide-master-0", "Succeeded");
  ASSERT_TRUE(Eventually([&] {
    return FieldIn("pytorchjob/wide", ".status.conditions[?(@.type==\"Succeeded\")].status") ==
           "True";
  })) << OperatorLog(2);
  // The new leader made no pod the first had made.
  std::string events = InKubeflow({"get", "events", "-o",
                                   "jsonpath={range .items[?(@.reason==\"SuccessfulCreatePod\")]}{"
                                   ".message}{\"\\n\"}{end}"})
                           .output;
  EXPECT_EQ(std::count(events.begin(), events.end(), '\n'), 4) << events;
}

}  // namespace
}  // namespace trainyard::cli::testing
