// OptimizationJob against `trainyard server`, driven by kubectl as a user
// drives it: trials are TrainJobs whose trainers push their metrics with
// KEP-2779's request (over HTTPS, with the TrainJob's token); the search
// survives a server killed mid-way; two objectives end with a Pareto
// front; the spec cannot change.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "api/tests/trainer_samples.h"
#include "cli/tests/server_fixture.h"

namespace trainyard::cli {
namespace {

using ::testing::HasSubstr;

// A trainer's `report '<metrics JSON array>'`: KEP-2779's request with curl,
// as upstream's SDK sends it, in a `|` block of a TrainJob template's
// command.
constexpr const char* kReportFunction = R"sh(
          report() {
            curl -sS --fail --cacert "$KUBEFLOW_TRAINER_SERVER_CA_CERT" -X POST \
              -H "Authorization: Bearer $(cat "$KUBEFLOW_TRAINER_SERVER_TOKEN")" \
              "$KUBEFLOW_TRAINER_SERVER_URL" -d "{\"trainerStatus\": {\"metrics\": $1,
                \"lastUpdatedTime\": \"2026-01-23T10:30:45Z\"}}"
          }
)sh";

// An OptimizationJob named `name` whose trials (TrainJobs on the
// torch-distributed runtime) run `script` after kReportFunction; `spec` is
// the rest of its spec.
std::string ReportingJob(const std::string& name, const std::string& spec,
                         const std::string& script) {
  return std::string(api::testing::kTorchDistributedRuntime) +
         "\n---\napiVersion: trainer.kubeflow.org/v1alpha1\nkind: OptimizationJob\nmetadata: "
         "{name: " +
         name + "}\nspec:\n" + spec +
         "  trainJobTemplate:\n    spec:\n      runtimeRef: {name: torch-distributed}\n"
         "      trainer:\n        command:\n        - sh\n        - -c\n        - |" +
         kReportFunction + script;
}

// Each trial reports accuracy = 1 - (x - 0.7)^2 and cost = x, for its
// parameter x: accuracy rises with cost up to x = 0.7, so more accuracy
// costs more there.
std::string TwoObjectives() {
  return ReportingJob(
      "pareto", R"yaml(  objectives:
  - {metric: accuracy, direction: Maximize}
  - {metric: cost, direction: Minimize}
  numTrials: 6
  parallelTrials: 2
  searchAlgorithm: {random: {seed: 11}}
  parameters:
  - {name: x, searchSpace: {uniform: {min: "0", max: "1"}}}
)yaml",
      R"sh(          accuracy=$(awk -v x="$KUBEFLOW_TRAINER_OPT_X" 'BEGIN { printf "%.6f", 1 - (x - 0.7) ^ 2 }')
          report "[{\"name\": \"accuracy\", \"value\": \"$accuracy\"},
                   {\"name\": \"cost\", \"value\": \"$KUBEFLOW_TRAINER_OPT_X\"}]"
)sh");
}

class OptimizationServerE2eTest : public testing::ServerFixture {
 protected:
  void StartHttps() {
    std::string cert, key;
    ASSERT_TRUE(MakeCertificate(cert, key)) << "openssl is needed for the server's certificate";
    cert_ = cert;
    key_ = key;
    tokens_ = Write("tokens", "ops-secret-123 ops *\n");
    Restart();
  }
  void Restart() { StartServer({"--tls-cert", cert_, "--tls-key", key_, "--token-file", tokens_}); }

