// Trainer v2 under `trainyard run`, as a user runs it: the real binary and
// real processes; the TrainJob becomes a JobSet, its Jobs and their pods.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "api/tests/trainer_samples.h"
#include "api/validation.h"
#include "api/yaml.h"
#include "cli/tests/operator_fixture.h"
#include "cli/tests/server_fixture.h"
#include "common/tests/needs.h"
#include "common/tests/test_dir.h"
#include "runtime/local/process.h"

namespace trainyard::cli {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::HaveBwrap;

// Upstream's Trainer examples and runtimes, from ../shared beside the
// source (or beside a folder above it); none in a fresh clone.
std::optional<fs::path> TrainerConformance() {
  for (fs::path dir = TRAINYARD_SOURCE_DIR; !dir.empty() && dir != dir.parent_path();
       dir = dir.parent_path()) {
    fs::path found = dir.parent_path() / "shared" / "conformance" / "trainer-v2";
    if (fs::exists(found)) return found;
  }
  return std::nullopt;
}

class TrainJobE2eTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = FreshTestDir("trainyard-trainjob-e2e"); }
  void TearDown() override { fs::remove_all(dir_); }

  // `home`: relative to dir_, or absolute.
  int Run(const std::string& manifest, const std::string& home = "") {
    std::ofstream(dir_ / "job.yaml") << manifest;
    Result<runtime::Process> p = runtime::Process::Start(
        {.argv = {TRAINYARD_BINARY, "run", "--root", "host", "--home",
                  home.empty() ? (dir_ / "home").string() : home, "job.yaml"},
         .env = {{"PATH", "/usr/bin:/bin"}},
         .working_dir = dir_.string(),
         .log_path = (dir_ / "out").string()});
    EXPECT_TRUE(p.ok()) << p.status().ToString();
    if (!p.ok()) return -1;
    std::optional<runtime::ExitStatus> status = p->WaitFor(std::chrono::seconds(60));
    EXPECT_TRUE(status.has_value());
    return status ? status->exit_code : -1;
  }
  std::string Output() {
    std::ifstream in(dir_ / "out");
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  fs::path dir_;
};

// A runtime of two steps sharing the claim of its volumeClaimPolicies: the
// initializer writes what it was told (STORAGE_URI) where the trainer's
// two nodes read it, and they start only once it has completed.
constexpr const char* kTwoSteps = R"y(
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata: {name: two-steps}
spec:
  template:
    spec:
      volumeClaimPolicies:
      - templates:
        - metadata: {name: initializer}
          spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
      replicatedJobs:
      - name: dataset-initializer
        template:
          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: dataset-initializer}}
          spec:
            template:
              spec:
                containers:
                - name: dataset-initializer
                  image: none
                  command: [sh, -c, 'sleep 1; echo "$STORAGE_URI" > /workspace/source; echo fetched']
                  volumeMounts: [{name: initializer, mountPath: /workspace}]
      - name: node
        dependsOn: [{name: dataset-initializer, status: Complete}]
        template:
          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
          spec:
            template:
              spec:
                containers:
                - name: node
                  image: none
                  volumeMounts: [{name: initializer, mountPath: /workspace}]
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: steps}
spec:
  runtimeRef: {kind: TrainingRuntime, name: two-steps}
  initializer:
    dataset: {storageUri: "file:///data/digits"}
  trainer:
    numNodes: 2
    command: [sh, -c, 'echo "node $JOB_COMPLETION_INDEX of $HOSTNAME read $(cat /workspace/source)"']
)y";

TEST_F(TrainJobE2eTest, TheInitializerCompletesBeforeTheNodesWhichReadWhatItWrote) {
  TRAINYARD_NEEDS(HaveBwrap(), "bubblewrap");
  EXPECT_EQ(Run(kTwoSteps), 0) << Output();
  std::string out = Output();
  EXPECT_THAT(out, HasSubstr("[dataset-initializer-0-0] fetched\n"));
  for (const char* node : {"0", "1"}) {
    EXPECT_THAT(out, HasSubstr(fmt::format("[node-0-{}] node {} of steps-node-0-{} read "
                                           "file:///data/digits\n",
                                           node, node, node)));
  }
  EXPECT_THAT(out, HasSubstr("TrainJob default/steps: Succeeded after"));
}

