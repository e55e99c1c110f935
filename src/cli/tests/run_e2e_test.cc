// `trainyard run` as a user runs it: the real binary, real processes.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "cli/tests/run_fixture.h"
#include "cli/tests/server_fixture.h"
#include "common/tests/needs.h"
#include "common/tests/test_dir.h"
#include "node/cgroups.h"
#include "runtime/local/process.h"

namespace trainyard::cli {
namespace {

namespace fs = std::filesystem;
using testing::JobExiting;
using testing::OneMaster;
using testing::RunE2eTest;

TEST_F(RunE2eTest, SucceedsWithPrefixedLogsAndASummary) {
  Write("job.yaml", JobExiting(0));
  EXPECT_EQ(Run({"job.yaml"}), 0);
  std::string out = Output();
  EXPECT_THAT(out, ::testing::HasSubstr("[master-0] master rank 0 of 3\n"));
  EXPECT_THAT(out, ::testing::HasSubstr("[worker-1] worker rank 2\n"));
  EXPECT_THAT(out, ::testing::HasSubstr("PyTorchJob default/hello: Succeeded after"));
  EXPECT_TRUE(fs::exists(dir_ / "home" / "runs"));
  // What the master wrote to its output folder is kept, and said where.
  std::smatch where;
  ASSERT_TRUE(std::regex_search(out, where, std::regex("\n  artifacts: (/\\S+)\n"))) << out;
  std::string saved;
  std::getline(std::ifstream(fs::path(where[1].str()) / "model.txt"), saved);
  EXPECT_EQ(saved, "saved");
}

// The master's init container prepares the data the master reads (its
// `fetch` script); a sidecar runs beside it and is stopped once it ends.
std::string PreparedJob(const std::string& fetch) {
  return OneMaster("prep", R"y(
              command: [sh, -c, 'cat /data/ready']
              volumeMounts: [{name: data, mountPath: /data}]
          volumes: [{name: data, emptyDir: {}}]
          initContainers:
            - {name: fetch, image: none, command: [sh, -c, ')y" +
                               fetch + R"y('], volumeMounts: [{name: data, mountPath: /data}]}
            - {name: logger, image: none, restartPolicy: Always, command: [sh, -c, 'trap "exit 0" TERM; while true; do sleep 0.05; done']})y");
}

TEST_F(RunE2eTest, InitContainersPrepareAndASidecarRunsBeside) {
  Write("job.yaml", PreparedJob("echo fetched; echo prepared > /data/ready"));
  EXPECT_EQ(Run({"job.yaml"}), 0) << Output();
  EXPECT_THAT(Output(), ::testing::HasSubstr("[master-0] prepared\n"));
  EXPECT_THAT(Output(), ::testing::HasSubstr("[master-0/fetch] fetched\n"));
  EXPECT_THAT(Output(), ::testing::HasSubstr("PyTorchJob default/prep: Succeeded"));
}

TEST_F(RunE2eTest, AFailingInitContainerFailsTheJobAndItsContainerNeverRuns) {
  Write("job.yaml", PreparedJob("echo no data; exit 4"));
  EXPECT_EQ(Run({"job.yaml"}), 1) << Output();
  EXPECT_THAT(Output(), ::testing::HasSubstr("PyTorchJob default/prep: Failed"));
  EXPECT_THAT(Output(), ::testing::Not(::testing::HasSubstr("cat: ")));
}

// Past its memory limit a replica is killed as on a cluster, and said to be.
TEST_F(RunE2eTest, AReplicaPastItsMemoryLimitIsOomKilled) {
  node::Cgroups cgroups = node::Cgroups::Detect();
  if (!cgroups.problem().empty())
    GTEST_SKIP() << "limits are not enforced here: " << cgroups.problem();
  Write("job.yaml", OneMaster("hog", R"(
              command: [sh, -c, 'echo loading; exec tail /dev/zero']
              resources: {limits: {memory: 64Mi}})"));
  EXPECT_EQ(Run({"job.yaml"}), 1) << Output();
  EXPECT_THAT(Output(), ::testing::HasSubstr("master-0 OOMKilled"));
  EXPECT_THAT(Output(), ::testing::HasSubstr("PyTorchJob default/hog: Failed"));
}

// A cluster's GPU manifest tried on a machine without GPUs.
TEST_F(RunE2eTest, WithoutGpusAGpuManifestRunsOnTheCpu) {
  Write("job.yaml", OneMaster("gpu", R"(
              command: [sh, -c, 'echo "gpus=[$CUDA_VISIBLE_DEVICES]"']
              env: [{name: CUDA_VISIBLE_DEVICES, value: "0,1"}]
              resources: {limits: {nvidia.com/gpu: 2}})"));
  EXPECT_EQ(Run({"--without-gpus", "job.yaml"}), 0) << Output();
  EXPECT_THAT(Output(), ::testing::HasSubstr("[master-0] gpus=[]\n"));
  EXPECT_THAT(Output(),
              ::testing::HasSubstr("warning: PyTorchJob gpu: --without-gpus: 2 GPUs dropped"));
  if (std::system("nvidia-smi -L >/dev/null 2>&1") == 0) return;  // this machine has GPUs
  EXPECT_EQ(Run({"job.yaml"}), 1) << Output();
  EXPECT_THAT(Output(), ::testing::HasSubstr("run it with --without-gpus"));
}

// A Secret reaches the replica three ways (secretKeyRef, envFrom, a secret
// volume); trainyard itself prints none of it, and keeps its state where
// only its user can read it.
TEST_F(RunE2eTest, ASecretReachesTheReplicaAndTrainyardNeverPrintsIt) {
  Write("job.yaml", R"(
apiVersion: v1
kind: Secret
metadata: {name: creds}
stringData: {token: hunter2}
---)" + OneMaster("secret", R"y(
              command: [sh, -c, 'test "$TOKEN" = hunter2 && test "$S3_token" = hunter2 && test "$(cat /etc/creds/token)" = hunter2 && echo secrets-ok']
              env: [{name: TOKEN, valueFrom: {secretKeyRef: {name: creds, key: token}}}]
              envFrom: [{prefix: S3_, secretRef: {name: creds}}]
              volumeMounts: [{name: creds, mountPath: /etc/creds, readOnly: true}]
          volumes: [{name: creds, secret: {secretName: creds}}])y"));
  EXPECT_EQ(Run({"job.yaml"}), 0) << Output();
  EXPECT_THAT(Output(), ::testing::HasSubstr("[master-0] secrets-ok\n"));
  EXPECT_THAT(Output(), ::testing::Not(::testing::HasSubstr("hunter2")));
  for (const auto& entry : fs::recursive_directory_iterator(dir_ / "home")) {
    if (entry.path().filename() != "state.db") continue;
    EXPECT_EQ(entry.status().permissions() & fs::perms::all,
              fs::perms::owner_read | fs::perms::owner_write);
  }
}

// The checkpoint-and-resume pattern: what a job writes to its claim is
// there for the next run's job, which resumes from it.
TEST_F(RunE2eTest, ACheckpointOnAClaimOutlivesItsRunAndIsResumedFrom) {
  Write("job.yaml", R"(
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: checkpoints}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
---)" + OneMaster("train", R"y(
              command: [sh, -c, 'if [ -e /ckpt/step ]; then echo "resumed from step $(cat /ckpt/step)"; else echo 100 > /ckpt/step && echo fresh; fi']
              volumeMounts: [{name: ckpt, mountPath: /ckpt}]
          volumes: [{name: ckpt, persistentVolumeClaim: {claimName: checkpoints}}])y"));
  EXPECT_EQ(Run({"job.yaml"}), 0) << Output();
  EXPECT_THAT(Output(), ::testing::HasSubstr("[master-0] fresh\n"));
  EXPECT_TRUE(fs::exists(dir_ / "home" / "claims" / "default" / "checkpoints" / "step"));
  EXPECT_EQ(Run({"job.yaml"}), 0) << Output();
  EXPECT_THAT(Output(), ::testing::HasSubstr("[master-0] resumed from step 100\n"));
}

// A script with hard-coded paths, of a job whose volumes are mounted at
// paths this machine does not have: a claim, an emptyDir, and a read-only
// ConfigMap.
std::string HardCodedPathsJob() {
  return R"(
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {greeting: hello}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: results}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
---)" + OneMaster("paths", R"y(
              workingDir: /trainyard-e2e/scratch
              command: [sh, -c]
              args:
                - |
                  cat /trainyard-e2e/config/greeting; echo
                  echo saved > /trainyard-e2e/results/out && cat /trainyard-e2e/results/out
                  echo here > local && cat /trainyard-e2e/scratch/local
                  if (echo changed > /trainyard-e2e/config/greeting) 2>/dev/null; then echo wrote-read-only; else echo read-only-refused; fi
                  echo "host $(hostname) at $(getent hosts $(hostname) | cut -d' ' -f1)"
                  echo "alias at $(getent hosts db | cut -d' ' -f1)"
              volumeMounts:
                - {name: config, mountPath: /trainyard-e2e/config}
                - {name: results, mountPath: /trainyard-e2e/results}
                - {name: scratch, mountPath: /trainyard-e2e/scratch}
          hostAliases: [{ip: 10.1.2.3, hostnames: [db]}]
          volumes:
            - {name: config, configMap: {name: settings}}
            - {name: results, persistentVolumeClaim: {claimName: results}}
            - {name: scratch, emptyDir: {}})y");
}

using testing::HaveBwrap;
using testing::ReadFile;

// Scripts with hard-coded paths run unchanged: in its sandbox the replica
// finds each volume at its very mountPath, read-only where a container
// would, and its pod's name as its host name, which resolves; nothing is
// made on the machine for it.
TEST_F(RunE2eTest, InASandboxVolumesAreAtTheirMountPathAndThePodNamesTheHost) {
  TRAINYARD_NEEDS(HaveBwrap(), "bubblewrap");
  Write("job.yaml", HardCodedPathsJob());
  EXPECT_EQ(Run({"job.yaml"}), 0) << Output();
  for (const char* line : {"hello", "saved", "here", "read-only-refused",
                           "host paths-master-0 at 127.0.0.1", "alias at 10.1.2.3"}) {
    EXPECT_THAT(Output(), ::testing::HasSubstr(std::string("[master-0] ") + line + "\n"));
  }
  EXPECT_EQ(ReadFile(dir_ / "home" / "claims" / "default" / "results" / "out"), "saved\n");
  EXPECT_FALSE(fs::exists("/trainyard-e2e")) << "a mount point was made on the machine";
  EXPECT_THAT(Output(), ::testing::Not(::testing::HasSubstr("path rewriting")));
}

// Without sandboxes the same script still runs, its paths rewritten to the
// volumes' folders; the run says so once, and that readOnly goes unheeded.
TEST_F(RunE2eTest, WithoutASandboxPathsAreRewrittenAndTheRunSaysSoOnce) {
  Write("job.yaml", HardCodedPathsJob());
  EXPECT_EQ(Run({"--no-sandbox", "job.yaml"}), 0) << Output();
  for (const char* line : {"hello", "saved", "here", "wrote-read-only"}) {
    EXPECT_THAT(Output(), ::testing::HasSubstr(std::string("[master-0] ") + line + "\n"));
  }
  std::string said = "replicas run without mount namespaces (--no-sandbox)";
  EXPECT_EQ(Output().find(said), Output().rfind(said)) << Output();
  EXPECT_THAT(Output(), ::testing::HasSubstr(said));
  EXPECT_EQ(ReadFile(dir_ / "home" / "claims" / "default" / "results" / "out"), "saved\n");
}

TEST_F(RunE2eTest, AFailedJobExitsOne) {
  Write("job.yaml", JobExiting(3));
  EXPECT_EQ(Run({"--logs=none", "job.yaml"}), 1);
  EXPECT_THAT(Output(), ::testing::HasSubstr("Failed after"));
  EXPECT_THAT(Output(), ::testing::Not(::testing::HasSubstr("[master-0]")));
}

// A job's Failed condition names the container failure that ended it.
TEST_F(RunE2eTest, AFailedJobSaysWhichContainerFailedAndHow) {
  Write("job.yaml", JobExiting(3));
  EXPECT_EQ(Run({"--logs=none", "job.yaml"}), 1);
  EXPECT_THAT(Output(), ::testing::HasSubstr("last failure: pod hello-master-0, container "
                                             "pytorch, exit code 3, Error: master rank 0 of 3"));
}

// A tuning run whose script path has a typo: every trial fails, and the
// run says why (the failing container's exit code and last output, from
// the trial's condition) and where the trial's log is.
TEST_F(RunE2eTest, AFailedTrialSaysWhyAndWhereItsLogIs) {
  Write("tune.yaml", R"(
apiVersion: kubeflow.org/v1beta1
kind: Experiment
metadata: {name: typo}
spec:
  objective: {type: maximize, objectiveMetricName: accuracy}
  algorithm: {algorithmName: random}
  maxTrialCount: 1
  parallelTrialCount: 1
  maxFailedTrialCount: 1
  parameters:
    - {name: lr, parameterType: double, feasibleSpace: {min: "0.01", max: "0.1"}}
  trialTemplate:
    primaryContainerName: training
    trialParameters: [{name: lr, reference: lr}]
    trialSpec:
      apiVersion: batch/v1
      kind: Job
      spec:
        backoffLimit: 0
        template:
          spec:
            restartPolicy: Never
            containers:
              - name: training
                image: none
                command: [sh, -c, 'echo "loading data"; cat trian.py', '${trialParameters.lr}']
)");
  EXPECT_EQ(Run({"tune.yaml"}), 1);
  std::string out = Output();
  EXPECT_THAT(out, ::testing::MatchesRegex(
                       "(.|\n)*first failed trial: typo-[a-z0-9]+: Trial has failed(.|\n)*"));
  EXPECT_THAT(out, ::testing::HasSubstr("exit code 1, Error: loading data | cat: trian.py: No "
                                        "such file or directory"));
  EXPECT_THAT(out, ::testing::MatchesRegex("(.|\n)*  its log: .*/logs/default/typo-[a-z0-9]+-"
                                           "[a-z0-9]+_training\\.log\n(.|\n)*"));
}

// Several jobs: a status line is printed when anything but the time
// changes, each summary gives its own job's time, -q prints no log, and
// Node objects beside the jobs are the simulated inventory (as --nodes).
TEST_F(RunE2eTest, SeveralJobsEachSayTheirOwnTimeAndNodesAreTheInventory) {
  std::string jobs;
  for (auto [name, seconds] : {std::pair{"quick", "0"}, std::pair{"slow", "2"}}) {
    jobs += fmt::format(R"(---
apiVersion: batch/v1
kind: Job
metadata: {{name: {}}}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{{name: c, image: none, command: [sh, -c, 'echo said by {}; sleep {}']}}]
)",
                        name, name, seconds);
  }
  Write("jobs.yaml", jobs + R"(---
apiVersion: v1
kind: Node
metadata: {name: node-a}
status: {allocatable: {cpu: "8", memory: 16Gi, pods: "110"}}
)");
  EXPECT_EQ(Run({"jobs.yaml"}), 0);
  std::string out = Output();
  EXPECT_THAT(out, ::testing::HasSubstr("a simulated inventory of 1 node from the manifests"));
  EXPECT_THAT(out, ::testing::ContainsRegex("Job default/quick: Succeeded after [01]\\.[0-9]s"));
  EXPECT_THAT(out, ::testing::ContainsRegex("Job default/slow: Succeeded after [2-9]\\.[0-9]s"));
  std::string previous;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    if (line.find(" | ") == std::string::npos) continue;  // a status line of both jobs
    std::string progress = line.substr(0, line.rfind(", "));
    EXPECT_NE(progress, previous) << "repeated when only the time changed:\n" << out;
    previous = progress;
  }
  fs::remove(dir_ / "out");
  EXPECT_EQ(Run({"-q", "jobs.yaml"}), 0);
  EXPECT_THAT(Output(), ::testing::Not(::testing::HasSubstr("said by")));
}

