// The node agent with real processes (sh and coreutils) and an in-memory
// store; the fake clock only drives restart back-off.
#include "node/node_agent.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/tests/test_dir.h"
#include "node/tests/node_agent_fixture.h"
#include "store/sqlite_store.h"
#include "store/tests/counting_store.h"

namespace trainyard::node {
namespace {

using testing::EndsWithin;
using testing::NodeAgentTest;
namespace fs = std::filesystem;

TEST_F(NodeAgentTest, RunsAPodToSuccessAndLogsIt) {
  AddPod("ok", "echo rank $RANK on $HOSTNAME", "Never");
  ASSERT_TRUE(SyncUntil([&] { return PhaseIs("ok", "Succeeded"); }));
  api::Pod pod = Pod("ok");
  const api::ContainerStatus& c = pod.status.container_statuses.at(0);
  EXPECT_EQ(c.state.terminated->exit_code, 0);
  EXPECT_EQ(c.state.terminated->reason, "Completed");
  EXPECT_EQ(pod.status.pod_ip, "127.0.0.1");
  EXPECT_FALSE(pod.status.start_time.empty());
  EXPECT_EQ(Log("ok"), "rank 3 on ok\n");
  EXPECT_EQ(agent_->running(), 0u);
}

TEST_F(NodeAgentTest, APodThatCannotBeDecodedStopsNoOther) {
  ASSERT_TRUE(store_
                  ->Create({{"apiVersion", "v1"},
                            {"kind", "Pod"},
                            {"metadata", {{"name", "broken"}, {"namespace", "default"}}},
                            {"spec", {{"containers", "not a list"}}}})
                  .ok());
  AddPod("fine", "exit 0", "Never");
  ASSERT_TRUE(SyncUntil([&] { return PhaseIs("fine", "Succeeded"); }));
}

TEST_F(NodeAgentTest, NeverRestartsAFailure) {
  AddPod("bad", "exit 3", "Never");
  ASSERT_TRUE(SyncUntil([&] { return PhaseIs("bad", "Failed"); }));
  api::Pod pod = Pod("bad");
  const api::ContainerStatus& c = pod.status.container_statuses.at(0);
  EXPECT_EQ(c.state.terminated->exit_code, 3);
  EXPECT_EQ(c.state.terminated->reason, "Error");
  EXPECT_EQ(c.restart_count, 0);
}

TEST_F(NodeAgentTest, OnFailureRestartsInPlaceAfterBackoff) {
  // Fails the first time, succeeds the second.
  AddPod("flaky", "if [ -e tried ]; then exit 0; else touch tried; exit 1; fi", "OnFailure");
  ASSERT_TRUE(SyncUntil([&] {
    std::vector<api::ContainerStatus> s = Pod("flaky").status.container_statuses;
    return !s.empty() && s[0].state.waiting.has_value();
  }));
  api::Pod waiting = Pod("flaky");
  EXPECT_EQ(waiting.status.phase, "Running");
  EXPECT_EQ(waiting.status.container_statuses[0].state.waiting->reason, "CrashLoopBackOff");
  EXPECT_EQ(waiting.status.container_statuses[0].last_state.terminated->exit_code, 1);
  Result<std::optional<Duration>> next = agent_->Sync();  // not yet: the back-off holds
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(**next, std::chrono::seconds(1));
  clock_.Advance(std::chrono::seconds(1));
  ASSERT_TRUE(SyncUntil([&] { return PhaseIs("flaky", "Succeeded"); }));
  EXPECT_EQ(Pod("flaky").status.container_statuses[0].restart_count, 1);
}

// A pod's activeDeadlineSeconds, counted from its start, as the kubelet
// keeps it: past it, what runs is stopped and the pod Failed, with the
// kubelet's reason; nothing restarts it.
TEST_F(NodeAgentTest, APodPastItsActiveDeadlineIsStoppedAndFailed) {
  AddPod("bounded", "touch ready; exec sleep 1000", "OnFailure", {},
         [](api::Pod& pod) { pod.spec.extra["activeDeadlineSeconds"] = 30; });
  ASSERT_TRUE(SyncUntil([&] { return fs::exists(dir_ / "ready"); }));
  Result<std::optional<Duration>> next = agent_->Sync();
  ASSERT_TRUE(next.ok());
  ASSERT_TRUE(next->has_value());
  EXPECT_LE(**next, std::chrono::seconds(30));  // woken at the deadline
  EXPECT_EQ(Pod("bounded").status.phase, "Running");
  clock_.Advance(std::chrono::seconds(30));
  ASSERT_TRUE(SyncUntil([&] { return PhaseIs("bounded", "Failed"); }));
  api::Pod pod = Pod("bounded");
  EXPECT_EQ(pod.status.reason, "DeadlineExceeded");
  EXPECT_EQ(pod.status.message, "Pod was active on the node longer than the specified deadline");
  EXPECT_EQ(pod.status.container_statuses[0].restart_count, 0);
  EXPECT_EQ(agent_->running(), 0);
}

TEST_F(NodeAgentTest, AProgramThatCannotStartIsAStartError) {
  AddPod("missing", "", "Never", {"no-such-program-xyz"});
  ASSERT_TRUE(SyncUntil([&] { return PhaseIs("missing", "Failed"); }));
  api::Pod pod = Pod("missing");
  const auto& t = *pod.status.container_statuses[0].state.terminated;
  EXPECT_EQ(t.exit_code, 128);
  EXPECT_EQ(t.reason, "StartError");
  EXPECT_EQ(t.message, "no-such-program-xyz: not found in PATH=/usr/bin:/bin");
}

// On a server, a container whose Secret is not there yet waits for it, as
// the kubelet's CreateContainerConfigError, and starts once it comes: the
// pod Pending meanwhile, no restart counted, said once.
TEST_F(NodeAgentTest, AContainerWaitsForItsSecretAndStartsOnceItComes) {
  agent_ = MakeAgent("", nullptr, /*wait_for_config=*/true);
  AddPod("reader", "test \"$TOKEN\" = hunter2", "Never", {}, [](api::Pod& pod) {
    api::EnvVarSource from;
    from.secret_key_ref = api::KeySelector{.name = "creds", .key = "token"};
    pod.spec.containers[0].env.push_back({.name = "TOKEN", .value_from = from});
  });
  ASSERT_TRUE(SyncUntil([&] {
    std::vector<api::ContainerStatus> s = Pod("reader").status.container_statuses;
    return !s.empty() && s[0].state.waiting &&
           s[0].state.waiting->reason == "CreateContainerConfigError";
  }));
  api::Pod waiting = Pod("reader");
  EXPECT_EQ(waiting.status.phase, "Pending");
  EXPECT_EQ(waiting.status.container_statuses[0].state.waiting->message, "Secret creds not found");
  clock_.Advance(std::chrono::seconds(1));
  ASSERT_TRUE(agent_->Sync().ok());  // tried again, still missing: said once
  ASSERT_TRUE(store_
                  ->Create({{"apiVersion", "v1"},
                            {"kind", "Secret"},
                            {"metadata", {{"name", "creds"}, {"namespace", "default"}}},
                            {"data", {{"token", "aHVudGVyMg=="}}}})
                  .ok());
  clock_.Advance(std::chrono::seconds(2));
  ASSERT_TRUE(SyncUntil([&] { return PhaseIs("reader", "Succeeded"); }));
  EXPECT_EQ(Pod("reader").status.container_statuses[0].restart_count, 0);
  int failed = 0;
  store::ObjectReader::ListResult events = *store_->List("Event", "default");
  for (const api::Json& e : events.items) {
    failed +=
        api::StringAt(e, "reason") == "Failed" ? static_cast<int>(api::IntAt(e, {"count"})) : 0;
  }
  EXPECT_EQ(failed, 1);
}

TEST_F(NodeAgentTest, ExponentialExpansionIsAStartErrorNamingTheVariable) {
  AddPod("bomb", "exit 0", "Never", {}, [](api::Pod& pod) {
    auto& env = pod.spec.containers[0].env;
    env.push_back({.name = "V0", .value = "xx"});
    for (int i = 1; i < 40; ++i)
      env.push_back({.name = fmt::format("V{}", i), .value = fmt::format("$(V{0})$(V{0})", i - 1)});
  });
  ASSERT_TRUE(SyncUntil([&] { return PhaseIs("bomb", "Failed"); }));
  api::Pod pod = Pod("bomb");
  const auto& t = *pod.status.container_statuses[0].state.terminated;
  EXPECT_EQ(t.reason, "StartError");
  EXPECT_THAT(t.message, ::testing::StartsWith("env V17: the expanded value is longer than"));
}

// Mount paths translated can grow a bounded argv past the bound: a short
// mount path stands for a long host path many times over.
TEST_F(NodeAgentTest, TranslationIsBoundedTooAndNamesTheArgument) {
  std::string script;
  for (int i = 0; i < 40000; ++i) script += "/d ";  // 120 KB, within the bound
  AddPod("amplified", script, "Never", {}, [](api::Pod& pod) {
    pod.spec.volumes.push_back({.name = "d", .empty_dir = api::EmptyDirVolumeSource{}});
    pod.spec.containers[0].volume_mounts.push_back({.name = "d", .mount_path = "/d"});
  });
  ASSERT_TRUE(SyncUntil([&] { return PhaseIs("amplified", "Failed"); }));
  api::Pod pod = Pod("amplified");
  const auto& t = *pod.status.container_statuses[0].state.terminated;
  EXPECT_EQ(t.reason, "StartError");
  EXPECT_THAT(t.message, ::testing::StartsWith("argv[2]: with its mount paths translated"));
}

TEST_F(NodeAgentTest, DeletingAPodStopsItsProcess) {
  // `$$$$`: Kubernetes' expansion of command and args turns `$$` into `$`.
  AddPod("long", "echo $$$$ > pid; exec sleep 1000", "Never");
  pid_t pid = WrittenPid("pid");
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(store_->Delete({"Pod", "default", "long"}).ok());
  ASSERT_TRUE(SyncUntil([&] { return agent_->running() == 0; }));
  EXPECT_NE(kill(pid, 0), 0);
}

// Deleted, a pod's replica gets SIGTERM and all of its pod's
// terminationGracePeriodSeconds (not a fixed 30 s) before SIGKILL.
TEST_F(NodeAgentTest, ADeletedPodGetsItsOwnGracePeriod) {
  auto grace = [](int64_t seconds) {
    return [seconds](api::Pod& pod) { pod.spec.termination_grace_period_seconds = seconds; };
  };
  // Saves a checkpoint on SIGTERM, which takes until the test says `go`.
  AddPod("saver",
         "trap 'touch saving; while [ ! -e go ]; do sleep 0.05; done; echo saved > ckpt; exit 0' "
         "TERM; touch ready; sleep 1000 & wait",
         "Never", {}, grace(60));
  ASSERT_TRUE(SyncUntil([&] { return fs::exists(dir_ / "ready"); }));
  ASSERT_TRUE(store_->Delete({"Pod", "default", "saver"}).ok());
  ASSERT_TRUE(SyncUntil([&] { return fs::exists(dir_ / "saving"); }));
  clock_.Advance(std::chrono::seconds(59));  // past Kubernetes' default, within its own
  ASSERT_TRUE(agent_->Sync().ok());
  std::ofstream(dir_ / "go").close();
  ASSERT_TRUE(SyncUntil([&] { return agent_->running() == 0; }));
  EXPECT_TRUE(fs::exists(dir_ / "ckpt")) << "killed before its grace period ended";

  // Ignoring SIGTERM: killed once its own grace period is over, at once
  // for 0.
  AddPod("deaf-0", "trap '' TERM; touch ready-0; sleep 1000", "Never", {}, grace(0));
  AddPod("deaf-1", "trap '' TERM; touch ready-1; sleep 1000", "Never", {}, grace(1));
  ASSERT_TRUE(
      SyncUntil([&] { return fs::exists(dir_ / "ready-0") && fs::exists(dir_ / "ready-1"); }));
  ASSERT_TRUE(store_->Delete({"Pod", "default", "deaf-0"}).ok());
  ASSERT_TRUE(store_->Delete({"Pod", "default", "deaf-1"}).ok());
  ASSERT_TRUE(SyncUntil([&] { return agent_->running() == 1; }));
  Result<std::optional<Duration>> next = agent_->Sync();
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(**next, std::chrono::seconds(1));  // deaf-1's SIGKILL
  clock_.Advance(std::chrono::seconds(1));
  ASSERT_TRUE(SyncUntil([&] { return agent_->running() == 0; }));
}

// `kubectl delete --grace-period`: the grace period in the pod's last state
// (metadata.deletionGracePeriodSeconds) replaces its own.
TEST_F(NodeAgentTest, ADeletesGracePeriodReplacesThePodsOwn) {
  auto slow = [](api::Pod& pod) { pod.spec.termination_grace_period_seconds = 600; };
  AddPod("deaf", "trap '' TERM; echo $$$$ >> pids; sleep 1000", "Never", {}, slow);
  pid_t first = 0;
  ASSERT_TRUE(SyncUntil([&] {
    std::ifstream(dir_ / "pids") >> first;
    return first > 0;
  }));
  Result<api::Json> pod = store_->Get({"Pod", "default", "deaf"});
  ASSERT_TRUE(pod.ok());
  (*pod)["metadata"]["deletionGracePeriodSeconds"] = 0;
  ASSERT_TRUE(store_->Update(*pod).ok());
  ASSERT_TRUE(store_->Delete({"Pod", "default", "deaf"}).ok());
  // At once a pod of the same name takes its place, as a job's controller
  // makes one: the old replica still has only its delete's grace. No time
  // passes on the fake clock, so only a grace of 0 ends it.
  AddPod("deaf", "sleep 1000", "Never", {}, slow);
  EXPECT_TRUE(SyncUntil([&] { return kill(first, 0) != 0; })) << "the pod's own 600 s were used";
}

// Stopping everything (`trainyard run` interrupted, the server stopping)
// gives each replica its pod's grace period too.
TEST_F(NodeAgentTest, StopAllGivesEachPodItsGracePeriod) {
  auto grace = [](int64_t seconds) {
    return [seconds](api::Pod& pod) { pod.spec.termination_grace_period_seconds = seconds; };
  };
  AddPod("deaf", "trap '' TERM; touch ready-0; sleep 1000", "Never", {}, grace(0));
  ASSERT_TRUE(SyncUntil([&] { return fs::exists(dir_ / "ready-0"); }));
  auto start = std::chrono::steady_clock::now();
  agent_->StopAll();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5)) << "not prompt";
  EXPECT_EQ(agent_->running(), 0u);

