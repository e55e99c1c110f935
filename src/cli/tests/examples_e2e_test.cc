// Every example under examples/ run as a user runs it: the real binary,
// Debian's Python packages, real processes. Each one skips, with the
// package to install, when that package is missing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "common/tests/needs.h"
#include "common/tests/test_dir.h"
#include "runtime/local/process.h"

namespace trainyard::cli {
namespace {

namespace fs = std::filesystem;

bool PythonHas(const std::string& modules) {
  return system(("/usr/bin/python3 -c 'import " + modules + "' 2>/dev/null").c_str()) == 0;
}

class ExamplesE2eTest : public ::testing::Test {
 protected:
  void SetUp() override { home_ = FreshTestDir("trainyard-examples-e2e"); }
  void TearDown() override { fs::remove_all(home_); }

  // Runs examples/<manifest> from the source tree, as the README does, and
  // returns everything `trainyard run` printed; expects exit code 0.
  std::string RunExample(const std::string& manifest, std::vector<std::string> more = {},
                         const std::string& ended = "Succeeded after") {
    std::string source = TRAINYARD_SOURCE_DIR;
    // As the test's own user wherever the clone lives (one under /root is
    // out of nobody's reach); RunE2eTest covers a root run's nobody.
    std::vector<std::string> argv = {TRAINYARD_BINARY, "run",
                                     "--home",         (home_ / "home").string(),
                                     "--run-as",       std::to_string(geteuid())};
    for (std::string& arg : more)
      argv.push_back(arg.starts_with("examples/") ? source + "/" + arg : arg);
    argv.push_back(source + "/examples/" + manifest);
    Result<runtime::Process> p = runtime::Process::Start({.argv = argv,
                                                          .env = {{"PATH", "/usr/bin:/bin"}},
                                                          .working_dir = source,
                                                          .log_path = (home_ / "out").string()});
    EXPECT_TRUE(p.ok()) << p.status().ToString();
    if (!p.ok()) return "";
    std::optional<runtime::ExitStatus> status = p->WaitFor(std::chrono::seconds(300));
    EXPECT_TRUE(status.has_value()) << manifest << " did not finish in 300 s";
    std::ifstream in(home_ / "out");
    std::stringstream out;
    out << in.rdbuf();
    EXPECT_EQ(status ? status->exit_code : -1, 0) << out.str();
    EXPECT_THAT(out.str(), ::testing::HasSubstr(ended));
    return out.str();
  }

