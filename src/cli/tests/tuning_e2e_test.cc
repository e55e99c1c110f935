// Katib Experiments run as a user runs them: `trainyard run` with the real
// binary, real trial processes, metrics read from their output while they
// run, median early stopping, a goal, and the examples' tuning run.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "common/tests/test_dir.h"
#include "runtime/local/process.h"

namespace trainyard::cli {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// A trial: reports loss=(x-0.3)^2 + 1/step for 10 steps, 0.4 s apart, and
// journals each step as "x step".
constexpr char kTrialScript[] = R"(import sys, time
x, journal = float(sys.argv[1]), sys.argv[2]
for step in range(1, 11):
    print(f"step={step} loss={(x - 0.3) ** 2 + 1.0 / step:.6f}", flush=True)
    with open(journal, "a") as j:
        j.write(f"{sys.argv[1]} {step}\n")
    time.sleep(0.4)
)";

// Grid over a list, in its order: 0.9 and 0.85 first (two at a time), then
// 0.95, which is worse than both at every step and is stopped at step 3,
// then 0.3, which reaches the goal (its loss falls to 0.1), and 0.7, which
// still runs when the goal is reached and is killed.
std::string Experiment(const fs::path& dir) {
  return R"(apiVersion: kubeflow.org/v1beta1
kind: Experiment
metadata: {name: quad}
spec:
  objective: {type: minimize, goal: 0.105, objectiveMetricName: loss}
  algorithm: {algorithmName: grid}
  earlyStopping:
    algorithmName: medianstop
    algorithmSettings:
      - {name: min_trials_required, value: "2"}
      - {name: start_step, value: "3"}
  parallelTrialCount: 2
  maxTrialCount: 6
  parameters:
    - name: x
      parameterType: categorical
      feasibleSpace: {list: ["0.9", "0.85", "0.95", "0.3", "0.7", "0.5"]}
  trialTemplate:
    primaryContainerName: trial
    trialParameters:
      - {name: x, reference: x}
    trialSpec:
      apiVersion: batch/v1
      kind: Job
      spec:
        backoffLimit: 0
        template:
          spec:
            restartPolicy: Never
            containers:
              - name: trial
                image: python:3
                command: [python3, )" +
         (dir / "trial.py").string() + ", \"${trialParameters.x}\", " + (dir / "journal").string() +
         R"(]
)";
}

class TuningE2eTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = FreshTestDir("trainyard-tuning-e2e"); }
  void TearDown() override { fs::remove_all(dir_); }

  int Run(const std::vector<std::string>& args, const std::string& cwd, int timeout_s) {
    std::vector<std::string> argv = {TRAINYARD_BINARY, "run", "--home", (dir_ / "home").string()};
    argv.insert(argv.end(), args.begin(), args.end());
    Result<runtime::Process> p = runtime::Process::Start({.argv = argv,
                                                          .env = {{"PATH", "/usr/bin:/bin"}},
                                                          .working_dir = cwd,
                                                          .log_path = (dir_ / "out").string()});
    EXPECT_TRUE(p.ok()) << p.status().ToString();
    if (!p.ok()) return -1;
    std::optional<runtime::ExitStatus> status = p->WaitFor(std::chrono::seconds(timeout_s));
    EXPECT_TRUE(status.has_value()) << "did not finish in " << timeout_s << " s";
    return status ? status->exit_code : -1;
  }
  std::string Read(const std::string& name) {
    std::ifstream in(dir_ / name);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  fs::path dir_;
};

TEST_F(TuningE2eTest, ParallelTrialsEarlyStoppingAndAGoal) {
  std::ofstream(dir_ / "trial.py") << kTrialScript;
  std::ofstream(dir_ / "quad.yaml") << Experiment(dir_);
  ASSERT_EQ(Run({(dir_ / "quad.yaml").string()}, dir_.string(), 120), 0) << Read("out");
  std::string out = Read("out");
  EXPECT_THAT(out, HasSubstr("Experiment default/quad: Succeeded (ExperimentGoalReached)"));
  EXPECT_THAT(out, HasSubstr("  x = 0.3\n"));
  EXPECT_THAT(out, ::testing::ContainsRegex("quad-[a-z0-9]{8} +EarlyStopped +0.95 "));

  std::map<std::string, int> last_step;  // per x
  int started_before_first_end = 0;
  bool ended = false;
  std::istringstream journal(Read("journal"));
  for (std::string x; journal >> x;) {
    int step = 0;
    journal >> step;
    if (step == 1 && !ended) ++started_before_first_end;
    if (step == 10) ended = true;
    last_step[x] = std::max(last_step[x], step);
  }
  // The first two trials ran side by side.
  EXPECT_EQ(started_before_first_end, 2) << Read("journal");
  EXPECT_EQ(last_step["0.9"], 10);
  EXPECT_EQ(last_step["0.3"], 10);
  // 0.95 is judged from its third report on: stopped within one more.
  EXPECT_GE(last_step["0.95"], 3);
  EXPECT_LE(last_step["0.95"], 4) << Read("journal");
  // 0.7 was running when the goal was reached: it was stopped, not finished.
  EXPECT_LT(last_step["0.7"], 10) << Read("journal");
}

TEST_F(TuningE2eTest, TheDigitsExampleBeatsItsDefaults) {
  if (system("/usr/bin/python3 -c 'import sklearn' 2>/dev/null") != 0) {
    GTEST_SKIP() << "python3-sklearn is not installed (apt install python3-sklearn)";
  }
  std::string source = TRAINYARD_SOURCE_DIR;
  ASSERT_EQ(Run({source + "/examples/tuning-digits.yaml"}, source, 300), 0) << Read("out");
  std::string out = Read("out");
  EXPECT_THAT(out, HasSubstr("Experiment default/tune-digits: Succeeded"));
  // scikit-learn's defaults reach 0.9178 after the script's 12 epochs.
  std::smatch best;
  ASSERT_TRUE(std::regex_search(out, best, std::regex("accuracy: min [0-9.]+, max ([0-9.]+)")))
      << out;
  EXPECT_GT(std::stod(best[1]), 0.95) << out;
}

}  // namespace
}  // namespace trainyard::cli