// A finished run's jobs are read back from its folder: their metrics and
// artifacts, as from a server.
TEST_F(RunE2eTest, AFinishedRunsMetricsAndArtifactsAreReadBackWithRun) {
  Write("job.yaml", R"(
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: kept}
spec:
  pytorchReplicaSpecs:
    Master:
      restartPolicy: Never
      template:
        spec:
          containers:
            - {name: pytorch, image: none, command: [sh, -c, 'echo loss=0.5; echo loss=0.25; echo w > $TRAINYARD_OUTPUT_DIR/model.txt']}
)");
  ASSERT_EQ(Run({"job.yaml"}), 0);
  std::smatch found;
  std::string out = Output();
  ASSERT_TRUE(std::regex_search(out, found, std::regex("state and logs: (\\S+)"))) << out;
  std::string run_dir = found[1];
  auto client = [&](std::vector<std::string> args) {
    std::vector<std::string> argv = {TRAINYARD_BINARY};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"--run", run_dir});
    fs::path log = dir_ / "client.out";
    fs::remove(log);
    Result<runtime::Process> p = runtime::Process::Start(
        {.argv = argv, .env = {{"PATH", "/usr/bin:/bin"}}, .log_path = log.string()});
    EXPECT_TRUE(p.ok());
    std::optional<runtime::ExitStatus> status = p->WaitFor(std::chrono::seconds(30));
    std::ifstream in(log);
    std::stringstream text;
    text << in.rdbuf();
    return std::pair{status ? status->exit_code : -1, text.str()};
  };
  auto [metrics_code, metrics] = client({"metrics", "pytorchjob", "kept"});
  EXPECT_EQ(metrics_code, 0) << metrics;
  EXPECT_THAT(metrics, ::testing::ContainsRegex("loss +2  0\\.25 "));
  auto [artifacts_code, artifacts] = client({"artifacts", "pytorchjob", "kept"});
  EXPECT_EQ(artifacts_code, 0) << artifacts;
  EXPECT_THAT(artifacts, ::testing::HasSubstr("model.txt"));
  auto [none_code, none] = client({"get", "pods"});
  EXPECT_EQ(none_code, 0) << none;
  EXPECT_THAT(none, ::testing::HasSubstr("kept-master-0"));
}

