// Katib Experiments run as a user runs them: `trainyard run` with the real
// binary, real trial processes, metrics read from their output while they
// run, median early stopping, a goal, and the examples' tuning run.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "common/tests/needs.h"
#include "common/tests/test_dir.h"
#include "runtime/local/process.h"

namespace trainyard::cli {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// A trial: reports loss=(x-0.3)^2 + 1/step for 10 steps, 0.8 s apart, and
// journals each step as "x step".
constexpr char kTrialScript[] = R"(import sys, time
x, journal = float(sys.argv[1]), sys.argv[2]
for step in range(1, 11):
    print(f"step={step} loss={(x - 0.3) ** 2 + 1.0 / step:.6f}", flush=True)
    with open(journal, "a") as j:
        j.write(f"{sys.argv[1]} {step}\n")
    time.sleep(0.8)
)";

// An experiment that runs `command` once for each x in `xs`, in their
// order, `parallel` at a time (all when 0), with `spec` (objective,
// collector, early stopping) added.
std::string GridOverX(const std::string& name, const std::string& spec,
                      const std::vector<std::string>& xs, const std::string& command,
                      size_t parallel = 0) {
  std::string list;
  for (const std::string& x : xs) list += (list.empty() ? "\"" : ", \"") + x + "\"";
  return "apiVersion: kubeflow.org/v1beta1\nkind: Experiment\nmetadata: {name: " + name +
         "}\nspec:\n" + spec + R"(  algorithm: {algorithmName: grid}
  parallelTrialCount: )" +
         std::to_string(parallel == 0 ? xs.size() : parallel) + R"(
  maxTrialCount: )" +
         std::to_string(xs.size()) + R"(
  parameters:
    - name: x
      parameterType: categorical
      feasibleSpace: {list: [)" +
         list + R"(]}
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
          # python:3 names the image; the trials run this machine's python3.
          metadata: {annotations: {trainyard.dev/root: host}}
          spec:
            restartPolicy: Never
            containers:
              - name: trial
                image: python:3
                command: )" +
         command + "\n";
}

// Grid over a list, in its order: 0.9 and 0.85 first (two at a time), then
// 0.95, which is worse than both at every step and is stopped at step 3,
// then 0.3, which reaches the goal (its loss falls to 0.1), and 0.7, which
// still runs when the goal is reached and is killed.
std::string Experiment(const fs::path& dir) {
  return GridOverX("quad", R"(  objective: {type: minimize, goal: 0.105, objectiveMetricName: loss}
  earlyStopping:
    algorithmName: medianstop
    algorithmSettings:
      - {name: min_trials_required, value: "2"}
      - {name: start_step, value: "3"}
)",
                   {"0.9", "0.85", "0.95", "0.3", "0.7", "0.5"},
                   "[python3, " + (dir / "trial.py").string() + ", \"${trialParameters.x}\", " +
                       (dir / "journal").string() + "]",
                   2);
}

class TuningE2eTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = FreshTestDir("trainyard-tuning-e2e"); }
  void TearDown() override { fs::remove_all(dir_); }

  int Run(const std::vector<std::string>& args, const std::string& cwd, int timeout_s) {
    // As the test's own user wherever the clone lives (one under /root is
    // out of nobody's reach); RunE2eTest covers a root run's nobody.
    std::vector<std::string> argv = {TRAINYARD_BINARY, "run",
                                     "--home",         (dir_ / "home").string(),
                                     "--run-as",       std::to_string(geteuid())};
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
  // 0.95 is judged from its third report on: stopped within a step or two
  // more (0.8 s each, so that a loaded machine has time to act).
  EXPECT_GE(last_step["0.95"], 3);
  EXPECT_LE(last_step["0.95"], 5) << Read("journal");
  // 0.7 was running when the goal was reached: it was stopped, not finished.
  EXPECT_LT(last_step["0.7"], 10) << Read("journal");
}

// A trial that pushes its metrics, as the Push collector's users do; what
// it prints is not read (its "loss=99" would otherwise be the objective).
constexpr char kPushScript[] = R"(import json, os, sys, urllib.request
x = float(sys.argv[1])
def report(**metrics):
    request = urllib.request.Request(
        os.environ["TRAINYARD_METRICS_URL"], method="POST",
        data=json.dumps({"metrics": metrics}).encode(),
        headers={"Content-Type": "application/json",
                 "Authorization": "Bearer " + os.environ["TRAINYARD_METRICS_TOKEN"]})
    urllib.request.urlopen(request, timeout=10).read()
for step in range(1, 4):
    print("loss=99", flush=True)
    report(loss=(x - 0.3) ** 2 + 1.0 / step, step=step)
)";

