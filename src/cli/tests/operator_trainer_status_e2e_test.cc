// KEP-2779 on a cluster: `trainyard operator --trainer` gives a TrainJob's
// trainer pods its status server, a token for that TrainJob's audience and
// the server's CA, and takes their reports, checking each token with the
// API server (TokenReview). The test plays the kubelet (it asks the API
// server for the pod's token, TokenRequest, as a kubelet does for a
// projected volume) and the JobSet controller (it marks a JobSet
// Completed); curl plays the trainer.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "api/tests/trainer_samples.h"
#include "cli/tests/operator_fixture.h"
#include "common/strings.h"
#include "common/tests/needs.h"

namespace trainyard::cli {
namespace {

using ::testing::HasSubstr;

constexpr const char* kHost = "trainyard-operator.default.svc";

std::string Audience(const std::string& job) {
  return "trainer.kubeflow.org/v1alpha1/namespaces/kubeflow/trainjobs/" + job + "/status";
}

std::string Report(int progress, const std::string& metric = "loss",
                   const std::string& value = "0.5") {
  return R"({"trainerStatus": {"progressPercentage": )" + std::to_string(progress) +
         R"(, "metrics": [{"name": ")" + metric + R"(", "value": ")" + value +
         R"("}], "lastUpdatedTime": "2026-01-23T10:30:45Z"}})";
}

class OperatorTrainerStatusE2eTest : public testing::OperatorE2eTest {
 protected:
  // The cluster, the runtime and the operator serving reports on port_.
  void Start() {
    TRAINYARD_NEEDS(system("command -v curl >/dev/null") == 0, "curl");
    StartCluster(/*install=*/true);
    port_ = std::to_string(testing::FreePort());
    StartOperator({"--trainer", "--trainer-status-port", port_});
    ASSERT_TRUE(testing::Eventually([&] {
      return OperatorLog().find("serving TrainJob status reports on :" + port_) !=
             std::string::npos;
    })) << OperatorLog();
    std::ofstream(dir_ / "runtime.yaml") << api::testing::kTorchDistributedRuntime;
    ASSERT_EQ(Kubectl({"apply", "-f", (dir_ / "runtime.yaml").string()}).exit_code, 0);
    // The kubelet's part: the account the pods run as.
    ASSERT_EQ(InKubeflow({"create", "serviceaccount", "trainer"}).exit_code, 0);
  }
  // A pod of `jobset` (labelled as JobSet's controller labels its pods),
  // as the kubelet would run it.
  void MakePod(const std::string& name, const std::string& jobset) {
    ApplyIn(name + ".yaml",
            "apiVersion: v1\nkind: Pod\nmetadata: {name: " + name +
                ", labels: {jobset.sigs.k8s.io/jobset-name: " + jobset +
                "}}\nspec: {serviceAccountName: trainer, containers: [{name: node, image: x}]}\n");
  }
  // The token a kubelet makes for `pod`'s projected volume, for `job`'s audience.
  std::string TokenFor(const std::string& pod, const std::string& job) {
    testing::CommandResult made =
        InKubeflow({"create", "token", "trainer", "--audience", Audience(job),
                    "--bound-object-kind", "Pod", "--bound-object-name", pod});
    EXPECT_EQ(made.exit_code, 0) << made.output;
    return std::string(Trim(made.output));
  }
  // POSTs `body` to `job`'s status endpoint with `token`: "<code> <body>".
  std::string Post(const std::string& job, const std::string& token, const std::string& body,
                   const std::string& path = "") {
    std::ofstream(dir_ / "report.json") << body;
    std::string url = "https://" + std::string(kHost) + ":" + port_ +
                      (path.empty() ? "/apis/" + Audience(job) : path);
    std::vector<std::string> flags = {"--cacert",
                                      (dir_ / "ca.crt").string(),
                                      "--resolve",
                                      std::string(kHost) + ":" + port_ + ":127.0.0.1",
                                      "-X",
                                      "POST",
                                      "-w",
                                      "\n%{http_code}",
                                      "--data-binary",
                                      "@" + (dir_ / "report.json").string()};
    if (!token.empty()) flags.insert(flags.end(), {"-H", "Authorization: Bearer " + token});
    std::string out = Curl(url, flags);
    size_t newline = out.rfind('\n');
    if (newline == std::string::npos) return out;
    return out.substr(newline + 1) + " " + out.substr(0, newline);
  }
  // The CA the pods are given, from the TrainJob's ConfigMap.
  void ReadCa(const std::string& job) {
    std::string ca = FieldIn("configmap/" + job + "-tls-config", ".data.ca\\.crt");
    ASSERT_THAT(ca, HasSubstr("BEGIN CERTIFICATE"));
    std::ofstream(dir_ / "ca.crt") << ca;
  }
  std::string port_;
};