  // Two seconds to save a checkpoint, within 30 s (the default grace).
  AddPod("saver", "trap 'sleep 2; echo saved > ckpt; exit 0' TERM; touch ready; sleep 1000 & wait",
         "Never");
  ASSERT_TRUE(SyncUntil([&] { return fs::exists(dir_ / "ready"); }));
  agent_->StopAll();
  EXPECT_TRUE(fs::exists(dir_ / "ckpt")) << "killed before its grace period ended";
  EXPECT_EQ(agent_->running(), 0u);
}

// Everything a replica started ends with it under the shim, daemons that
// left its process group included: when the pod ends, and when it is
// deleted.
TEST_F(NodeAgentTest, NothingAReplicaStartedOutlivesItsPod) {
  agent_ = std::make_unique<NodeAgent>(NodeAgentOptions{.store = store_.get(),
                                                        .clock = &clock_,
                                                        .logs_dir = (dir_ / "logs").string(),
                                                        .pods_dir = (dir_ / "pods").string(),
                                                        .default_working_dir = dir_.string(),
                                                        .base_env = {{"PATH", "/usr/bin:/bin"}},
                                                        .shim = TRAINYARD_SHIM});
  auto daemons = [](const std::string& file, const std::string& then) {
    return "setsid sleep 1000 & echo $! > " + file + "; setsid sh -c 'sleep 1000 & echo $! >> " +
           file + "'; touch " + file + ".done; " + then;
  };
  AddPod("ends", daemons("ends", "exit 0"), "Never");
  AddPod("deleted", daemons("deleted", "exec sleep 1000"), "Never");
  ASSERT_TRUE(
      SyncUntil([&] { return PhaseIs("ends", "Succeeded") && fs::exists(dir_ / "deleted.done"); }));
  ASSERT_TRUE(store_->Delete({"Pod", "default", "deleted"}).ok());
  ASSERT_TRUE(SyncUntil([&] { return agent_->running() == 0; }));
  for (const char* file : {"ends", "deleted"}) {
    std::ifstream in(dir_ / file);
    int count = 0;
    for (pid_t pid; in >> pid; ++count) {
      EXPECT_TRUE(EndsWithin(pid, std::chrono::seconds(10))) << file << " left " << pid;
    }
    EXPECT_EQ(count, 2) << file;
  }
}

