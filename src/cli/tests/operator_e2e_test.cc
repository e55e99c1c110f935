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

// A small job of `kind` (its replica field and container name given) with
// `extra` spliced into its spec: the lifecycle scenarios' jobs.
std::string SmallJob(const std::string& name, const std::string& kind, const std::string& field,
                     const std::string& container, const std::string& replicas,
                     const std::string& extra = "") {
  return "apiVersion: kubeflow.org/v1\nkind: " + kind + "\nmetadata: {name: " + name +
         ", namespace: kubeflow}\nspec:\n" + extra + "  " + field + ":\n" + replicas +
         "\n      template: {spec: {containers: [{name: " + container +
         ", image: x, command: [\"true\"]}]}}\n";
}

// As a new user installs it: the binary's own manifests applied with
// kubectl, then the operator started.
TEST_F(OperatorE2eTest, UpstreamsPodsAndServicesAndConditionsOnTheApiServer) {
  StartCluster(/*install=*/true);
  EXPECT_EQ(Names("deployments"), "trainyard-operator");
  std::string crds = Kubectl({"get", "crds", "-o", "jsonpath={.items[*].metadata.name}"}).output;
  EXPECT_EQ(crds,
            "clustertrainingruntimes.trainer.kubeflow.org experiments.kubeflow.org "
            "jaxjobs.kubeflow.org mpijobs.kubeflow.org paddlejobs.kubeflow.org "
            "pytorchjobs.kubeflow.org suggestions.kubeflow.org tfjobs.kubeflow.org "
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
  EXPECT_THAT(
      scraped,
      HasSubstr(
          R"(training_operator_jobs_created_total{framework="pytorch",job_namespace="kubeflow"} 1)"));
  EXPECT_THAT(scraped, HasSubstr("\ncreated_pods_total 2\n"));  // the master and the worker
  EXPECT_THAT(scraped, HasSubstr("\nfailed_pods_total 0\n"));
  EXPECT_EQ(Curl("http://" + probes + "/readyz"), "ok");
  EXPECT_EQ(Curl("http://" + probes + "/healthz"), "ok");

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
  auto condition = [&](const std::string& job, const std::string& type) {
    return FieldIn(job, ".status.conditions[?(@.type==\"" + type + "\")].status") == "True";
  };
  auto apply = [&](const std::string& file, const std::string& text) {
    CommandResult applied = InKubeflow({"apply", "-f", Write(file, text)});
    ASSERT_EQ(applied.exit_code, 0) << applied.output;
  };
  // ExitCode: a retryable code (SIGINT's 130) makes the pod again; a
  // permanent one (1) fails the job at once.
  apply("exitcode.yaml", SmallJob("retry", "XGBoostJob", "xgbReplicaSpecs", "xgboost",
                                  "    Master:\n      restartPolicy: ExitCode"));
  apply("permanent.yaml", SmallJob("permanent", "TFJob", "tfReplicaSpecs", "tensorflow",
                                   "    Worker:\n      restartPolicy: ExitCode"));
  // The backoff limit counts every restart.
  apply("backoff.yaml",
        SmallJob("backoff", "PyTorchJob", "pytorchReplicaSpecs", "pytorch",
                 "    Master:\n      restartPolicy: ExitCode", "  runPolicy: {backoffLimit: 0}\n"));
  // Finished: cleanPodPolicy All takes every pod; the TTL takes the job.
  apply("clean.yaml", SmallJob("clean", "PyTorchJob", "pytorchReplicaSpecs", "pytorch",
                               "    Master:\n      replicas: 1",
                               "  runPolicy: {cleanPodPolicy: All, ttlSecondsAfterFinished: 2}\n"));
  // Scaled down, suspended and resumed.
  apply("wide.yaml", kWorkers);
  ASSERT_TRUE(Eventually([&] {
    return Names("pods") ==
           "backoff-master-0 clean-master-0 permanent-worker-0 retry-master-0 wide-master-0 "
           "wide-worker-0 wide-worker-1 wide-worker-2";
  })) << Names("pods")
      << OperatorLog();
  // The deadline fires from a timer, with nothing else happening. Its pod
  // is not waited for: on a loaded machine the deadline may pass first.
  apply("deadline.yaml",
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
  ASSERT_TRUE(Eventually([&] { return condition("tfjob/permanent", "Failed"); }));
  SetPodPhase("backoff-master-0", "Failed", 130);
  ASSERT_TRUE(Eventually([&] { return condition("pytorchjob/backoff", "Failed"); }));
  EXPECT_THAT(FieldIn("pytorchjob/backoff", ".status.conditions[?(@.type==\"Failed\")].message"),
              HasSubstr("backoff limit"));
  ASSERT_TRUE(Eventually([&] { return condition("jaxjob/deadline", "Failed"); }));
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

  ASSERT_EQ(InKubeflow({"patch", "pytorchjob", "wide", "--type=merge", "-p",
                        R"({"spec":{"pytorchReplicaSpecs":{"Worker":{"replicas":1}}}})"})
                .exit_code,
            0);
  ASSERT_TRUE(Eventually([&] {
    return Names("pods").find("wide-worker-1") == std::string::npos &&
           Names("services").find("wide-worker-2") == std::string::npos;
  })) << Names("pods");
  EXPECT_NE(Names("pods").find("wide-worker-0"), std::string::npos);
  ASSERT_EQ(InKubeflow({"patch", "pytorchjob", "wide", "--type=merge", "-p",
                        R"({"spec":{"runPolicy":{"suspend":true}}})"})
                .exit_code,
            0);
  ASSERT_TRUE(Eventually([&] {
    return condition("pytorchjob/wide", "Suspended") &&
           Names("pods").find("wide-") == std::string::npos &&
           Names("services").find("wide-") == std::string::npos;
  })) << Names("pods");
  ASSERT_EQ(InKubeflow({"patch", "pytorchjob", "wide", "--type=merge", "-p",
                        R"({"spec":{"runPolicy":{"suspend":false}}})"})
                .exit_code,
            0);
  ASSERT_TRUE(Eventually([&] {
    return Names("pods").find("wide-master-0 wide-worker-0") != std::string::npos &&
           !condition("pytorchjob/wide", "Suspended");
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
