// `trainyard operator` against `trainyard server --api-only`, as upstream's
// envtest runs its controllers against a bare kube-apiserver: nothing runs
// the pods, so the test plays the kubelet, patching pod status through the
// real kubectl. The operator is a separate process that reads the
// server's kubeconfig (HTTPS, its CA) as it would a cluster's.
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <map>

#include "cli/tests/operator_fixture.h"
#include "common/strings.h"
#include "controller/ports.h"

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

// Upstream's counters after one PyTorchJob of two pods (a master and a
// worker) was created.
void ExpectOneJobOfTwoPodsCounted(const std::string& scraped) {
  EXPECT_THAT(
      scraped,
      HasSubstr(
          R"(training_operator_jobs_created_total{framework="pytorch",job_namespace="kubeflow"} 1)"));
  EXPECT_THAT(scraped, HasSubstr("\ncreated_pods_total 2\n"));
  EXPECT_THAT(scraped, HasSubstr("\nfailed_pods_total 0\n"));
}

// As a new user installs it: the binary's own manifests applied with
// kubectl, then the operator started.
TEST_F(OperatorE2eTest, UpstreamsPodsAndServicesAndConditionsOnTheApiServer) {
  StartCluster(/*install=*/true);
  EXPECT_EQ(Names("deployments"), "trainyard-operator");
  std::string crds = Kubectl({"get", "crds", "-o", "jsonpath={.items[*].metadata.name}"}).output;
  EXPECT_EQ(crds,
            "clustertrainingruntimes.trainer.kubeflow.org experiments.kubeflow.org "
            "jaxjobs.kubeflow.org mpijobs.kubeflow.org optimizationjobs.trainer.kubeflow.org "
            "paddlejobs.kubeflow.org pytorchjobs.kubeflow.org suggestions.kubeflow.org "
            "tfjobs.kubeflow.org "
            "trainingruntimes.trainer.kubeflow.org trainjobs.trainer.kubeflow.org "
            "trials.kubeflow.org xgboostjobs.kubeflow.org");
  EXPECT_EQ(Field("clusterrole/trainyard-operator", ".rules[2].resources"),
            R"(["pods","services"])");
  std::string metrics = "127.0.0.1:" + std::to_string(FreePort());
  std::string probes = "127.0.0.1:" + std::to_string(FreePort());
  StartOperator({"--metrics-bind-address", metrics, "--health-probe-bind-address", probes});
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
  EXPECT_EQ(EnvOf("pytorch-simple-worker-0", "MASTER_ADDR"), "pytorch-simple-master-0");
  EXPECT_EQ(EnvOf("pytorch-simple-worker-0", "MASTER_PORT"), "23456");
  EXPECT_EQ(EnvOf("pytorch-simple-worker-0", "WORLD_SIZE"), "2");
  EXPECT_EQ(EnvOf("pytorch-simple-worker-0", "RANK"), "1");
  EXPECT_EQ(EnvOf("pytorch-simple-master-0", "RANK"), "0");
  std::string service = "service/pytorch-simple-worker-0";
  EXPECT_EQ(FieldIn(service, ".spec.clusterIP"), "None");
  EXPECT_EQ(FieldIn(service, ".spec.selector.training\\.kubeflow\\.org/replica-index"), "0");
  EXPECT_EQ(FieldIn(service, ".spec.ports[0].port"), "23456");
  EXPECT_EQ(FieldIn(service, ".metadata.ownerReferences[0].uid"), uid);
  // Nothing runs them: the API server is API only, and a pod starts
  // Pending, as kube-apiserver makes it.
  EXPECT_EQ(FieldIn(worker, ".status.phase"), "Pending");

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
  // Upstream's counters where upstream serves them, and the probes.
  const std::string successful =
      R"(training_operator_jobs_successful_total{framework="pytorch",job_namespace="kubeflow"} 1)";
  std::string scraped;
  EXPECT_TRUE(Eventually([&] {
    scraped = Curl("http://" + metrics + "/metrics");
    return scraped.find(successful) != std::string::npos;
  })) << scraped;
  ExpectOneJobOfTwoPodsCounted(scraped);
  EXPECT_EQ(Curl("http://" + probes + "/readyz"), "ok");
  EXPECT_EQ(Curl("http://" + probes + "/healthz"), "ok");
}