TEST_F(NodeAgentTest, DestroyingTheAgentLeavesNoProcess) {
  // `$$$$`: Kubernetes' expansion of command and args turns `$$` into `$`.
  AddPod("long", "echo $$$$ > pid; exec sleep 1000", "Never");
  pid_t pid = WrittenPid("pid");
  ASSERT_GT(pid, 0);
  agent_.reset();
  EXPECT_NE(kill(pid, 0), 0);  // reaped: gone
}

// What an idle node agent does costs the same however many pods have
// finished: it looks at pods that changed, or that have a process.
TEST_F(NodeAgentTest, AnIdleSyncLooksAtNoFinishedPod) {
  store::testing::CountingStore counting(*store_);
  agent_ = MakeAgent("", &counting);
  for (int i = 0; i < 20; ++i) AddPod("done-" + std::to_string(i), "exit 0", "Never");
  AddPod("running", "exec sleep 1000", "Never");
  ASSERT_TRUE(SyncUntil([&] {
    for (int i = 0; i < 20; ++i) {
      if (!PhaseIs("done-" + std::to_string(i), "Succeeded")) return false;
    }
    return PhaseIs("running", "Running");
  })) << Phases();
  ASSERT_TRUE(agent_->Sync().ok());  // the last statuses it wrote come back once
  counting.Reset();
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(agent_->Sync().ok());
  EXPECT_EQ(counting.Shown("Pod"), 10);  // the running one, each time
  // A deleted pod is still noticed.
  ASSERT_TRUE(store_->Delete({"Pod", "default", "running"}).ok());
  EXPECT_TRUE(SyncUntil([&] { return agent_->running() == 0; }));
  agent_.reset();  // before the store it watches through
}