TEST_F(OperatorTrainerStatusE2eTest, ATrainersPodReportsWithItsOwnTokenAndNoOtherMay) {
  ASSERT_NO_FATAL_FAILURE(Start());
  ApplyIn("job.yaml",
          "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: "
          "reporter}\nspec: {runtimeRef: {name: torch-distributed}}\n");
  ASSERT_TRUE(testing::Eventually([&] {
    return InKubeflow({"get", "jobset", "reporter"}).exit_code == 0;
  })) << OperatorLog();
  // What upstream's plugin gives the trainer's containers.
  std::string pod = ".spec.replicatedJobs[?(@.name==\"node\")].template.spec.template.spec";
  std::string env = pod + ".containers[0].env[?(@.name==\"KUBEFLOW_TRAINER_SERVER_";
  EXPECT_EQ(FieldIn("jobset/reporter", env + "URL\")].value"),
            "https://" + std::string(kHost) + ":10443/apis/" + Audience("reporter"));
  EXPECT_EQ(FieldIn("jobset/reporter", env + "TOKEN\")].value"),
            "/var/run/secrets/kubeflow/trainer/token");
  EXPECT_EQ(FieldIn("jobset/reporter", env + "CA_CERT\")].value"),
            "/var/run/secrets/kubeflow/trainer/ca.crt");
  std::string volume = pod + ".volumes[?(@.name==\"kubeflow-trainer-token\")].projected.sources";
  EXPECT_EQ(FieldIn("jobset/reporter", volume + "[0].serviceAccountToken.audience"),
            Audience("reporter"));
  EXPECT_EQ(FieldIn("jobset/reporter", volume + "[1].configMap.name"), "reporter-tls-config");
  ASSERT_NO_FATAL_FAILURE(ReadCa("reporter"));
  // The webhooks' CA, kept in the operator's namespace.
  EXPECT_EQ(*Base64Decode(Field("secret/trainyard-operator-webhook-cert", ".data.ca\\.crt")),
            FieldIn("configmap/reporter-tls-config", ".data.ca\\.crt"));

  MakePod("reporter-node-0-0", "reporter");
  std::string token = TokenFor("reporter-node-0-0", "reporter");
  std::string answer = Post("reporter", token, Report(42));
  EXPECT_THAT(answer, ::testing::StartsWith("200 ")) << answer << OperatorLog();
  EXPECT_EQ(FieldIn("trainjob/reporter", ".status.trainerStatus.progressPercentage"), "42");
  EXPECT_THAT(InKubeflow({"get", "trainjobs"}).output, ::testing::ContainsRegex("reporter .* 42%"));
  // A report replaces the last one whole, as upstream's.
  EXPECT_THAT(
      Post("reporter", token, R"({"trainerStatus": {"lastUpdatedTime": "2026-01-23T10:31:00Z"}})"),
      ::testing::StartsWith("200 "));
  EXPECT_EQ(FieldIn("trainjob/reporter", ".status.trainerStatus.progressPercentage"), "");

  // Another job's pod, with a token for this job's audience: refused.
  MakePod("stranger", "other");
  EXPECT_THAT(Post("reporter", TokenFor("stranger", "reporter"), Report(99)),
              ::testing::StartsWith("403 "));
  // This job's token for another job: refused; no token: refused.
  EXPECT_THAT(Post("other", token, Report(99)), ::testing::StartsWith("403 "));
  EXPECT_THAT(Post("reporter", "", Report(99)), ::testing::StartsWith("403 "));
  EXPECT_THAT(Post("reporter", token + "x", Report(99)), ::testing::StartsWith("403 "));
  // A report the CRD would refuse, and what is no report.
  EXPECT_THAT(Post("reporter", token, Report(101)),
              ::testing::AllOf(::testing::StartsWith("422 "),
                               HasSubstr("status.trainerStatus.progressPercentage")));
  EXPECT_THAT(Post("reporter", token, "{not json"),
              ::testing::AllOf(::testing::StartsWith("422 "), HasSubstr("Invalid payload")));
  EXPECT_THAT(Post("reporter", token, Report(1), "/apis/other/path"),
              ::testing::StartsWith("404 "));
  EXPECT_EQ(FieldIn("trainjob/reporter", ".status.trainerStatus.progressPercentage"), "");
  // A job that is gone: the token is good, the job is not found.
  MakePod("ghost-node-0-0", "ghost");
  EXPECT_THAT(Post("ghost", TokenFor("ghost-node-0-0", "ghost"), Report(5)),
              ::testing::AllOf(::testing::StartsWith("404 "), HasSubstr("Train job not found")));
}

