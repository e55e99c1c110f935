// Katib on the cluster (`trainyard operator --katib`), against the
// API-only server: an Experiment's trials and their jobs are cluster
// objects, each trial's code (played by the test) pushes its metrics to
// the operator with its own token, and the experiment ends as Katib's does.
#include <gmock/gmock.h>

#include "cli/tests/operator_fixture.h"

namespace trainyard::cli::testing {
namespace {

using ::testing::HasSubstr;

// Two trials, one at a time, each a PyTorchJob whose master pushes
// `accuracy`.
constexpr const char* kPushExperiment = R"(
apiVersion: kubeflow.org/v1beta1
kind: Experiment
metadata: {name: tune, namespace: kubeflow}
spec:
  objective: {type: maximize, objectiveMetricName: accuracy}
  algorithm: {algorithmName: random}
  parallelTrialCount: 1
  maxTrialCount: 2
  metricsCollectorSpec: {collector: {kind: Push}}
  parameters:
  - {name: lr, parameterType: double, feasibleSpace: {min: "0.01", max: "0.1"}}
  trialTemplate:
    primaryContainerName: pytorch
    trialParameters: [{name: learningRate, reference: lr}]
    trialSpec:
      apiVersion: kubeflow.org/v1
      kind: PyTorchJob
      spec:
        pytorchReplicaSpecs:
          Master:
            replicas: 1
            restartPolicy: OnFailure
            template:
              spec:
                containers:
                - {name: pytorch, image: x, command: [python3, train.py, "--lr=${trialParameters.learningRate}"]}
)";

class OperatorKatibE2eTest : public OperatorE2eTest {
 protected:
  // The operator with Katib on, its pushes and observation logs on
  // `metrics_`.
  void StartKatib() {
    StartCluster(/*install=*/true);
    metrics_ = "127.0.0.1:" + std::to_string(FreePort());
    StartOperator({"--katib", "--state-dir", (dir_ / "operator-state").string(),
                   "--metrics-bind-address", metrics_, "--katib-push-url", "http://" + metrics_});
  }
  std::string EnvOf(const std::string& pod, const std::string& name) {
    return FieldIn("pod/" + pod, ".spec.containers[0].env[?(@.name==\"" + name + "\")].value");
  }
  // POSTs `body` to `url` with `token`; curl's output and the HTTP code.
  std::string Push(const std::string& url, const std::string& token, const std::string& body) {
    std::vector<std::string> flags = {"-X", "POST", "-H", "Content-Type: application/json",
                                      "-d", body,   "-w", "\n%{http_code}"};
    if (!token.empty()) flags.insert(flags.end(), {"-H", "Authorization: Bearer " + token});
    return Curl(url, flags);
  }
  // The master pod of the trial that runs now, once there is one not yet
  // seen.
  std::string NextTrialPod(std::vector<std::string>& seen) {
    std::string found;
    bool appeared = Eventually([&] {
      for (const std::string& pod : SplitNonEmpty(Names("pods"), ' ')) {
        if (pod.ends_with("-master-0") && std::find(seen.begin(), seen.end(), pod) == seen.end()) {
          found = pod;
          return true;
        }
      }
      return false;
    });
    if (appeared) seen.push_back(found);
    return found;
  }