// Kubeflow's dataset-initializer image, whose program is inside it, runs
// here as `trainyard initialize`: a file:// storageUri is copied into
// /workspace/dataset, on the claim both steps mount.
constexpr const char* kInitializerRuntime = R"y(
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: with-dataset}
spec:
  mlPolicy: {numNodes: 1, torch: {}}
  template:
    spec:
      volumeClaimPolicies:
      - templates:
        - metadata: {name: initializer}
          spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
      replicatedJobs:
      - name: dataset-initializer
        template:
          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: dataset-initializer}}
          spec:
            backoffLimit: 0
            template:
              spec:
                containers:
                - name: dataset-initializer
                  image: ghcr.io/kubeflow/trainer/dataset-initializer
                  volumeMounts: [{name: initializer, mountPath: /workspace}]
      - name: node
        dependsOn: [{name: dataset-initializer, status: Complete}]
        template:
          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
          spec:
            template:
              spec:
                containers:
                - name: node
                  image: pytorch/pytorch
                  volumeMounts: [{name: initializer, mountPath: /workspace}]
)y";

std::string DatasetJob(const std::string& name, const std::string& uri) {
  return fmt::format(R"y(---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {{name: {}}}
spec:
  runtimeRef: {{name: with-dataset}}
  initializer:
    dataset: {{storageUri: "{}"}}
  trainer:
    command: [sh, -c, 'echo "read $(cat /workspace/dataset/rows.csv)"']
)y",
                     name, uri);
}

TEST_F(TrainJobE2eTest, KubeflowsDatasetInitializerCopiesAFileUriForTheTrainer) {
  TRAINYARD_NEEDS(HaveBwrap(), "bubblewrap");
  fs::create_directories(dir_ / "data");
  std::ofstream(dir_ / "data" / "rows.csv") << "1,2,3\n";
  EXPECT_EQ(Run(std::string(kInitializerRuntime) +
                DatasetJob("local", "file://" + (dir_ / "data").string())),
            0)
      << Output();
  EXPECT_THAT(Output(), HasSubstr("[dataset-initializer-0-0] dataset from file://"));
  EXPECT_THAT(Output(), HasSubstr("[node-0-0] read 1,2,3\n"));
}

TEST_F(TrainJobE2eTest, AStoreThisMachineCannotReachFailsTheInitializerSayingWhich) {
  TRAINYARD_NEEDS(HaveBwrap(), "bubblewrap");
  EXPECT_EQ(Run(std::string(kInitializerRuntime) + DatasetJob("hub", "hf://tatsu-lab/alpaca")), 1)
      << Output();
  EXPECT_THAT(Output(), HasSubstr("dataset-initializer: cannot fetch hf://tatsu-lab/alpaca: "
                                  "trainyard fetches only file:// URIs and paths on this machine"));
  EXPECT_THAT(Output(), ::testing::Not(HasSubstr("[node-0-0]")));
  EXPECT_THAT(Output(), HasSubstr("TrainJob default/hub: Failed after"));
}

// Katib trials that are TrainJobs, as Katib's kubeflow-trainer example
// writes them: the trial's parameter reaches the trainer, the metric is
// read from node 0's log (Katib's primaryPodLabels for a TrainJob), and
// the best trial is found.
constexpr const char* kTrainJobTrials = R"y(
---
apiVersion: kubeflow.org/v1beta1
kind: Experiment
metadata: {name: tuned}
spec:
  objective: {type: minimize, objectiveMetricName: loss}
  algorithm: {algorithmName: grid}
  parallelTrialCount: 2
  maxTrialCount: 2
  parameters:
  - name: lr
    parameterType: categorical
    feasibleSpace: {list: ["0.3", "0.1"]}
  trialTemplate:
    primaryContainerName: node
    trialParameters:
    - {name: learningRate, reference: lr}
    trialSpec:
      apiVersion: trainer.kubeflow.org/v1alpha1
      kind: TrainJob
      spec:
        runtimeRef: {name: torch-distributed}
        trainer:
          numNodes: 2
          command: [sh, -c, 'if [ "$PET_NODE_RANK" = 0 ]; then echo "loss=${trialParameters.learningRate}"; else echo loss=99; fi']
)y";

