// Katib on the cluster (`trainyard operator --katib`), against the
// API-only server: an Experiment's trials and their jobs are cluster
// objects; each trial's code (played by the test) pushes its metrics to
// the operator with its own token, or prints them to a log the operator
// reads through the API; the experiment ends as Katib's does.
#include <fmt/format.h>
#include <gmock/gmock.h>

#include <fstream>

#include "api/tests/trainer_samples.h"
#include "cli/tests/operator_fixture.h"
#include "common/clock.h"
#include "common/strings.h"

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
    katib_flags_ = {"--katib",
                    "--state-dir",
                    (dir_ / "operator-state").string(),
                    "--metrics-bind-address",
                    metrics_,
                    "--katib-push-url",
                    "http://" + metrics_};
    StartOperator(katib_flags_);
  }
  // The experiment with `collector` for its metricsCollectorSpec line, and
  // `trials` trials.
  static std::string WithCollector(const std::string& collector, int trials) {
    std::string yaml = kPushExperiment;
    const std::string push = "metricsCollectorSpec: {collector: {kind: Push}}";
    yaml.replace(yaml.find(push), push.size(), collector);
    yaml.replace(yaml.find("maxTrialCount: 2"), 16, "maxTrialCount: " + std::to_string(trials));
    return yaml;
  }
  // What a kubelet logs of the pod's first container's first run: each of
  // `lines` printed now, in the CRI format, where the API-only server reads
  // pod logs from.
  void Print(const std::string& pod, const std::vector<std::string>& lines) {
    std::string uid = FieldIn("pod/" + pod, ".metadata.uid");
    std::string container = FieldIn("pod/" + pod, ".spec.containers[0].name");
    fs::path file =
        home_ / "server" / "pod-logs" / ("kubeflow_" + pod + "_" + uid) / container / "0.log";
    fs::create_directories(file.parent_path());
    std::ofstream out(file, std::ios::app);
    for (const std::string& line : lines) {
      auto now = std::chrono::system_clock::now().time_since_epoch();
      auto seconds = std::chrono::duration_cast<std::chrono::seconds>(now);
      std::string stamp = FormatRfc3339(TimePoint(seconds));
      stamp.insert(
          stamp.size() - 1,
          fmt::format(".{:09}",
                      std::chrono::duration_cast<std::chrono::nanoseconds>(now - seconds).count()));
      out << stamp << " stdout F " << line << '\n';
    }
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

  // Katib on, and an experiment of one StdOut trial: its master pod's
  // name and the trial's (empty when none came).
  std::pair<std::string, std::string> StartStdOutTrial() {
    StartKatib();
    EXPECT_EQ(InKubeflow({"apply", "-f", Write("tune.yaml", WithCollector("", 1))}).exit_code, 0);
    std::vector<std::string> seen;
    std::string pod = NextTrialPod(seen);
    if (pod.empty()) return {};
    return {pod, pod.substr(0, pod.size() - std::string("-master-0").size())};
  }
  std::string metrics_;
  std::vector<std::string> katib_flags_;
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

TEST_F(OperatorKatibE2eTest, StdOutMetricsAreReadFromThePodsLogAcrossARestart) {
  // Named copies: lambdas below take them (clang 14 captures no bindings).
  std::pair<std::string, std::string> started = StartStdOutTrial();
  std::string pod = started.first, trial = started.second;
  ASSERT_FALSE(pod.empty()) << OperatorLog();
  EXPECT_EQ(EnvOf(pod, "TRAINYARD_METRICS_URL"), "") << "a StdOut trial is told nothing";
  BindPod(pod, "node-a");  // its log is its node's kubelet's to serve
  SetPodPhase(pod, "Running");
  Print(pod, {"epoch 1: accuracy=0.5", "accuracy=0.6 loss=1"});
  auto latest = [&] { return FieldIn("trial/" + trial, ".status.observation.metrics[0].latest"); };
  ASSERT_TRUE(Eventually([&] { return latest() == "0.6"; })) << OperatorLog();
  // The real kubectl reads the same log, as from a kubelet.
  CommandResult logs = InKubeflow({"logs", pod});
  EXPECT_EQ(logs.output, "epoch 1: accuracy=0.5\naccuracy=0.6 loss=1\n");
  // Killed while the trial runs: what was read is not read again.
  Operator().Signal(SIGKILL);
  Operator().WaitFor(std::chrono::seconds(10));
  Print(pod, {"accuracy=0.7"});
  StartOperator(katib_flags_);
  // The trial concludes only once its log is read to its end.
  SetPodPhase(pod, "Succeeded");
  ASSERT_TRUE(Eventually([&] {
    return FieldIn("trial/" + trial, ".status.conditions[?(@.type==\"Succeeded\")].status") ==
           "True";
  })) << OperatorLog();
  EXPECT_EQ(latest(), "0.7");
  std::string log =
      Curl("http://" + metrics_ + "/apis/kubeflow.org/v1beta1/namespaces/kubeflow/trials/" + trial +
           "/observations");
  size_t values = 0;
  for (size_t at = 0; (at = log.find(R"("name":"accuracy")", at)) != std::string::npos; ++at) {
    ++values;
  }
  EXPECT_EQ(values, 3u) << log;
}

// A trial whose pod was never scheduled has no log (kube-apiserver answers
// it with nothing, 204): the trial waits for it, then says why it has no
// metrics, rather than ending MetricsUnavailable without a word.
TEST_F(OperatorKatibE2eTest, AnUnscheduledStdOutTrialWaitsThenSaysWhyItHasNoMetrics) {
  // Named copies: lambdas below take them (clang 14 captures no bindings).
  std::pair<std::string, std::string> started = StartStdOutTrial();
  std::string pod = started.first, trial = started.second;
  ASSERT_FALSE(pod.empty()) << OperatorLog();
  EXPECT_EQ(InKubeflow({"get", "--raw", "/api/v1/namespaces/kubeflow/pods/" + pod + "/log"}).output,
            "");
  SetPodPhase(pod, "Succeeded");  // told so, as with upstream's envtest
  const std::string unavailable = ".status.conditions[?(@.type==\"MetricsUnavailable\")]";
  ASSERT_TRUE(
      Eventually([&] { return FieldIn("trial/" + trial, unavailable + ".status") == "True"; },
                 std::chrono::seconds(60)))
      << OperatorLog();
  EXPECT_THAT(FieldIn("trial/" + trial, unavailable + ".message"),
              HasSubstr("never scheduled to a node"))
      << OperatorLog();
}

TEST_F(OperatorKatibE2eTest, AnExperimentWhoseMetricsAreFilesInItsPodsIsRefused) {
  StartKatib();
  std::string file = WithCollector(
      "metricsCollectorSpec: {collector: {kind: File}, source: {fileSystemPath: "
      "{path: /var/log/katib/metrics.log, kind: File}}}",
      2);
  ASSERT_EQ(InKubeflow({"apply", "-f", Write("tune.yaml", file)}).exit_code, 0);
  ASSERT_TRUE(Eventually([&] {
    return FieldIn("experiment/tune", ".status.conditions[?(@.type==\"Failed\")].reason") ==
           "ExperimentNotSupported";
  })) << OperatorLog();
  EXPECT_THAT(FieldIn("experiment/tune", ".status.conditions[?(@.type==\"Failed\")].message"),
              HasSubstr("collector.kind File: it reads files inside the trial pods"));
  EXPECT_EQ(Names("trials"), "");  // nothing was made for it
}

// An experiment whose trials are TrainJobs on upstream's torch runtime.
constexpr const char* kTrainJobExperiment = R"(
apiVersion: kubeflow.org/v1beta1
kind: Experiment
metadata: {name: tune}
spec:
  objective: {type: minimize, objectiveMetricName: loss}
  algorithm: {algorithmName: random}
  maxTrialCount: 1
  parallelTrialCount: 1
  parameters:
  - {name: lr, parameterType: double, feasibleSpace: {min: "0.01", max: "0.1"}}
  trialTemplate:
    primaryContainerName: node
    trialParameters: [{name: lr, reference: lr}]
    trialSpec:
      apiVersion: trainer.kubeflow.org/v1alpha1
      kind: TrainJob
      spec:
        runtimeRef: {name: torch-distributed}
        trainer: {command: [echo, "loss=${trialParameters.lr}"]}
)";