TEST_F(TuningE2eTest, TrialsPushTheirMetrics) {
  std::ofstream(dir_ / "push.py") << kPushScript;
  std::ofstream(dir_ / "push.yaml")
      << GridOverX("pushed",
                   "  objective: {type: minimize, "
                   "objectiveMetricName: loss}\n"
                   "  metricsCollectorSpec: {collector: {kind: "
                   "Push}}\n",
                   {"0.1", "0.3", "0.6"}, R"([python3, push.py, "${trialParameters.x}"])");
  ASSERT_EQ(Run({"push.yaml"}, dir_.string(), 120), 0) << Read("out");
  std::string out = Read("out");
  EXPECT_THAT(out, HasSubstr("Experiment default/pushed: Succeeded"));
  EXPECT_THAT(out, HasSubstr("  x = 0.3\n"));
  // The latest pushed loss of x = 0.3 is 1/3; printed lines count for nothing.
  EXPECT_THAT(out, HasSubstr("loss: min 0.3333333333333333, max 1, latest 0.3333333333333333"));
  // No value of 99 anywhere (a trial's random name may hold "99").
  EXPECT_THAT(out, ::testing::Not(::testing::ContainsRegex(" 99[,\n ]")));
}

TEST_F(TuningE2eTest, TrialsWriteTensorFlowEventFiles) {
  std::ofstream(dir_ / "tfevents.yaml")
      << GridOverX("summaries", R"(  objective: {type: maximize, objectiveMetricName: accuracy}
  metricsCollectorSpec:
    source: {fileSystemPath: {path: /summaries/test, kind: Directory}}
    collector: {kind: TensorFlowEvent}
)",
                   {"0.1", "0.3"},
                   "[python3, " + std::string(TRAINYARD_SOURCE_DIR) +
                       R"(/tests/python/write_tfevents.py, "${trialParameters.x}", /summaries])");
  ASSERT_EQ(Run({"tfevents.yaml"}, dir_.string(), 120), 0) << Read("out");
  std::string out = Read("out");
  EXPECT_THAT(out, HasSubstr("Experiment default/summaries: Succeeded"));
  EXPECT_THAT(out, HasSubstr("  x = 0.3\n"));
  // Steps 1-3 under test/ (train/ is 0.5 lower): 0.9, 0.95, 0.96666...
  // as float32, printed as numpy prints them.
  EXPECT_THAT(out, HasSubstr("accuracy: min 0.9, max 0.96666664, latest 0.96666664"));
}

// A population member's stretch of training: gradient steps on (w - 3)^2
// from the checkpoint in its directory (w = 0 when there is none), the
// checkpoint written back with the trial's name and learning rate appended
// to its history, and its accuracy printed.
constexpr char kPbtScript[] = R"(import json, os, sys
lr, path = float(sys.argv[1]), os.path.join(sys.argv[2], "model.json")
state = {"w": 0.0, "steps": 0, "history": []}
if os.path.exists(path):
    with open(path) as f:
        state = json.load(f)
for _ in range(3):
    state["w"] -= lr * 2 * (state["w"] - 3)
    state["steps"] += 1
state["history"].append([os.environ["KATIB_TRIAL_NAME"], lr])
with open(path, "w") as f:
    json.dump(state, f)
print(f"Validation-accuracy={1 - abs(state['w'] - 3) / 3:.6f}", flush=True)
)";

constexpr char kPbtExperiment[] = R"(apiVersion: kubeflow.org/v1beta1
kind: Experiment
metadata: {name: pbt}
spec:
  objective: {type: maximize, objectiveMetricName: Validation-accuracy}
  algorithm:
    algorithmName: pbt
    algorithmSettings:
      - {name: suggestion_trial_dir, value: /var/log/katib/checkpoints/}
      - {name: n_population, value: "5"}
      - {name: truncation_threshold, value: "0.4"}
      - {name: random_state, value: "3"}
  parallelTrialCount: 5
  maxTrialCount: 15
  parameters:
    - name: lr
      parameterType: double
      feasibleSpace: {min: "0.01", max: "0.3", step: "0.01"}
  trialTemplate:
    primaryContainerName: training
    trialParameters:
      - {name: learningRate, reference: lr}
    trialSpec:
      apiVersion: batch/v1
      kind: Job
      spec:
        backoffLimit: 0
        template:
          metadata: {annotations: {trainyard.dev/root: host}}
          spec:
            restartPolicy: Never
            containers:
              - name: training
                image: python:3
                command: [python3, pbt.py, "${trialParameters.learningRate}",
                          /var/log/katib/checkpoints/]
)";

struct Checkpoint {
  double w = 0;
  int steps = 0;
  std::vector<std::string> lineage;  // trial names, oldest first
};

// Every trial directory of experiment `name` under a `trainyard run` home.
std::map<std::string, Checkpoint> Checkpoints(const fs::path& home, const std::string& name) {
  std::map<std::string, Checkpoint> out;
  for (const auto& run : fs::directory_iterator(home / "runs")) {
    fs::path dirs = run.path() / "trials" / "default" / name;
    if (!fs::is_directory(dirs)) continue;
    for (const auto& trial : fs::directory_iterator(dirs)) {
      std::ifstream in(trial.path() / "model.json");
      nlohmann::json model = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
      Checkpoint& c = out[trial.path().filename().string()];
      if (model.is_discarded()) continue;
      c.w = model.value("w", 0.0);
      c.steps = model.value("steps", 0);
      for (const auto& entry : model["history"]) c.lineage.push_back(entry[0].get<std::string>());
    }
  }
  return out;
}