// On a cluster TF_CONFIG names each replica by its Service's cluster DNS
// name; a bad manifest is refused with its field path, as `trainyard
// validate` says.
TEST_F(OperatorE2eTest, TfConfigNamesServicesAndABadManifestIsRefused) {
  StartCluster(/*install=*/true);
  StartOperator();
  ASSERT_EQ(InKubeflow({"apply", "-f", Write("tf.yaml", kTfJob)}).exit_code, 0);
  // kubectl's error is output too: the name itself says the pod is there.
  ASSERT_TRUE(Eventually([&] {
    return FieldIn("pod/dist-worker-1", ".metadata.name") == "dist-worker-1";
  })) << OperatorLog();
  std::string tf_config =
      FieldIn("pod/dist-worker-1", ".spec.containers[0].env[?(@.name==\"TF_CONFIG\")].value");
  EXPECT_EQ(
      tf_config,
      R"({"cluster":{"ps":["dist-ps-0.kubeflow.svc:2222"],"worker":["dist-worker-0.kubeflow.svc:2222","dist-worker-1.kubeflow.svc:2222"]},"task":{"type":"worker","index":1},"environment":"cloud"})");

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
  StartOperator({"--gang-scheduler-name", "trainyard", "--namespace", "kubeflow"});
  ended = Operator().WaitFor(std::chrono::seconds(20));
  ASSERT_TRUE(ended.has_value());
  EXPECT_EQ(ended->exit_code, 2);
  EXPECT_THAT(OperatorLog(), HasSubstr("it must see every namespace: drop --namespace kubeflow"));
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
  // A pod's event is written just after the pod: the first leader is
  // killed only once it has said each.
  auto created_events = [&] {
    std::string events =
        InKubeflow({"get", "events", "-o",
                    "jsonpath={range .items[?(@.reason==\"SuccessfulCreatePod\")]}{"
                    ".message}{\"\\n\"}{end}"})
            .output;
    return std::count(events.begin(), events.end(), '\n');
  };
  ASSERT_TRUE(Eventually([&] { return created_events() == 4; })) << OperatorLog(1);
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
  EXPECT_EQ(created_events(), 4);
}

// The webhooks as the API server calls them: over HTTPS to the Service's
// DNS name, trusting the caBundle the operator wrote into the installed
// configurations.
TEST_F(OperatorE2eTest, TheWebhooksRefuseABadJobWithItsFieldPaths) {
  TRAINYARD_NEEDS(system("command -v curl >/dev/null") == 0, "curl");
  StartCluster(/*install=*/true);
  std::string port = std::to_string(FreePort());
  StartOperator({"--webhook-server-port", port});
  ASSERT_TRUE(Eventually([&] {
    return OperatorLog().find("serving admission webhooks on :" + port) != std::string::npos;
  })) << OperatorLog();
  // The certificate is kept in the operator's namespace (the kubeconfig's here).
  std::string ca = Field("secret/trainyard-operator-webhook-cert", ".data.ca\\.crt");
  ASSERT_FALSE(ca.empty());
  EXPECT_EQ(Field("mutatingwebhookconfiguration/trainyard-operator",
                  ".webhooks[0].clientConfig.caBundle"),
            ca);
  EXPECT_EQ(Field("validatingwebhookconfiguration/trainyard-operator",
                  ".webhooks[5].clientConfig.caBundle"),
            ca);
  std::ofstream(dir_ / "ca.crt") << *Base64Decode(ca);
  std::string review = R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{
      "uid":"u-1","operation":"CREATE","object":{"apiVersion":"kubeflow.org/v1","kind":"PyTorchJob",
      "metadata":{"name":"bad","namespace":"kubeflow"},"spec":{"pytorchReplicaSpecs":{"Master":{
      "replicas":2,"template":{"spec":{"containers":[{"name":"pytorch","image":"x"}]}}}}}}}})";
  std::ofstream(dir_ / "review.json") << review;
  std::string host = "trainyard-operator.default.svc";
  auto call = [&](const std::string& path) {
    return Curl("https://" + host + ":" + port + path,
                {"--cacert", (dir_ / "ca.crt").string(), "--resolve",
                 host + ":" + port + ":127.0.0.1", "-H", "Content-Type: application/json",
                 "--data-binary", "@" + (dir_ / "review.json").string()});
  };

  std::string denied = call("/validate-kubeflow-org-v1-pytorchjob");
  EXPECT_THAT(denied, HasSubstr(R"("allowed":false)"));
  EXPECT_THAT(denied, HasSubstr("spec.pytorchReplicaSpecs[Master].replicas: Forbidden: must be 1"));
  EXPECT_THAT(denied, HasSubstr(R"("uid":"u-1")"));
  std::string mutated = call("/mutate-kubeflow-org-v1-pytorchjob");
  EXPECT_THAT(mutated, HasSubstr(R"("patchType":"JSONPatch")"));
  // Katib's Experiments have theirs, served too.
  EXPECT_EQ(Field("validatingwebhookconfiguration/trainyard-operator",
                  ".webhooks[6].clientConfig.service.path"),
            "/validate-kubeflow-org-v1beta1-experiment");
  EXPECT_EQ(Field("validatingwebhookconfiguration/trainyard-operator",
                  ".webhooks[6].rules[0].apiVersions[0]"),
            "v1beta1");
  EXPECT_THAT(call("/validate-kubeflow-org-v1beta1-experiment"),
              HasSubstr(R"("kind":"AdmissionReview")"));
  // A second operator reads the same certificate rather than making another.
  StartOperator({"--webhook-server-port", std::to_string(FreePort())}, 2);
  ASSERT_TRUE(Eventually([&] {
    return OperatorLog(2).find("serving admission webhooks") != std::string::npos;
  })) << OperatorLog(2);
  EXPECT_EQ(Field("secret/trainyard-operator-webhook-cert", ".data.ca\\.crt"), ca);
}