TEST_F(NodeAgentTest, DeletingAPodRemovesItsLog) {
  AddPod("p", "echo hello", "Never");
  ASSERT_TRUE(SyncUntil([&] { return PhaseIs("p", "Succeeded"); }));
  ASSERT_EQ(Log("p"), "hello\n");
  ASSERT_TRUE(store_->Delete({"Pod", "default", "p"}).ok());
  ASSERT_TRUE(SyncUntil([&] { return !fs::exists(agent_->LogPath("default", "p", "main")); }));
}

TEST_F(NodeAgentTest, ANewPodUnderAnOldNameHasNoneOfItsLog) {
  // The old pod restarted once (so its log has runs), then was deleted and
  // replaced while no node agent looked (say, the server was down).
  AddPod("p", "if [ -e tried ]; then echo old second; else touch tried; echo old first; exit 1; fi",
         "OnFailure");
  clock_.Advance(std::chrono::seconds(60));
  ASSERT_TRUE(SyncUntil([&] {
    clock_.Advance(std::chrono::seconds(60));
    return PhaseIs("p", "Succeeded");
  }));
  ASSERT_TRUE(fs::exists(agent_->LogPath("default", "p", "main") + ".runs"));
  agent_ = MakeAgent("");
  ASSERT_TRUE(store_->Delete({"Pod", "default", "p"}).ok());
  AddPod("p", "echo new", "Never");
  ASSERT_TRUE(SyncUntil([&] { return PhaseIs("p", "Succeeded"); }));
  EXPECT_EQ(Log("p"), "new\n");
  EXPECT_FALSE(fs::exists(agent_->LogPath("default", "p", "main") + ".runs"));
}