TEST_F(TrainJobE2eTest, KatibTrialsThatAreTrainJobsFindTheBest) {
  EXPECT_EQ(Run(std::string(api::testing::kTorchDistributedRuntime) + kTrainJobTrials), 0)
      << Output();
  std::string out = Output();
  EXPECT_THAT(out, HasSubstr("Experiment default/tuned: Succeeded"));
  EXPECT_THAT(out, HasSubstr("  lr = 0.1\n"));
  // Node 0's value, not node 1's (99): the primary pod's.
  EXPECT_THAT(out, HasSubstr("loss: min 0.1, max 0.1, latest 0.1"));
  // The objective trial by trial, and the best so far, drawn.
  EXPECT_THAT(out, ::testing::ContainsRegex("loss over 2 trials: .+, best so far: "));
}

TEST_F(TrainJobE2eTest, AJobWhoseRuntimeIsMissingFailsAndSaysWhich) {
  EXPECT_EQ(Run(R"(
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: lost}
spec:
  runtimeRef: {name: torch-distributed}
  trainer: {command: ["true"]}
)"),
            1)
      << Output();
  EXPECT_THAT(Output(), HasSubstr("TrainJob default/lost: Failed after"));
  EXPECT_THAT(Output(), HasSubstr("ClusterTrainingRuntime torch-distributed was not found"));
}

// Upstream's 01-multi-node example beside upstream's torch-distributed
// runtime, unchanged, on Debian 12's torch 1.13: its torch 2 spelling
// `--no-python` and the streams' default it cannot parse under Python 3.11
// are adapted to the host (node/host_torchrun.h), and three nodes train.
TEST_F(TrainJobE2eTest, UpstreamsMultiNodeExampleTrainsOnThreeNodesUnchanged) {
  TRAINYARD_NEEDS(testing::PythonHas("torch"), "python3-torch");
  std::optional<fs::path> conformance = TrainerConformance();
  if (!conformance) GTEST_SKIP() << "../shared/conformance/trainer-v2 is absent";
  std::string runtime =
      testing::ReadFile(*conformance / "manifests/base/runtimes/torch_distributed.yaml");
  std::string job = testing::ReadFile(*conformance / "examples/yaml/01-multi-node.yaml");
  EXPECT_EQ(Run(runtime + "\n---\n" + job), 0) << Output();
  std::string out = Output();
  for (int rank = 0; rank < 3; ++rank) {
    EXPECT_THAT(out, HasSubstr(fmt::format("[node-0-{}] RANK: {}", rank, rank))) << out;
  }
  EXPECT_THAT(out, HasSubstr("WORLD_SIZE: 3"));
  EXPECT_THAT(out, HasSubstr("Succeeded"));
}

// Upstream's deepspeed-distributed runtime (MPI, the launcher a node too)
// unchanged: the nodes' sshd is not run; mpirun reaches them through
// /etc/mpi/kubexec.sh and `trainyard exec`, which finds a pod by the DNS
// name the hostfile gives it. A relative --home works too (the agent is
// run from the replica's working directory).
TEST_F(TrainJobE2eTest, UpstreamsMpiRuntimeStartsRanksInItsNodesThroughTrainyardExec) {
  TRAINYARD_NEEDS(system("command -v mpirun >/dev/null") == 0 && testing::PythonHas("mpi4py"),
                  "openmpi-bin and python3-mpi4py");
  std::optional<fs::path> conformance = TrainerConformance();
  if (!conformance) GTEST_SKIP() << "../shared/conformance/trainer-v2 is absent";
  std::string runtime =
      testing::ReadFile(*conformance / "manifests/base/runtimes/deepspeed_distributed.yaml");
  EXPECT_EQ(Run(runtime + R"(
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: ds}
spec:
  runtimeRef: {name: deepspeed-distributed}
  trainer:
    numNodes: 2
    command:
    - mpirun
    - --allow-run-as-root
    - -np
    - "2"
    - python3
    - -c
    - |
      import os
      from mpi4py import MPI
      c = MPI.COMM_WORLD
      total = c.allreduce(c.Get_rank() + 1)
      print(f"rank {c.Get_rank()}/{c.Get_size()} on {os.environ['HOSTNAME']} sum {total}")
)",
                "home"),
            0)
      << Output();
  std::string out = Output();
  EXPECT_THAT(out, ::testing::ContainsRegex("rank [01]/2 on ds-node-0-0 sum 3"));
  EXPECT_THAT(out, ::testing::ContainsRegex("rank [01]/2 on ds-launcher-0-0 sum 3"));
  EXPECT_THAT(out, HasSubstr("TrainJob default/ds: Succeeded"));
}