// An OnFailure replica whose pod a kubelet could not restart in place (it
// was evicted: the whole pod Failed) is made again, as upstream does, and
// the job says why; it does not fail the job.
TEST_F(OperatorE2eTest, AnEvictedOnFailureReplicaIsMadeAgain) {
  StartCluster();
  StartOperator();
  ASSERT_EQ(
      InKubeflow({"apply", "-f",
                  Write("evicted.yaml", SmallJob("evicted", "PyTorchJob", "pytorchReplicaSpecs",
                                                 "pytorch", "    Master:\n      replicas: 1"))})
          .exit_code,
      0);
  ASSERT_TRUE(Eventually([&] { return Names("pods") == "evicted-master-0"; })) << OperatorLog();
  std::string first_uid = FieldIn("pod/evicted-master-0", ".metadata.uid");
  SetPodPhase("evicted-master-0", "Running");
  CommandResult evicted = InKubeflow(
      {"patch", "pod", "evicted-master-0", "--subresource=status", "--type=merge", "-p",
       R"({"status":{"phase":"Failed","reason":"Evicted","message":"The node was low on memory."}})"});
  ASSERT_EQ(evicted.exit_code, 0) << evicted.output;
  ASSERT_TRUE(Eventually([&] {
    std::string uid = FieldIn("pod/evicted-master-0", ".metadata.uid");
    return !uid.empty() && uid != first_uid;
  })) << OperatorLog();
  EXPECT_TRUE(Eventually([&] {
    std::string events = InKubeflow({"get", "events"}).output;
    return events.find("JobRestarting") != std::string::npos &&
           events.find("ended Failed (Evicted)") != std::string::npos;
  })) << InKubeflow({"get", "events"}).output;
  EXPECT_NE(FieldIn("pytorchjob/evicted", ".status.conditions[?(@.type==\"Failed\")].status"),
            "True");
}