  std::string cert_, key_, tokens_;
};

TEST_F(OptimizationServerE2eTest, TwoObjectivesEndWithTheParetoFrontOfTrialsThatPushed) {
  StartHttps();
  std::string manifest = Write("pareto.yaml", TwoObjectives());
  testing::CommandResult applied = Kubectl({"apply", "-f", manifest});
  ASSERT_EQ(applied.exit_code, 0) << applied.output;
  EXPECT_THAT(applied.output, HasSubstr("optimizationjob.trainer.kubeflow.org/pareto created"));
  // Killed while trials run: the search goes on from its TrainJobs.
  ASSERT_TRUE(
      testing::Eventually([&] { return !Field("trainjobs", ".items[*].metadata.name").empty(); }));
  KillServer();
  Restart();
  ASSERT_TRUE(testing::Eventually(
      [&] { return Field("optimizationjob/pareto", ".status.conditions[-1:].type") == "Complete"; },
      std::chrono::seconds(120)))
      << Kubectl({"get", "optimizationjob", "pareto", "-o", "yaml"}).output
      << Kubectl({"get", "trainjobs", "-o", "yaml"}).output;
  EXPECT_EQ(Field("optimizationjob/pareto", ".status.trialCounts.succeeded"), "6");
  EXPECT_EQ(
      Kubectl({"get", "trainjobs", "-l", "trainyard.dev/optimization-job=pareto", "-o", "name"})
          .output,
      "trainjob.trainer.kubeflow.org/pareto-trial-0\ntrainjob.trainer.kubeflow.org/"
      "pareto-trial-1\ntrainjob.trainer.kubeflow.org/pareto-trial-2\n"
      "trainjob.trainer.kubeflow.org/pareto-trial-3\ntrainjob.trainer.kubeflow.org/"
      "pareto-trial-4\ntrainjob.trainer.kubeflow.org/pareto-trial-5\n")
      << "exactly numTrials trials, none made twice across the restart";
  // The front is what no other trial beats in both objectives.
  auto numbers = [](const std::string& text) {
    std::multiset<double> out;
    std::istringstream in(text);
    for (double x; in >> x;) out.insert(x);
    return out;
  };
  std::multiset<double> xs =
      numbers(Field("trainjobs", ".items[*].status.trainerStatus.metrics[1].value"));
  auto accuracy = [](double x) { return 1 - (x - 0.7) * (x - 0.7); };
  std::multiset<double> expected;
  for (double x : xs) {
    bool beaten = std::any_of(xs.begin(), xs.end(), [&](double y) {
      return y <= x && accuracy(y) >= accuracy(x) && (y < x || accuracy(y) > accuracy(x));
    });
    if (!beaten) expected.insert(x);
  }
  EXPECT_EQ(numbers(Field("optimizationjob/pareto", ".status.paretoFront[*].metrics[1].value")),
            expected);
  EXPECT_GE(expected.size(), 2u);
  EXPECT_THAT(Kubectl({"get", "optimizationjobs"}).output,
              ::testing::ContainsRegex("NAME +STATE +SUCCEEDED +FAILED +TRIALS +BEST +AGE\n"
                                       "pareto +Complete +6 +0 +6 +pareto-trial-[0-5] +"));
  // Upstream's CEL rule: the spec never changes.
  std::string changed = manifest + ".changed";
  std::string text = testing::ReadFile(manifest);
  text.replace(text.find("numTrials: 6"), 12, "numTrials: 8");
  std::ofstream(changed) << text;
  testing::CommandResult refused = Kubectl({"apply", "-f", changed});
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_THAT(refused.output,
              HasSubstr("OptimizationJobSpec is immutable and cannot be updated after creation"));
}

// Early stopping over what trials push (each report a point of the
// trial's series): the good trial reports falling losses and ends; the
// bad one's second report is worse than the good one's at that report, so
// it is suspended there, and the job ends with the good one as its best.
TEST_F(OptimizationServerE2eTest, EarlyStoppingJudgesWhatTrialsPush) {
  StartHttps();
  std::string manifest = Write(
      "es.yaml",
      ReportingJob("es", R"yaml(  objectives: [{metric: loss}]
  numTrials: 2
  searchAlgorithm: {grid: {}}
  parameters: [{name: start, searchSpace: {categorical: {choices: ["1", "3"]}}}]
  earlyStopping:
    algorithmName: medianstop
    algorithmSettings: [{name: min_trials_required, value: "1"}, {name: start_step, value: "2"}]
)yaml",
                   R"sh(          loss() { report "[{\"name\": \"loss\", \"value\": \"$1\"}]"; }
          loss "$KUBEFLOW_TRAINER_OPT_START"
          loss "$(awk -v s="$KUBEFLOW_TRAINER_OPT_START" 'BEGIN { print s / 2 }')"
          if [ "$KUBEFLOW_TRAINER_OPT_START" = 1 ]; then loss 0.2; exit 0; fi
          exec sleep 600
)sh"));
  testing::CommandResult applied = Kubectl({"apply", "-f", manifest});
  ASSERT_EQ(applied.exit_code, 0) << applied.output;
  ASSERT_TRUE(testing::Eventually(
      [&] { return Field("optimizationjob/es", ".status.conditions[-1:].type") == "Complete"; },
      std::chrono::seconds(60)))
      << Kubectl({"get", "optimizationjob", "es", "-o", "yaml"}).output
      << Kubectl({"get", "trainjobs", "-o", "yaml"}).output;
  EXPECT_EQ(Field("optimizationjob/es", ".status.trialCounts.earlyStopped"), "1");
  EXPECT_EQ(Field("trainjob/es-trial-1", ".metadata.annotations.trainyard\\.dev/early-stopped"),
            "2");
  EXPECT_EQ(Field("trainjob/es-trial-1", ".spec.suspend"), "true");
  EXPECT_EQ(Field("optimizationjob/es", ".status.result.trainJobName"), "es-trial-0");
}

TEST_F(OptimizationServerE2eTest, WhatUpstreamsSchemaRefusesIsRefusedAndNothingStored) {
  StartServer();
  std::string bad = Write("bad.yaml", R"yaml(apiVersion: trainer.kubeflow.org/v1alpha1
kind: OptimizationJob
metadata: {name: bad}
spec:
  objectives: [{metric: loss, direction: minimize}]
  numTrials: 2
  parallelTrials: 3
  parameters: [{name: lr, searchSpace: {logUniform: {min: "0", max: "1"}}}]
  trainJobTemplate: {spec: {runtimeRef: {name: torch-distributed}}}
)yaml");
  testing::CommandResult refused = Kubectl({"apply", "-f", bad});
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_THAT(refused.output, HasSubstr("spec.objectives[0].direction: Unsupported value: "
                                        "\"minimize\""));
  EXPECT_THAT(refused.output, HasSubstr("parallelTrials cannot exceed numTrials"));
  EXPECT_THAT(refused.output, HasSubstr("min must be strictly greater than 0"));
  EXPECT_THAT(Kubectl({"get", "optimizationjobs"}).output, HasSubstr("No resources found"));
}

}  // namespace
}  // namespace trainyard::cli