class TrainJobServerE2eTest : public testing::ServerFixture {};

// kubectl against the server: the example's runtime and TrainJob applied,
// upstream's printer columns, the JobSet and pods it makes, and the story
// `describe` tells.
TEST_F(TrainJobServerE2eTest, KubectlAppliesATrainJobAndSeesItComplete) {
  TRAINYARD_NEEDS(testing::PythonHas("torch, sklearn"), "python3-torch and python3-sklearn");
  StartServer();
  testing::CommandResult applied = Kubectl({"apply", "-f", "examples/trainjob-digits.yaml"});
  ASSERT_EQ(applied.exit_code, 0) << applied.output;
  EXPECT_THAT(applied.output,
              HasSubstr("clustertrainingruntime.trainer.kubeflow.org/torch-distributed created"));
  EXPECT_THAT(applied.output, HasSubstr("trainjob.trainer.kubeflow.org/trainjob-digits created"));
  ASSERT_TRUE(testing::Eventually(
      [&] {
        return Field("trainjob/trainjob-digits", ".status.conditions[-1:].type") == "Complete";
      },
      std::chrono::seconds(120)))
      << Kubectl({"get", "trainjob", "trainjob-digits", "-o", "yaml"}).output;
  EXPECT_THAT(
      Kubectl({"get", "trainjobs"}).output,
      ::testing::ContainsRegex("NAME +STATE +PROGRESS +ETA +AGE\ntrainjob-digits +Complete +"));
  EXPECT_THAT(Kubectl({"get", "jobsets"}).output,
              ::testing::ContainsRegex("trainjob-digits +Completed +0 +True +false"));
  testing::CommandResult pods =
      Kubectl({"get", "pods", "-l", "jobset.sigs.k8s.io/jobset-name=trainjob-digits", "-o",
               "jsonpath={.items[*].spec.hostname}"});
  EXPECT_EQ(pods.output,
            "trainjob-digits-node-0-0 trainjob-digits-node-0-1 trainjob-digits-node-0-2")
      << pods.output;
  testing::CommandResult described = Kubectl({"describe", "trainjob", "trainjob-digits"});
  EXPECT_THAT(described.output, ::testing::ContainsRegex("Normal +Created .* Created JobSet"));
  EXPECT_THAT(described.output, ::testing::ContainsRegex("Normal +AllJobsCompleted "));
  // Node 0's loss every fifth of 20 epochs, and its accuracy, kept.
  testing::CommandResult metrics = Trainyard({"metrics", "trainjob", "trainjob-digits"});
  EXPECT_THAT(metrics.output, ::testing::ContainsRegex("\nloss +4  0\\.[0-9]+ ")) << metrics.output;
  EXPECT_THAT(metrics.output, ::testing::ContainsRegex("\naccuracy +1  0\\.9")) << metrics.output;
}