// After a crash of the node agent: shims an earlier one started, for runs
// the store recorded or not.
class NodeAgentRecoveryTest : public NodeAgentTest {
 protected:
  void SetUp() override {
    NodeAgentTest::SetUp();
    agent_ = MakeAgent(TRAINYARD_SHIM);
  }
  void TearDown() override {
    NodeAgentTest::TearDown();
    for (pid_t pid : strays_) kill(-pid, SIGKILL);
    for (pid_t pid : strays_) waitpid(pid, nullptr, 0);
  }
  // A shim as an earlier node agent started it for `exit_path`, running
  // `script`: this test's child, in a process group of its own.
  pid_t StartStrayShim(const std::string& exit_path, const std::string& script) {
    fs::create_directories(fs::path(exit_path).parent_path());
    std::vector<std::string> args = {TRAINYARD_SHIM, exit_path, "/bin/sh", "sh", "-c", script};
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    char path[] = "PATH=/usr/bin:/bin";
    char* envp[] = {path, nullptr};
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
    pid_t pid = 0;
    EXPECT_EQ(posix_spawn(&pid, TRAINYARD_SHIM, nullptr, &attr, argv.data(), envp), 0);
    posix_spawnattr_destroy(&attr);
    strays_.push_back(pid);
    // posix_spawn returns as the exec begins, before the new command line
    // is readable: a shim a crashed trainyard left has long been running.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline");
      std::stringstream cmdline;
      cmdline << in.rdbuf();
      if (cmdline.str().find(exit_path) != std::string::npos) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return pid;
  }
  bool Reaped(pid_t pid) { return waitpid(pid, nullptr, WNOHANG) == pid; }