  fs::path home_;
};

// `line` printed by each of `replicas`, its prefix escaped for the regex.
void ExpectEachPrinted(const std::string& out, const std::vector<std::string>& replicas,
                       const std::string& line) {
  for (const std::string& replica : replicas) {
    EXPECT_THAT(out, ::testing::ContainsRegex("\\[" + replica + "\\] " + line)) << replica;
  }
}

// The README's main example: DistributedDataParallel over gloo, three ranks.
TEST_F(ExamplesE2eTest, PyTorchDdpReachesItsAccuracyAndRanksAgree) {
  TRAINYARD_NEEDS(PythonHas("torch, sklearn"), "python3-torch and python3-sklearn");
  std::string out = RunExample("pytorch-digits.yaml");
  ExpectEachPrinted(out, {"master-0", "worker-0", "worker-1"},
                    "test accuracy 0\\.9[0-9]+, weights [0-9a-f]+, all ranks agree");
}

// torchrun in each worker, meeting through c10d rendezvous on worker-0.
TEST_F(ExamplesE2eTest, ElasticTorchrunWorkersRendezvousAndAgree) {
  TRAINYARD_NEEDS(PythonHas("torch, sklearn"), "python3-torch and python3-sklearn");
  std::string out = RunExample("pytorch-elastic.yaml");
  ExpectEachPrinted(out, {"worker-0", "worker-1"}, "rank [01]/2 joined");
  ExpectEachPrinted(out, {"worker-0", "worker-1"},
                    "test accuracy 0\\.9[0-9]+, weights [0-9a-f]+, all ranks agree");
}

// Trainer v2: a TrainJob on the torch-distributed runtime, three nodes of
// torchrun meeting at node 0 (PET_MASTER_ADDR and PET_MASTER_PORT).
TEST_F(ExamplesE2eTest, TrainJobTrainsOnThreeTorchrunNodesAndRanksAgree) {
  TRAINYARD_NEEDS(PythonHas("torch, sklearn"), "python3-torch and python3-sklearn");
  std::string out = RunExample("trainjob-digits.yaml");
  ExpectEachPrinted(out, {"node-0-0", "node-0-1", "node-0-2"},
                    "rank [0-2]/3 joined 127\\.0\\.0\\.1:[0-9]+");
  ExpectEachPrinted(out, {"node-0-0", "node-0-1", "node-0-2"},
                    "test accuracy 0\\.9[0-9]+, weights [0-9a-f]+, all ranks agree");
  EXPECT_THAT(out, ::testing::HasSubstr("TrainJob default/trainjob-digits: Succeeded after"));
}

// Three xgboost workers, the Master among them, join the Master's tracker.
// Trainer's OptimizationJob: twelve TrainJobs, each told its parameters
// by KUBEFLOW_TRAINER_OPT_*, each read for the accuracy it prints; the
// best is named with its parameters.
TEST_F(ExamplesE2eTest, AnOptimizationJobTunesDigitsOverTrainJobsAndNamesTheBest) {
  TRAINYARD_NEEDS(PythonHas("sklearn"), "python3-sklearn");
  std::string out = RunExample("optimization-digits.yaml", {},
                               "OptimizationJob default/tune-digits: Complete (MaxTrialsReached)");
  EXPECT_THAT(out, ::testing::ContainsRegex("tune-digits-trial-11 +Succeeded"));
  EXPECT_THAT(out, ::testing::ContainsRegex("best trial: tune-digits-trial-[0-9]+\n  lr = "));
  // Random search over this space finds a model above 0.95 in 12 trials.
  std::smatch best;
  ASSERT_TRUE(std::regex_search(out, best, std::regex("\n  accuracy=(0\\.[0-9]+)")));
  EXPECT_GT(std::stod(best[1]), 0.95) << out;
  EXPECT_THAT(out, ::testing::Not(::testing::HasSubstr("[node-0-0] epoch=")))
      << "trials' output stays in their logs";
}

TEST_F(ExamplesE2eTest, XGBoostWorkersJoinOneTrackerAndAgree) {
  TRAINYARD_NEEDS(PythonHas("xgboost, sklearn"), "python3-xgboost and python3-sklearn");
  std::string out = RunExample("xgboost.yaml");
  ExpectEachPrinted(out, {"master-0", "worker-0", "worker-1"},
                    "rank [0-2]/3 joined the tracker at 127\\.0\\.0\\.1:[0-9]+");
  ExpectEachPrinted(out, {"master-0", "worker-0", "worker-1"},
                    "test accuracy 0\\.9[0-9]+, model [0-9a-f]+, world 3, all ranks agree");
}

// mpirun in the launcher starts one rank in each worker replica through
// /etc/mpi/kubexec.sh and `trainyard exec`: each rank carries its worker's
// HOSTNAME, which only that replica's environment has.
TEST_F(ExamplesE2eTest, MpiRanksRunInsideTheirWorkerReplicas) {
  TRAINYARD_NEEDS(system("command -v mpirun >/dev/null") == 0 && PythonHas("mpi4py"),
                  "openmpi-bin and python3-mpi4py");
  std::string out = RunExample("mpi.yaml");
  EXPECT_THAT(out, ::testing::HasSubstr("rank 0/2 in replica mpi-allreduce-worker-0: allreduce "
                                        "sum 3"));
  EXPECT_THAT(out, ::testing::HasSubstr("rank 1/2 in replica mpi-allreduce-worker-1: allreduce "
                                        "sum 3"));
  EXPECT_THAT(out, ::testing::HasSubstr(
                       "2 ranks in ['mpi-allreduce-worker-0', 'mpi-allreduce-worker-1']: ok"));
}

TEST_F(ExamplesE2eTest, TFConfigAddressesReachTheReplicasTheyName) {
  std::string out = RunExample("tfjob.yaml");
  ExpectEachPrinted(out, {"ps-0", "worker-0", "worker-1"},
                    "[a-z]+-[0-9]: TF_CONFIG names 3 replicas, reached all 2 peers");
}

// A batch/v1 Job, the shape of a Katib trial: its pod's output, and
// Complete reported as success.
TEST_F(ExamplesE2eTest, ABatchJobRunsToCompletion) {
  std::string out = RunExample("batch-job.yaml");
  EXPECT_THAT(out, ::testing::ContainsRegex("\\[[a-z0-9]{5}\\] accuracy=0\\.97"));
  EXPECT_THAT(out, ::testing::HasSubstr("Reached expected number of succeeded pods"));
}

// Two teams' queues in a cohort on a simulated two-node cluster: fair
// sharing admits team B's job before team A borrows more, team A's second
// job waits for room to lend, and every job still runs.
TEST_F(ExamplesE2eTest, QueuesShareASimulatedClusterFairly) {
  std::string out = RunExample(
      "scheduling/jobs.yaml",
      {"--nodes", "examples/scheduling/cluster.yaml", "examples/scheduling/queues.yaml"});
  EXPECT_THAT(out, ::testing::HasSubstr(
                       "train-a2: Waiting (ClusterQueue research-a: nvidia.com/gpu: needs 4, "
                       "cohort lab has 2 left to lend)"));
  for (const char* job : {"train-a1", "train-a2", "train-b1"}) {
    EXPECT_THAT(out,
                ::testing::HasSubstr(std::string("PyTorchJob default/") + job + ": Succeeded"));
  }
  // Each replica sees the two GPUs it was given. Which two depends on
  // what has finished when train-a2 is placed (bin-packing may put it
  // beside train-b1's last replica), so only their number is certain.
  ExpectEachPrinted(
      out, {"train-a1/master-0", "train-a1/worker-0", "train-a2/master-0", "train-a2/worker-0"},
      "train-a[12] rank=[01] gpus=[0-3],[0-3]\n");
  ExpectEachPrinted(out, {"train-b1/master-0", "train-b1/worker-0"},
                    "train-b1 rank=[01] gpus=[0-3]\n");
  EXPECT_LT(out.find("[train-b1/master-0]"), out.find("[train-a2/master-0]"))
      << "fair sharing lets team B go before team A borrows";
}

TEST_F(ExamplesE2eTest, JaxProcessesMeetTheirCoordinator) {
  std::string out = RunExample("jaxjob.yaml");
  ExpectEachPrinted(out, {"worker-0", "worker-1", "worker-2"},
                    "process [0-2]/3 met the coordinator at 127\\.0\\.0\\.1:[0-9]+");
}

}  // namespace
}  // namespace trainyard::cli