TEST_F(TuningE2eTest, PopulationBasedTrainingContinuesTheBestCheckpoints) {
  std::ofstream(dir_ / "pbt.py") << kPbtScript;
  std::ofstream(dir_ / "pbt.yaml") << kPbtExperiment;
  ASSERT_EQ(Run({"pbt.yaml"}, dir_.string(), 120), 0) << Read("out");
  EXPECT_THAT(Read("out"),
              HasSubstr("Experiment default/pbt: Succeeded (ExperimentMaxTrialsReached)"));
  std::map<std::string, Checkpoint> trials = Checkpoints(dir_ / "home", "pbt");
  ASSERT_EQ(trials.size(), 15u) << Read("out");
  std::map<size_t, std::vector<std::string>> generations;  // by lineage length
  for (const auto& [trial, c] : trials) {
    ASSERT_FALSE(c.lineage.empty()) << trial << " wrote no checkpoint";
    // Each trial trained on from its parent's checkpoint: its own history
    // is its parent's plus itself, three steps a stretch.
    EXPECT_EQ(c.lineage.back(), trial);
    EXPECT_EQ(c.steps, 3 * static_cast<int>(c.lineage.size())) << trial;
    if (c.lineage.size() > 1) {
      const std::string& parent = c.lineage[c.lineage.size() - 2];
      ASSERT_TRUE(trials.contains(parent)) << trial << "'s parent " << parent;
      std::vector<std::string> expected = trials.at(parent).lineage;
      expected.push_back(trial);
      EXPECT_EQ(c.lineage, expected) << trial << " did not start from " << parent << "'s copy";
    }
    generations[c.lineage.size()].push_back(trial);
  }
  ASSERT_EQ(generations.size(), 3u);
  for (const auto& [length, members] : generations) EXPECT_EQ(members.size(), 5u) << length;
  // Truncation selection: the two worst of generation 0 were replaced by
  // copies of the two best, so generation 1 continues exactly three of
  // generation 0's members, none worse than its third best.
  auto distance = [&](const std::string& trial) { return std::abs(trials.at(trial).w - 3); };
  std::vector<std::string> first = generations[1];
  std::sort(first.begin(), first.end(),
            [&](const std::string& a, const std::string& b) { return distance(a) < distance(b); });
  std::set<std::string> parents;
  for (const std::string& child : generations[2]) parents.insert(trials.at(child).lineage[0]);
  EXPECT_EQ(parents.size(), 3u);
  for (const std::string& parent : parents) EXPECT_LE(distance(parent), distance(first[2]));
}

TEST_F(TuningE2eTest, TheDigitsExampleBeatsItsDefaults) {
  TRAINYARD_NEEDS(system("/usr/bin/python3 -c 'import sklearn' 2>/dev/null") == 0,
                  "python3-sklearn");
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

TEST_F(TuningE2eTest, ThePbtExampleTrainsOnFromItsParentsCheckpoints) {
  TRAINYARD_NEEDS(system("/usr/bin/python3 -c 'import torch, sklearn' 2>/dev/null") == 0,
                  "python3-torch and python3-sklearn");
  std::string source = TRAINYARD_SOURCE_DIR;
  ASSERT_EQ(Run({source + "/examples/tuning-pbt.yaml"}, source, 300), 0) << Read("out");
  std::string out = Read("out");
  EXPECT_THAT(out,
              HasSubstr("Experiment default/pbt-digits: Succeeded (ExperimentMaxTrialsReached)"));
  std::smatch best;
  ASSERT_TRUE(
      std::regex_search(out, best, std::regex("Validation-accuracy: min [0-9.]+, max ([0-9.]+)")))
      << out;
  EXPECT_GT(std::stod(best[1]), 0.95) << out;
  // Each generation trains two more epochs from its parent's checkpoint:
  // the third's trials' checkpoints say 6 epochs. (Their logs went with
  // their pods, as on Kubernetes.)
  std::string count = dir_.string() + "/third";
  std::string script =
      "import glob, sys, torch\n"
      "paths = glob.glob(sys.argv[1] + '/home/runs/*/trials/default/pbt-digits/*/checkpoint.pt')\n"
      "print(sum(torch.load(p)['epoch'] == 6 for p in paths))\n";
  std::ofstream(dir_ / "count.py") << script;
  ASSERT_EQ(system(("/usr/bin/python3 " + (dir_ / "count.py").string() + " " + dir_.string() +
                    " > " + count)
                       .c_str()),
            0);
  int third_generation = std::stoi(Read("third"));
  EXPECT_EQ(third_generation, 6) << out;
}

}  // namespace
}  // namespace trainyard::cli