  std::vector<pid_t> strays_;
};

TEST_F(NodeAgentRecoveryTest, ARunWhoseStartWasNotRecordedIsAdoptedNotStartedAgain) {
  AddPod("p", "echo started again", "Never");
  fs::path runs = dir_ / "runs";
  fs::path go = dir_ / "go";
  pid_t shim = StartStrayShim(
      agent_->ExitPath(Pod("p"), "main", 0),
      "echo ran >> " + runs.string() + "; while [ ! -e " + go.string() + " ]; do sleep 0.05; done");
  ASSERT_TRUE(SyncUntil([&] { return PhaseIs("p", "Running"); }));
  EXPECT_THAT(Pod("p").status.container_statuses.at(0).container_id,
              ::testing::StartsWith("trainyard://" + std::to_string(shim) + "-"));
  std::ofstream(go).put('\n');
  ASSERT_TRUE(SyncUntil([&] { return PhaseIs("p", "Succeeded"); }));
  std::ifstream in(runs);
  std::stringstream ran;
  ran << in.rdbuf();
  EXPECT_EQ(ran.str(), "ran\n");
  EXPECT_EQ(Log("p"), "");
}

TEST_F(NodeAgentRecoveryTest, ARunThatEndedUnrecordedIsRecordedNotStartedAgain) {
  AddPod("p", "echo started again", "Never");
  std::string exit_path = agent_->ExitPath(Pod("p"), "main", 0);
  fs::create_directories(fs::path(exit_path).parent_path());
  std::ofstream(exit_path) << "exit 3\n";
  ASSERT_TRUE(SyncUntil([&] { return PhaseIs("p", "Failed"); }));
  EXPECT_EQ(Pod("p").status.container_statuses.at(0).state.terminated->exit_code, 3);
  EXPECT_EQ(Log("p"), "");
}