TEST_F(RunE2eTest, AnInvalidManifestRunsNothing) {
  Write("bad.yaml", "apiVersion: kubeflow.org/v1\nkind: JAXJob\nmetadata: {name: Bad}\nspec: {}\n");
  EXPECT_EQ(Run({"bad.yaml"}), 1);
  EXPECT_THAT(Output(), ::testing::HasSubstr("metadata.name: Invalid value: \"Bad\""));
  EXPECT_FALSE(fs::exists(dir_ / "home" / "runs"));
}

// A root trainyard's replicas run as nobody, which cannot read what root
// alone may, unless --run-as names root; a working directory nobody cannot
// reach, or an unknown user, is refused before anything runs.
TEST_F(RunE2eTest, AsRootReplicasRunAsNobodyUnlessToldOtherwise) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root, to run replicas as another user";
  Write("job.yaml", R"yaml(
apiVersion: batch/v1
kind: Job
metadata: {name: who}
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers:
        - {name: main, image: none, command: [sh, -c, 'echo "user $(id -un)"; head -c 1 /etc/shadow >/dev/null && echo read']}
)yaml");
  EXPECT_EQ(Run({"job.yaml"}), 1);
  EXPECT_THAT(Output(), ::testing::HasSubstr("replicas run as nobody, as trainyard is root"));
  EXPECT_THAT(Output(), ::testing::HasSubstr("user nobody"));
  EXPECT_THAT(Output(), ::testing::HasSubstr("Permission denied"));
  EXPECT_THAT(Output(), ::testing::Not(::testing::HasSubstr("] read")));

  fs::remove(dir_ / "out");  // appended to
  EXPECT_EQ(Run({"--run-as", "root", "job.yaml"}), 0);
  EXPECT_THAT(Output(), ::testing::HasSubstr("user root"));
  EXPECT_THAT(Output(), ::testing::HasSubstr("] read"));

  fs::remove(dir_ / "out");
  EXPECT_EQ(Run({"--run-as", "no-such-user-here", "job.yaml"}), 1);
  EXPECT_THAT(Output(), ::testing::HasSubstr("--run-as: "));
  EXPECT_THAT(Output(), ::testing::HasSubstr("no-such-user-here"));

  fs::remove(dir_ / "out");
  fs::create_directories(dir_ / "private");
  fs::permissions(dir_ / "private", fs::perms::owner_all);
  std::vector<std::string> argv = {TRAINYARD_BINARY,
                                   "run",
                                   "--home",
                                   (dir_ / "home").string(),
                                   "--root",
                                   "host",
                                   (dir_ / "job.yaml").string()};
  Result<runtime::Process> p = runtime::Process::Start({.argv = argv,
                                                        .env = {{"PATH", "/usr/bin:/bin"}},
                                                        .working_dir = (dir_ / "private").string(),
                                                        .log_path = (dir_ / "out").string()});
  ASSERT_TRUE(p.ok());
  std::optional<runtime::ExitStatus> status = p->WaitFor(std::chrono::seconds(60));
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->exit_code, 1);
  EXPECT_THAT(Output(), ::testing::HasSubstr("could not reach the working directory: nobody "
                                             "cannot pass through " +
                                             (dir_ / "private").string()));
  EXPECT_THAT(Output(), ::testing::Not(::testing::HasSubstr("user ")));
}