// Upstream's controller integration scenarios, on the cluster: ExitCode
// restarts and permanent failures, the backoff limit, the active deadline,
// suspend and resume, cleanPodPolicy, TTL and scale-down, across kinds.
TEST_F(OperatorE2eTest, UpstreamsLifecycleScenariosOnTheCluster) {
  StartCluster();
  StartOperator();
  // ExitCode: a retryable code (SIGINT's 130) makes the pod again; a
  // permanent one (1) fails the job at once.
  ApplyIn("exitcode.yaml", SmallJob("retry", "XGBoostJob", "xgbReplicaSpecs", "xgboost",
                                    "    Master:\n      restartPolicy: ExitCode"));
  ApplyIn("permanent.yaml", SmallJob("permanent", "TFJob", "tfReplicaSpecs", "tensorflow",
                                     "    Worker:\n      restartPolicy: ExitCode"));
  // The backoff limit counts every restart.
  ApplyIn("backoff.yaml", SmallJob("backoff", "PyTorchJob", "pytorchReplicaSpecs", "pytorch",
                                   "    Master:\n      restartPolicy: ExitCode",
                                   "  runPolicy: {backoffLimit: 0}\n"));
  // Finished: cleanPodPolicy All takes every pod; the TTL takes the job.
  ApplyIn("clean.yaml",
          SmallJob("clean", "PyTorchJob", "pytorchReplicaSpecs", "pytorch",
                   "    Master:\n      replicas: 1",
                   "  runPolicy: {cleanPodPolicy: All, ttlSecondsAfterFinished: 2}\n"));
  ASSERT_TRUE(Eventually([&] {
    return Names("pods") == "backoff-master-0 clean-master-0 permanent-worker-0 retry-master-0";
  })) << Names("pods")
      << OperatorLog();
  // The deadline fires from a timer, with nothing else happening. Its pod
  // is not waited for: on a loaded machine the deadline may pass first.
  ApplyIn("deadline.yaml",
          SmallJob("deadline", "JAXJob", "jaxReplicaSpecs", "jax", "    Worker:\n      replicas: 1",
                   "  runPolicy: {activeDeadlineSeconds: 2}\n"));

  std::string first_uid = FieldIn("pod/retry-master-0", ".metadata.uid");
  SetPodPhase("retry-master-0", "Failed", 130);
  ASSERT_TRUE(Eventually([&] {
    std::string uid = FieldIn("pod/retry-master-0", ".metadata.uid");
    return !uid.empty() && uid != first_uid;
  })) << OperatorLog();
  // Upstream's story of it: the restart, as an event and a condition.
  EXPECT_TRUE(Eventually([&] {
    return InKubeflow({"get", "events"}).output.find("XGBoostJobRestarting") != std::string::npos;
  })) << OperatorLog();
  std::string conditions = FieldIn("xgboostjob/retry", ".status.conditions[*].type");
  EXPECT_THAT(conditions, HasSubstr("Restarting")) << conditions;
  SetPodPhase("permanent-worker-0", "Failed", 1);
  ASSERT_TRUE(Eventually([&] { return HasCondition("tfjob/permanent", "Failed"); }));
  SetPodPhase("backoff-master-0", "Failed", 130);
  ASSERT_TRUE(Eventually([&] { return HasCondition("pytorchjob/backoff", "Failed"); }));
  EXPECT_THAT(FieldIn("pytorchjob/backoff", ".status.conditions[?(@.type==\"Failed\")].message"),
              HasSubstr("backoff limit"));
  ASSERT_TRUE(Eventually([&] { return HasCondition("jaxjob/deadline", "Failed"); }));
  EXPECT_THAT(FieldIn("jaxjob/deadline", ".status.conditions[?(@.type==\"Failed\")].message"),
              HasSubstr("deadline"));
  EXPECT_NE(FieldIn("jaxjob/deadline", ".status.startTime"), "");         // it had started
  EXPECT_EQ(Names("pods").find("deadline-worker-0"), std::string::npos);  // nothing runs on

  SetPodPhase("clean-master-0", "Succeeded");
  ASSERT_TRUE(
      Eventually([&] { return Names("pods").find("clean-master-0") == std::string::npos; }));
  ASSERT_TRUE(Eventually([&] {
    return InKubeflow({"get", "pytorchjob", "clean"}).exit_code != 0;
  }));  // the TTL
}

// Scaled down, suspended and resumed on the cluster: the Workers beyond
// the new count go with their Services, then every pod, then they come
// back.
TEST_F(OperatorE2eTest, AJobScaledDownSuspendedAndResumedOnTheCluster) {
  StartCluster();
  StartOperator();
  ApplyIn("wide.yaml", kWorkers);
  ASSERT_TRUE(Eventually([&] {
    return Names("pods") == "wide-master-0 wide-worker-0 wide-worker-1 wide-worker-2";
  })) << Names("pods")
      << OperatorLog();
  ASSERT_EQ(MergePatch("pytorchjob/wide",
                       R"({"spec":{"pytorchReplicaSpecs":{"Worker":{"replicas":1}}}})"),
            0);
  ASSERT_TRUE(Eventually([&] {
    return Names("pods").find("wide-worker-1") == std::string::npos &&
           Names("services").find("wide-worker-2") == std::string::npos;
  })) << Names("pods");
  EXPECT_NE(Names("pods").find("wide-worker-0"), std::string::npos);
  ASSERT_EQ(MergePatch("pytorchjob/wide", R"({"spec":{"runPolicy":{"suspend":true}}})"), 0);
  ASSERT_TRUE(Eventually([&] {
    return HasCondition("pytorchjob/wide", "Suspended") &&
           Names("pods").find("wide-") == std::string::npos &&
           Names("services").find("wide-") == std::string::npos;
  })) << Names("pods");
  ASSERT_EQ(MergePatch("pytorchjob/wide", R"({"spec":{"runPolicy":{"suspend":false}}})"), 0);
  ASSERT_TRUE(Eventually([&] {
    return Names("pods").find("wide-master-0 wide-worker-0") != std::string::npos &&
           !HasCondition("pytorchjob/wide", "Suspended");
  })) << Names("pods");
}