// An OptimizationJob on a cluster, its trials reporting their objective
// to the operator: the operator reads what they pushed and names the best.
TEST_F(OperatorTrainerStatusE2eTest, AnOptimizationJobsTrialsReportTheirObjective) {
  ASSERT_NO_FATAL_FAILURE(Start());
  ApplyIn("opt.yaml", R"yaml(apiVersion: trainer.kubeflow.org/v1alpha1
kind: OptimizationJob
metadata: {name: opt}
spec:
  objectives: [{metric: loss, direction: Minimize}]
  numTrials: 2
  parallelTrials: 2
  searchAlgorithm: {grid: {}}
  parameters:
  - {name: lr, searchSpace: {categorical: {choices: ["0.1", "0.01"]}}}
  trainJobTemplate:
    spec: {runtimeRef: {name: torch-distributed}}
)yaml");
  for (const char* trial : {"opt-trial-0", "opt-trial-1"}) {
    ASSERT_TRUE(testing::Eventually([&] {
      return InKubeflow({"get", "jobset", trial}).exit_code == 0;
    })) << OperatorLog();
  }
  ASSERT_NO_FATAL_FAILURE(ReadCa("opt-trial-0"));
  for (const char* trial : {"opt-trial-0", "opt-trial-1"}) {
    std::string lr = FieldIn(std::string("trainjob/") + trial,
                             ".spec.trainer.env[?(@.name==\"KUBEFLOW_TRAINER_OPT_LR\")].value");
    std::string pod = std::string(trial) + "-node-0-0";
    MakePod(pod, trial);
    // The smaller rate trains better here.
    std::string answer =
        Post(trial, TokenFor(pod, trial), Report(100, "loss", lr == "0.01" ? "0.2" : "0.9"));
    ASSERT_THAT(answer, ::testing::StartsWith("200 ")) << answer;
    // The JobSet controller's part: the JobSet completed.
    ASSERT_EQ(InKubeflow({"patch", "jobset", trial, "--subresource=status", "--type=merge", "-p",
                          R"({"status":{"conditions":[{"type":"Completed","status":"True",)"
                          R"("reason":"AllJobsCompleted","message":"jobset completed",)"
                          R"("lastTransitionTime":"2026-01-01T00:00:00Z"}]}})"})
                  .exit_code,
              0);
  }
  ASSERT_TRUE(testing::Eventually([&] { return HasCondition("optimizationjob/opt", "Complete"); }))
      << InKubeflow({"get", "optimizationjob", "opt", "-o", "yaml"}).output << OperatorLog();
  std::string best = FieldIn("optimizationjob/opt", ".status.result.trainJobName");
  EXPECT_EQ(FieldIn("trainjob/" + best,
                    ".spec.trainer.env[?(@.name==\"KUBEFLOW_TRAINER_OPT_LR\")].value"),
            "0.01");
  EXPECT_EQ(FieldIn("optimizationjob/opt", ".status.result.parameters[0].value"), "0.01");
}

}  // namespace
}  // namespace trainyard::cli