// On a machine with two GPUs (nvidia-smi stands in for the driver): the
// first job takes both, the second waits, saying for what, then runs.
TEST_F(RunE2eTest, AJobWaitsForGpusWithTheReasonShownThenRuns) {
  fs::create_directories(dir_ / "bin");
  Write("bin/nvidia-smi", "#!/bin/sh\necho '0, GPU-a, Fake'\necho '1, GPU-b, Fake'\n");
  fs::permissions(dir_ / "bin" / "nvidia-smi", fs::perms::owner_all);
  std::string job = R"(
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: NAME}
spec:
  pytorchReplicaSpecs:
    Master:
      template:
        spec:
          containers:
            - name: pytorch
              image: none
              command: [sh, -c, 'echo gpus=$CUDA_VISIBLE_DEVICES; while [ ! -e release ]; do sleep 0.05; done']
              resources: {limits: {nvidia.com/gpu: GPUS}}
)";
  auto make = [&](const std::string& name, const std::string& gpus) {
    std::string text = job;
    text.replace(text.find("NAME"), 4, name);
    text.replace(text.find("GPUS"), 4, gpus);
    return text;
  };
  Write("jobs.yaml", make("first", "2") + "---" + make("second", "1"));
  Result<runtime::Process> p = Start({"jobs.yaml"}, (dir_ / "bin").string() + ":/usr/bin:/bin");
  ASSERT_TRUE(p.ok());
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  const std::string waiting =
      "second: Waiting (0/1 nodes are available: 1 Insufficient nvidia.com/gpu)";
  while (Output().find(waiting) == std::string::npos &&
         std::chrono::steady_clock::now() < deadline) {
    p->WaitFor(std::chrono::milliseconds(50));
  }
  Write("release", "");
  std::optional<runtime::ExitStatus> status = p->WaitFor(std::chrono::seconds(30));
  ASSERT_TRUE(status.has_value());
  std::string out = Output();
  EXPECT_EQ(status->exit_code, 0) << out;
  EXPECT_THAT(out, ::testing::HasSubstr(waiting));
  EXPECT_THAT(out, ::testing::HasSubstr("[first/master-0] gpus=0,1"));
  EXPECT_THAT(out, ::testing::HasSubstr("[second/master-0] gpus=0"));
}

}  // namespace
}  // namespace trainyard::cli