// An MPIJob on the cluster, as upstream's v1 controller sets it up: the
// launcher runs mpirun's agent through /opt/kube/kubectl exec, which its
// kubectl-delivery init container provides, as an account whose role may
// exec into this job's workers only; it starts once they run.
TEST_F(OperatorE2eTest, AnMpiJobsLauncherMayExecIntoItsWorkersOnly) {
  StartCluster();
  StartOperator({"--enable-scheme", "mpijob"});
  ASSERT_EQ(InKubeflow({"apply", "-f", Write("mpi.yaml", R"(
apiVersion: kubeflow.org/v1
kind: MPIJob
metadata: {name: mpi, namespace: kubeflow}
spec:
  mpiReplicaSpecs:
    Launcher:
      template: {spec: {containers: [{name: mpi, image: x, command: [mpirun, hostname]}]}}
    Worker:
      replicas: 2
      template: {spec: {containers: [{name: mpi, image: x}]}}
)")})
                .exit_code,
            0);
  ASSERT_TRUE(Eventually([&] { return Names("pods") == "mpi-worker-0 mpi-worker-1"; }))
      << OperatorLog();
  EXPECT_THAT(FieldIn("configmap/mpi-config", ".data.kubexec\\.sh"),
              HasSubstr("/opt/kube/kubectl exec ${POD_NAME} -- /bin/sh -c \"$*\""));
  EXPECT_EQ(FieldIn("role/mpi-launcher", ".rules[1].resourceNames"),
            R"(["mpi-worker-0","mpi-worker-1"])");
  EXPECT_EQ(FieldIn("role/mpi-launcher", ".rules[1].resources"), R"(["pods/exec"])");
  EXPECT_EQ(FieldIn("serviceaccount/mpi-launcher", ".metadata.ownerReferences[0].kind"), "MPIJob");
  EXPECT_EQ(FieldIn("rolebinding/mpi-launcher", ".subjects[0].name"), "mpi-launcher");
  EXPECT_EQ(Names("services"), "");  // none for an MPIJob, as upstream
  // discover_hosts.sh lists the workers that run, as upstream's.
  auto discovered = [&] { return FieldIn("configmap/mpi-config", ".data.discover_hosts\\.sh"); };
  EXPECT_EQ(discovered(), "#!/bin/sh\n");
  SetPodPhase("mpi-worker-1", "Running");
  ASSERT_TRUE(Eventually([&] { return discovered() == "#!/bin/sh\necho mpi-worker-1:1\n"; }))
      << discovered();
  SetPodPhase("mpi-worker-0", "Running");
  ASSERT_TRUE(Eventually([&] { return Names("pods").find("mpi-launcher") != std::string::npos; }));
  EXPECT_EQ(discovered(), "#!/bin/sh\necho mpi-worker-0:1\necho mpi-worker-1:1\n");
  EXPECT_EQ(FieldIn("pod/mpi-launcher", ".spec.initContainers[0].name"), "kubectl-delivery");
  EXPECT_EQ(FieldIn("pod/mpi-launcher", ".spec.serviceAccountName"), "mpi-launcher");
  EXPECT_THAT(FieldIn("pod/mpi-launcher", ".spec.containers[0].volumeMounts[*].mountPath"),
              HasSubstr("/opt/kube"));
  // Scaled down, the role names only the workers there are.
  ASSERT_EQ(InKubeflow({"patch", "mpijob", "mpi", "--type=merge", "-p",
                        R"({"spec":{"mpiReplicaSpecs":{"Worker":{"replicas":1}}}})"})
                .exit_code,
            0);
  EXPECT_TRUE(Eventually([&] {
    return FieldIn("role/mpi-launcher", ".rules[1].resourceNames") == R"(["mpi-worker-0"])";
  }));
}

}  // namespace
}  // namespace trainyard::cli::testing