TEST_F(NodeAgentRecoveryTest, AShimOfNoStoredPodIsStopped) {
  AddPod("p", "exit 0", "Never");
  pid_t stray = StartStrayShim((dir_ / "logs/default/gone_main.no-such-uid.0.exit").string(),
                               "exec sleep 1000");
  // Not another's: a shim under another state directory is left alone.
  fs::path elsewhere = dir_ / "other-state/logs/default/p_main.uid.0.exit";
  pid_t foreign = StartStrayShim(elsewhere.string(), "exec sleep 1000");
  bool reaped = false;
  ASSERT_TRUE(SyncUntil([&] {
    reaped = reaped || Reaped(stray);
    return reaped && PhaseIs("p", "Succeeded");
  }));
  EXPECT_EQ(kill(foreign, 0), 0);
}

// The container sees its volumes at their mount paths in what it is given:
// the configMap's file, and an emptyDir it writes to.
TEST_F(NodeAgentTest, VolumesAreReadyAndTheirPathsTranslated) {
  api::Json map = {{"apiVersion", "v1"},
                   {"kind", "ConfigMap"},
                   {"metadata", {{"name", "cfg"}, {"namespace", "default"}}},
                   {"data", {{"greeting", "hello from the configmap"}}}};
  ASSERT_TRUE(store_->Create(map).ok());
  api::Pod pod;
  pod.metadata.name = "vol";
  pod.metadata.namespace_ = "default";
  pod.spec.restart_policy = "Never";
  api::Container c;
  c.name = "main";
  c.command = {"sh", "-c", "cat /etc/cfg/greeting > $OUT/copy && cd /scratch && pwd"};
  api::EnvVar out;
  out.name = "OUT";
  out.value = "/scratch";
  c.env.push_back(out);
  c.volume_mounts.resize(2);
  c.volume_mounts[0].name = "cfg";
  c.volume_mounts[0].mount_path = "/etc/cfg";
  c.volume_mounts[1].name = "scratch";
  c.volume_mounts[1].mount_path = "/scratch";
  pod.spec.containers.push_back(c);
  pod.spec.volumes.resize(2);
  pod.spec.volumes[0].name = "cfg";
  pod.spec.volumes[0].config_map.emplace().name = "cfg";
  pod.spec.volumes[1].name = "scratch";
  pod.spec.volumes[1].empty_dir.emplace();
  ASSERT_TRUE(store_->Create(api::EncodePod(pod)).ok());
  ASSERT_TRUE(SyncUntil([&] { return PhaseIs("vol", "Succeeded"); })) << Log("vol");
  fs::path scratch = dir_ / "pods" / "default" / "vol" / "volumes" / "scratch";
  std::ifstream copy(scratch / "copy");
  std::string text;
  std::getline(copy, text);
  EXPECT_EQ(text, "hello from the configmap");
  EXPECT_EQ(Log("vol"), scratch.string() + "\n");
}

}  // namespace
}  // namespace trainyard::node