  std::string metrics_;
};

TEST_F(OperatorKatibE2eTest, TrialsRunAsClusterJobsAndPushTheirMetrics) {
  StartKatib();
  ASSERT_EQ(InKubeflow({"apply", "-f", Write("tune.yaml", kPushExperiment)}).exit_code, 0);
  std::vector<std::string> seen;
  for (int i = 0; i < 2; ++i) {
    std::string pod = NextTrialPod(seen);
    ASSERT_FALSE(pod.empty()) << "trial " << i << "\n" << OperatorLog();
    std::string trial = pod.substr(0, pod.size() - std::string("-master-0").size());
    // The trial's job is a cluster object its trial owns; its pod is told
    // where to push, and with what token.
    EXPECT_EQ(FieldIn("pytorchjob/" + trial, ".metadata.ownerReferences[0].kind"), "Trial");
    EXPECT_THAT(FieldIn("pod/" + pod, ".spec.containers[0].command"), HasSubstr("--lr=0.0"));
    std::string url = EnvOf(pod, "TRAINYARD_METRICS_URL");
    std::string token = EnvOf(pod, "TRAINYARD_METRICS_TOKEN");
    ASSERT_EQ(url, "http://" + metrics_ + "/apis/kubeflow.org/v1beta1/namespaces/kubeflow/trials/" +
                       trial + "/observations");
    EXPECT_THAT(Push(url, "", R"({"metrics":{"accuracy":0.5}})"), HasSubstr("\n401"));
    EXPECT_THAT(
        Push(url, token, R"({"metrics":{"accuracy":)" + std::to_string(0.8 + i / 10.0) + "}}"),
        HasSubstr("\n200"));
    SetPodPhase(pod, "Running");
    SetPodPhase(pod, "Succeeded");
    ASSERT_TRUE(Eventually([&] {
      return FieldIn("trial/" + trial, ".status.conditions[?(@.type==\"Succeeded\")].status") ==
             "True";
    })) << OperatorLog();
    EXPECT_THAT(Curl(url), HasSubstr(R"("name":"accuracy")"));
    // Finished, it takes no more.
    EXPECT_THAT(Push(url, token, R"({"metrics":{"accuracy":1}})"), HasSubstr("\n409"));
  }
  ASSERT_TRUE(Eventually([&] {
    return FieldIn("experiment/tune", ".status.conditions[?(@.type==\"Succeeded\")].reason") ==
           "ExperimentMaxTrialsReached";
  })) << OperatorLog();
  EXPECT_EQ(FieldIn("experiment/tune", ".status.trialsSucceeded"), "2");
  EXPECT_EQ(FieldIn("experiment/tune", ".status.currentOptimalTrial.observation.metrics[0].latest"),
            "0.9");
  EXPECT_EQ(FieldIn("suggestion/tune", ".status.suggestionCount"), "2");
}

TEST_F(OperatorKatibE2eTest, AnExperimentWhoseMetricsAreReadFromItsPodsIsRefused) {
  StartKatib();
  std::string stdout_experiment = kPushExperiment;
  stdout_experiment.replace(
      stdout_experiment.find("metricsCollectorSpec: {collector: {kind: Push}}"),
      std::string("metricsCollectorSpec: {collector: {kind: Push}}").size(), "");
  ASSERT_EQ(InKubeflow({"apply", "-f", Write("tune.yaml", stdout_experiment)}).exit_code, 0);
  ASSERT_TRUE(Eventually([&] {
    return FieldIn("experiment/tune", ".status.conditions[?(@.type==\"Failed\")].reason") ==
           "ExperimentNotSupported";
  })) << OperatorLog();
  EXPECT_THAT(FieldIn("experiment/tune", ".status.conditions[?(@.type==\"Failed\")].message"),
              HasSubstr("collector.kind StdOut"));
  EXPECT_EQ(Names("trials"), "");  // nothing was made for it
}

TEST_F(OperatorKatibE2eTest, KatibWithoutAStateDirectoryIsRefused) {
  StartCluster();
  StartOperator({"--katib"});
  std::optional<runtime::ExitStatus> ended = Operator().WaitFor(std::chrono::seconds(20));
  ASSERT_TRUE(ended.has_value());
  EXPECT_EQ(ended->exit_code, 2);
  EXPECT_THAT(OperatorLog(), HasSubstr("--katib keeps the trials' observation log in --state-dir"));
  // Katib's flags without --katib would be ignored: refused.
  StartOperator({"--state-dir", (dir_ / "state").string()});
  ended = Operator().WaitFor(std::chrono::seconds(20));
  ASSERT_TRUE(ended.has_value());
  EXPECT_EQ(ended->exit_code, 2);
  EXPECT_THAT(OperatorLog(), HasSubstr("--state-dir and --katib-push-url are for Katib's trials"));
}

}  // namespace
}  // namespace trainyard::cli::testing
