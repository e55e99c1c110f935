// `trainyard server` when things go wrong under it: a full disk refuses
// writes and recovers; killed with SIGKILL again and again while jobs run
// and restart, it loses nothing and runs no job twice.
#include <gmock/gmock.h>
#include <sys/mount.h>

#include <algorithm>

#include "cli/tests/server_fixture.h"
#include "cli/tests/server_jobs.h"

namespace trainyard::cli::testing {
namespace {

using ::testing::HasSubstr;

// The server's home on a small tmpfs, filled up while a replica runs.
class ServerFullDiskTest : public ServerFixture {
 protected:
  void TearDown() override {
    if (server_) server_->Stop(std::chrono::seconds(20));
    server_.reset();
    if (mounted_) umount2(home_.c_str(), MNT_DETACH);
    ServerFixture::TearDown();
  }
  // Writes until the file system refuses: the disk is full.
  void Fill() {
    std::ofstream filler(home_ / "filler");
    std::string megabyte(1 << 20, 'x');
    for (int i = 0; i < 64 && filler.write(megabyte.data(), megabyte.size()); ++i) {
    }
  }

  bool mounted_ = false;
};

// As kube-apiserver over a full etcd: a write gets 500 InternalError saying
// why, and nothing else stops (reads, the replica, the server) until there
// is room again.
TEST_F(ServerFullDiskTest, AFullDiskRefusesWritesKeepsServingAndRecovers) {
  fs::create_directories(home_);
  if (mount("tmpfs", home_.c_str(), "tmpfs", 0, "size=8m") != 0) {
    GTEST_SKIP() << "needs to mount a small tmpfs (root)";
  }
  mounted_ = true;
  StartServer();
  ASSERT_EQ(Kubectl({"apply", "-f", Write("sleeper.yaml", kSleeper)}).exit_code, 0);
  ASSERT_TRUE(
      Eventually([&] { return Field("pod/sleeper-master-0", ".status.phase") == "Running"; }));
  Fill();
  CommandResult refused = Kubectl({"create", "configmap", "refused", "--from-literal=a=b"});
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_THAT(refused.output, HasSubstr("the disk is full: nothing was written"));
  EXPECT_EQ(Field("pod/sleeper-master-0", ".status.phase"), "Running");
  fs::remove(home_ / "filler");
  CommandResult accepted = Kubectl({"create", "configmap", "accepted", "--from-literal=a=b"});
  EXPECT_EQ(accepted.exit_code, 0) << accepted.output;
  EXPECT_EQ(Kubectl({"get", "configmaps", "-o", "name"}).output, "configmap/accepted\n");
  EXPECT_EQ(Field("pod/sleeper-master-0", ".status.phase"), "Running");
}

// What each job ended as and logged: compared between a run without
// crashes and one whose server is killed again and again.
struct Outcome {
  std::string digits_state, counter_state;
  std::string restarts;  // of the masters (workers still running at the end are cleaned up)
  std::string digits_log, counter_log, counter_previous_log;
  bool operator==(const Outcome&) const = default;
};

void PrintTo(const Outcome& o, std::ostream* os) {
  *os << o.digits_state << " " << o.counter_state << " restarts " << o.restarts << "\n"
      << o.digits_log << o.counter_log << o.counter_previous_log;
}

class ServerCrashTest : public ServerFixture {
 protected:
  void Submit(const std::string& mark) {
    ASSERT_EQ(Kubectl({"apply", "-f", "examples/pytorch-digits.yaml"}).exit_code, 0);
    ASSERT_EQ(
        Kubectl({"apply", "-f", Write("counter.yaml", Format(kRestartingJob, mark))}).exit_code, 0);
  }
  bool BothFinished() {
    std::string states =
        Kubectl({"get", "pytorchjobs", "-o", "jsonpath={.items[*].status.conditions[-1:].type}"})
            .output;
    return states == "Succeeded Succeeded" || states.find("Failed") != std::string::npos;
  }
  Outcome Collect() {
    return {Field("pytorchjob/pytorch-digits", ".status.conditions[-1:].type"),
            Field("pytorchjob/counter", ".status.conditions[-1:].type"),
            Field("pod/counter-master-0", ".status.containerStatuses[0].restartCount") + " " +
                Field("pod/pytorch-digits-master-0", ".status.containerStatuses[0].restartCount"),
            WithoutPorts(Kubectl({"logs", "pytorch-digits-master-0"}).output),
            Kubectl({"logs", "counter-master-0"}).output,
            Kubectl({"logs", "counter-master-0", "--previous"}).output};
  }
};

TEST_F(ServerCrashTest, KilledAgainAndAgainItLosesNothing) {
  TRAINYARD_NEEDS(PythonHas("torch, sklearn"), "python3-torch and python3-sklearn");
  // Without crashes.
  StartServer();
  Submit((dir_ / "mark-reference").string());
  ASSERT_TRUE(Eventually([&] { return BothFinished(); }, std::chrono::seconds(120)));
  Outcome reference = Collect();
  EXPECT_EQ(reference.digits_state, "Succeeded");
  EXPECT_EQ(reference.counter_state, "Succeeded");
  EXPECT_EQ(reference.restarts, "1 0");
  EXPECT_THAT(reference.digits_log, HasSubstr("all ranks agree"));
  server_->Stop(std::chrono::seconds(20));
  server_.reset();
  fs::remove_all(home_);

  // The same jobs, the server killed at three moments: as the replicas
  // start, while they train and the counter restarts, and near the end.
  StartServer();
  Submit((dir_ / "mark-crash").string());
  auto master_log_has = [&](const std::string& text) {
    return ReadFile(home_ / "server/logs/default/pytorch-digits-master-0_pytorch.log").find(text) !=
           std::string::npos;
  };
  for (const char* moment : {"joined", "epoch=10", "epoch=25"}) {
    ASSERT_TRUE(Eventually([&] { return master_log_has(moment); }, std::chrono::seconds(120)))
        << moment;
    KillServer();
    StartServer();
  }
  ASSERT_TRUE(Eventually([&] { return BothFinished(); }, std::chrono::seconds(120)));
  EXPECT_EQ(Collect(), reference);
  // Its metrics, read across the crashes: every value once, none twice.
  CommandResult metrics = Trainyard({"metrics", "pytorchjob", "pytorch-digits"});
  EXPECT_THAT(metrics.output, ::testing::ContainsRegex("\nloss +6  ")) << metrics.output;
  EXPECT_THAT(metrics.output, ::testing::ContainsRegex("\nepoch +6  30 +5 +30 ")) << metrics.output;
  // A clean stop leaves nothing running; neither did the crashes.
  ASSERT_EQ(Kubectl({"delete", "pytorchjob", "--all"}).exit_code, 0);
  server_->Stop(std::chrono::seconds(20));
  server_.reset();
  EXPECT_EQ(ProcessesUnderHome(), 0);
}

// Batch Jobs that each append a line to their own file per run, and take
// a second, so that a crash finds them starting and running.
std::string RunOnceJobs(const fs::path& runs, int count) {
  std::string yaml;
  for (int i = 0; i < count; ++i) {
    std::string name = "once-" + std::to_string(i);
    yaml +=
        "---\napiVersion: batch/v1\nkind: Job\nmetadata: {name: " + name +
        "}\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n"
        "        - name: main\n          image: none\n          command: [sh, -c, 'echo ran >> " +
        (runs / name).string() + "; sleep 1']\n";
  }
  return yaml;
}

TEST_F(ServerCrashTest, KilledWhilePodsStartNoJobRunsTwiceAndNoReplicaIsLeft) {
  constexpr int kJobs = 30;
  fs::path runs = dir_ / "runs";
  fs::create_directories(runs);
  // The replicas are nobody's (a root server's): they may write here.
  fs::permissions(runs, fs::perms::all | fs::perms::sticky_bit);
  std::string manifest = Write("once.yaml", RunOnceJobs(runs, kJobs));
  auto runs_started = [&] {
    return std::distance(fs::directory_iterator(runs), fs::directory_iterator());
  };
  // Each round, kubectl creates the jobs one by one (those not there yet)
  // and the server is killed as soon as a replica more has started: while
  // pods are being created, bound and started.
  for (int round = 0; round < 5 && runs_started() < kJobs; ++round) {
    StartServer();
    auto before = runs_started();
    Result<runtime::Process> apply =
        StartKubectl({"apply", "-f", manifest}, dir_ / ("apply-" + std::to_string(round) + ".out"));
    ASSERT_TRUE(apply.ok()) << apply.status().ToString();
    ASSERT_TRUE(Eventually([&] { return runs_started() > before; })) << round;
    KillServer();
    apply->WaitFor(std::chrono::seconds(60));  // it fails, the server being gone
  }
  StartServer();
  CommandResult applied = Kubectl({"apply", "-f", manifest});
  ASSERT_EQ(applied.exit_code, 0) << applied.output;
  auto succeeded = [&] {
    std::string counts =
        Kubectl({"get", "jobs", "-o", "jsonpath={.items[*].status.succeeded}"}).output;
    return std::count(counts.begin(), counts.end(), '1') == kJobs;
  };
  ASSERT_TRUE(Eventually(succeeded, std::chrono::seconds(180)));
  for (int i = 0; i < kJobs; ++i) {
    std::string name = "once-" + std::to_string(i);
    EXPECT_EQ(ReadFile(runs / name), "ran\n") << name << " did not run exactly once";
  }
  // Every replica has ended: none of an unrecorded pod was left running.
  EXPECT_TRUE(Eventually([&] { return ProcessesUnderHome() == 0; }, std::chrono::seconds(30)))
      << ProcessesUnderHome() << " processes left";
}

}  // namespace
}  // namespace trainyard::cli::testing