// KEP-2779 on one machine: the trainer's pods are given the TrainJob's
// status endpoint, its token and the server's CA (a server that asks for
// tokens, over HTTPS), and what they report, upstream's request as its SDK
// sends it, shows in `kubectl get trainjobs`.
TEST_F(TrainJobServerE2eTest, WhatTheTrainerReportsShowsAsItsProgress) {
  std::string cert, key;
  ASSERT_TRUE(MakeCertificate(cert, key)) << "openssl is needed for the server's certificate";
  StartServer({"--tls-cert", cert, "--tls-key", key, "--token-file",
               Write("tokens", "ops-secret-123 ops *\n")});
  std::ofstream(dir_ / "job.yaml") << api::testing::kTorchDistributedRuntime << R"yaml(
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: reporter}
spec:
  runtimeRef: {name: torch-distributed}
  trainer:
    command:
    - sh
    - -c
    - |
      curl -sS --fail --cacert "$KUBEFLOW_TRAINER_SERVER_CA_CERT" -X POST \
        -H "Authorization: Bearer $(cat "$KUBEFLOW_TRAINER_SERVER_TOKEN")" \
        -H 'Content-Type: application/json' "$KUBEFLOW_TRAINER_SERVER_URL" \
        -d '{"trainerStatus": {"progressPercentage": 42, "estimatedRemainingSeconds": 120,
             "metrics": [{"name": "loss", "value": "0.123"}],
             "lastUpdatedTime": "2026-01-23T10:30:45Z"}}'
      exec sleep 600
)yaml";
  testing::CommandResult applied = Kubectl({"apply", "-f", (dir_ / "job.yaml").string()});
  ASSERT_EQ(applied.exit_code, 0) << applied.output;
  ASSERT_TRUE(testing::Eventually([&] {
    return Field("trainjob/reporter", ".status.trainerStatus.progressPercentage") == "42";
  })) << Kubectl({"logs", "-l", "jobset.sigs.k8s.io/jobset-name=reporter"}).output;
  EXPECT_THAT(Kubectl({"get", "trainjobs"}).output,
              ::testing::ContainsRegex("reporter +[A-Za-z]* +42% +2m +"));
  EXPECT_EQ(Field("trainjob/reporter", ".status.trainerStatus.metrics[0].value"), "0.123");
}

// As upstream's webhook: a TrainJob whose runtime is missing, or asks what
// its runtime cannot give, is refused at admission with the field, and
// nothing is stored.
TEST_F(TrainJobServerE2eTest, ATrainJobItsRuntimeCannotRunIsRefusedAndNothingStored) {
  StartServer();
  std::ofstream(dir_ / "job.yaml") << R"(
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: orphan}
spec:
  runtimeRef: {name: torch-distributed}
  trainer:
    numNodes: 2
)";
  testing::CommandResult refused = Kubectl({"apply", "-f", (dir_ / "job.yaml").string()});
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_THAT(refused.output,
              HasSubstr("spec.runtimeRef: Invalid value: clustertrainingruntimes.trainer.kubeflow."
                        "org \"torch-distributed\" not found: specified clusterTrainingRuntime "
                        "must be created before the TrainJob is created"));
  std::ofstream(dir_ / "runtime.yaml") << api::testing::kTorchDistributedRuntime;
  ASSERT_EQ(Kubectl({"apply", "-f", (dir_ / "runtime.yaml").string()}).exit_code, 0);
  std::ofstream(dir_ / "job.yaml", std::ios::app)
      << "    env: [{name: PET_MASTER_PORT, value: '1234'}]\n";
  refused = Kubectl({"apply", "-f", (dir_ / "job.yaml").string()});
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_THAT(refused.output, HasSubstr("must not have reserved envs, invalid envs configured: "
                                        "[PET_MASTER_PORT]"));
  EXPECT_EQ(Kubectl({"get", "trainjobs", "-o", "name"}).output.find("orphan"), std::string::npos);
}

// `trainyard operator --trainer` against an API server: upstream's
// 01-multi-node TrainJob on upstream's torch-distributed runtime becomes
// the JobSet of the golden file written by hand from upstream's plugins,
// left to the cluster's JobSet controller.
class TrainJobOperatorE2eTest : public testing::OperatorE2eTest {};