// Without --trainer the operator follows no TrainJobs: an experiment whose
// trials are TrainJobs is refused, saying what to add, not left to wait.
TEST_F(OperatorKatibE2eTest, TrainJobTrialsWithoutTrainerAreRefusedSayingWhatToAdd) {
  StartKatib();
  testing::CommandResult applied =
      InKubeflow({"apply", "-f", Write("tune.yaml", kTrainJobExperiment)});
  ASSERT_EQ(applied.exit_code, 0) << applied.output;
  ASSERT_TRUE(Eventually([&] {
    return FieldIn("experiment/tune", ".status.conditions[?(@.type==\"Failed\")].reason") ==
           "ExperimentNotSupported";
  })) << OperatorLog();
  EXPECT_THAT(FieldIn("experiment/tune", ".status.conditions[?(@.type==\"Failed\")].message"),
              HasSubstr("run it with --trainer as well as --katib"));
  EXPECT_EQ(Names("trials"), "");
}

// With --trainer too, the trials are TrainJobs on the cluster, told the
// trial's values, and each becomes the JobSet upstream's plugins make.
TEST_F(OperatorKatibE2eTest, WithTrainerTrialsAreTrainJobsThatBecomeJobSets) {
  StartCluster(/*install=*/true);
  metrics_ = "127.0.0.1:" + std::to_string(FreePort());
  std::vector<std::string> flags = {
      "--katib", "--state-dir", (dir_ / "state").string(), "--metrics-bind-address",
      metrics_,  "--trainer"};
  StartOperator(flags);
  ASSERT_EQ(Kubectl({"apply", "-f", Write("runtime.yaml", api::testing::kTorchDistributedRuntime)})
                .exit_code,
            0);
  testing::CommandResult applied =
      InKubeflow({"apply", "-f", Write("tune.yaml", kTrainJobExperiment)});
  ASSERT_EQ(applied.exit_code, 0) << applied.output;
  std::string trial;
  ASSERT_TRUE(Eventually([&] {
    trial = Names("trainjobs");
    return !trial.empty() && !Names("jobsets").empty();
  })) << OperatorLog();
  EXPECT_EQ(FieldIn("trainjob/" + trial, ".metadata.ownerReferences[0].kind"), "Trial");
  EXPECT_EQ(
      FieldIn("trainjob/" + trial, ".spec.trainer.env[?(@.name==\"KATIB_TRIAL_NAME\")].value"),
      trial);
  EXPECT_THAT(FieldIn("jobset/" + trial,
                      ".spec.replicatedJobs[0].template.spec.template.spec.containers[0].command"),
              HasSubstr("loss=0.0"));
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