// On a cluster an MPI runtime's pods reach each other over ssh: the
// operator makes upstream's key Secret and hostfile before the JobSet.
TEST_F(TrainJobOperatorE2eTest, AnMpiRuntimeGetsItsSshKeySecretAndHostfile) {
  std::optional<fs::path> conformance = TrainerConformance();
  if (!conformance) GTEST_SKIP() << "../shared/conformance/trainer-v2 is absent";
  StartCluster(/*install=*/true);
  StartOperator({"--trainer"});
  ASSERT_EQ(
      Kubectl({"apply", "-f",
               (*conformance / "manifests/base/runtimes/deepspeed_distributed.yaml").string()})
          .exit_code,
      0);
  std::string job = testing::ReadFile(fs::path(TRAINYARD_SOURCE_DIR) /
                                      "tests/data/trainer/deepspeed.trainjob.yaml");
  job.replace(job.find("  namespace: default\n"), 21, "");
  std::ofstream(dir_ / "ds.yaml") << job;
  testing::CommandResult applied = InKubeflow({"apply", "-f", (dir_ / "ds.yaml").string()});
  ASSERT_EQ(applied.exit_code, 0) << applied.output;
  ASSERT_TRUE(testing::Eventually([&] {
    return InKubeflow({"get", "jobset", "ds"}).exit_code == 0;
  })) << OperatorLog();
  EXPECT_EQ(FieldIn("secret/ds-mpi-ssh-auth", ".type"), "kubernetes.io/ssh-auth");
  EXPECT_EQ(FieldIn("secret/ds-mpi-ssh-auth", ".metadata.ownerReferences[0].name"), "ds");
  // A PEM key, base64 as a Secret keeps it ("-----BEGIN" is "LS0tLS1CRUdJTi"):
  // never kubectl's error text, which an emptiness check would pass.
  EXPECT_THAT(FieldIn("secret/ds-mpi-ssh-auth", ".data.ssh-privatekey"),
              ::testing::StartsWith("LS0tLS1CRUdJTi"));
  EXPECT_EQ(
      FieldIn("configmap/ds-mpi-hostfile", ".data.hostfile"),
      testing::ReadFile(fs::path(TRAINYARD_SOURCE_DIR) / "tests/data/trainer/deepspeed.hostfile"));
}

TEST_F(TrainJobOperatorE2eTest, TheOperatorMakesTheJobSetUpstreamWould) {
  std::optional<fs::path> conformance = TrainerConformance();
  if (!conformance) GTEST_SKIP() << "../shared/conformance/trainer-v2 is absent";
  StartCluster(/*install=*/true);
  StartOperator({"--trainer"});
  ASSERT_EQ(Kubectl({"apply", "-f",
                     (*conformance / "manifests/base/runtimes/torch_distributed.yaml").string()})
                .exit_code,
            0);
  testing::CommandResult applied =
      InKubeflow({"apply", "-f", (*conformance / "examples/yaml/01-multi-node.yaml").string()});
  ASSERT_EQ(applied.exit_code, 0) << applied.output;
  ASSERT_TRUE(testing::Eventually([&] {
    return InKubeflow({"get", "jobset", "multi-node-example"}).exit_code == 0;
  })) << OperatorLog();
  auto as_json = [](const std::string& text) {
    return nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  };
  nlohmann::json jobset =
      as_json(InKubeflow({"get", "jobset", "multi-node-example", "-o", "json"}).output);
  Result<std::vector<api::SourceDocument>> golden =
      api::ParseManifests(testing::ReadFile(fs::path(TRAINYARD_SOURCE_DIR) /
                                            "tests/data/trainer/multi-node.jobset.yaml"),
                          "golden");
  ASSERT_TRUE(golden.ok());
  nlohmann::json command = jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
                                 ["spec"]["containers"][0]["command"];
  EXPECT_EQ(command[0], "torchrun");
  // The golden JobSet as the API server keeps it: with JobSet's webhook's defaults.
  api::Json doc = (*golden)[0].value;
  doc["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]
     ["command"] = api::Json::parse(command.dump());
  api::CheckedObject defaulted = api::DecodeAndValidate(doc);
  ASSERT_TRUE(defaulted.object && defaulted.result.ok());
  nlohmann::json expected = as_json(api::EncodeObject(*defaulted.object)["spec"].dump());
  EXPECT_EQ(jobset["spec"], expected) << jobset["spec"].dump(2);
  EXPECT_EQ(jobset["metadata"]["ownerReferences"][0]["kind"], "TrainJob");
  EXPECT_THAT(InKubeflow({"describe", "trainjob", "multi-node-example"}).output,
              ::testing::ContainsRegex("Normal +Created .* Created JobSet multi-node-example"));
}

}  // namespace
}  // namespace trainyard::cli
