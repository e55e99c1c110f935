// `trainyard run` stopped and looked into as a user does: Ctrl-C and its
// grace periods, the dashboard kept up, output in bounded memory, exec.
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

namespace trainyard::cli {
namespace {

namespace fs = std::filesystem;
using testing::JobExiting;
using testing::OneMaster;
using testing::RunE2eTest;

TEST_F(RunE2eTest, CtrlCStopsEveryReplicaAndExits130) {
  Write("job.yaml", R"(
apiVersion: kubeflow.org/v1
kind: JAXJob
metadata: {name: long}
spec:
  jaxReplicaSpecs:
    Worker:
      replicas: 2
      template:
        spec:
          containers:
            - {name: jax, image: none, command: [sh, -c, 'echo $$$$ >> pids; echo started; exec sleep 1000']}
)");
  Result<runtime::Process> p = Start({"job.yaml"});
  ASSERT_TRUE(p.ok());
  // Wait until both replicas are up.
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  std::vector<pid_t> pids;
  while (pids.size() < 2 && std::chrono::steady_clock::now() < until) {
    pids.clear();
    std::ifstream in(dir_ / "pids");
    for (pid_t pid; in >> pid;) pids.push_back(pid);
    std::this_thread::yield();
  }
  ASSERT_EQ(pids.size(), 2u);
  kill(p->pid(), SIGINT);
  std::optional<runtime::ExitStatus> status = p->WaitFor(std::chrono::seconds(30));
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->exit_code, 130);
  for (pid_t pid : pids) EXPECT_NE(kill(pid, 0), 0) << pid << " outlived the run";
  EXPECT_THAT(Output(), ::testing::HasSubstr("interrupted: stopping every replica"));
}

// `run --ui`: the run's own API on loopback, behind a token printed with
// the dashboard's URL alone; a replica logs to its job with MLflow's
// calls using its uid; the dashboard stays up after the run until Ctrl-C.
TEST_F(RunE2eTest, WithUiTheRunsDashboardStaysUpBehindItsTokenUntilCtrlC) {
  TRAINYARD_NEEDS(fs::exists("/usr/bin/python3"), "python3");
  Write("job.yaml", OneMaster("tracked", R"y(
              command: [/usr/bin/python3, )y" +
                                             std::string(TRAINYARD_SOURCE_DIR) +
                                             R"y(/tests/python/mlflow_client_calls.py,
                        mlflow_loss, "7:0.25"])y"));
  Result<runtime::Process> p = Start({"--ui", "job.yaml"});
  ASSERT_TRUE(p.ok());
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (Output().find("stays up until Ctrl-C") == std::string::npos &&
         std::chrono::steady_clock::now() < until) {
    std::this_thread::yield();
  }
  std::string out = Output();
  ASSERT_THAT(out, ::testing::HasSubstr("stays up until Ctrl-C")) << out;
  EXPECT_THAT(out, ::testing::HasSubstr("default/tracked: Succeeded"));
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      out, m, std::regex(R"((http://127\.0\.0\.1:[0-9]+)/#/jobs\?token=([0-9a-f]{32}))")))
      << out;
  // GET path with the token (or none): the status, then the body.
  auto get = [&](const std::string& path, const std::string& token) {
    std::string script =
        "import sys, urllib.request, urllib.error\n"
        "r = urllib.request.Request(sys.argv[1], headers={'Authorization': 'Bearer ' + "
        "sys.argv[2]})\n"
        "try:\n  b = urllib.request.urlopen(r); print(b.status); print(b.read().decode())\n"
        "except urllib.error.HTTPError as e:\n  print(e.code)\n";
    Write("get.py", script);
    std::string command = "/usr/bin/python3 " + (dir_ / "get.py").string() + " '" + m[1].str() +
                          path + "' '" + token + "' > " + (dir_ / "got").string();
    EXPECT_EQ(system(command.c_str()), 0);
    std::ifstream in(dir_ / "got");
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  };
  const std::string observations =
      "/apis/kubeflow.org/v1/namespaces/default/pytorchjobs/tracked/observations";
  EXPECT_THAT(get(observations, ""), ::testing::StartsWith("401"));
  EXPECT_THAT(get(observations, "not-the-token"), ::testing::StartsWith("401"));
  std::string logged = get(observations, m[2].str());
  EXPECT_THAT(logged, ::testing::StartsWith("200"));
  EXPECT_THAT(logged, ::testing::HasSubstr("mlflow_loss"));
  kill(p->pid(), SIGINT);
  std::optional<runtime::ExitStatus> status = p->WaitFor(std::chrono::seconds(30));
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->exit_code, 0);
}

// A replica that left its process group (setsid) still hears the stop,
// through its shim, and stops as it means to.
TEST_F(RunE2eTest, CtrlCReachesAReplicaThatLeftItsProcessGroup) {
  Write("job.yaml", OneMaster("escaper", R"y(
              command: [setsid, sh, -c, 'trap "echo stopped-gracefully; exit 0" TERM; echo up > up; while :; do sleep 0.05; done'])y"));
  Result<runtime::Process> p = Start({"job.yaml"});
  ASSERT_TRUE(p.ok());
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!fs::exists(dir_ / "up") && std::chrono::steady_clock::now() < until) {
    std::this_thread::yield();
  }
  ASSERT_TRUE(fs::exists(dir_ / "up")) << Output();
  kill(p->pid(), SIGINT);
  std::optional<runtime::ExitStatus> status = p->WaitFor(std::chrono::seconds(20));
  ASSERT_TRUE(status.has_value());
  EXPECT_THAT(Output(), ::testing::HasSubstr("[master-0] stopped-gracefully"));
}

// Interrupted, `trainyard run` gives each replica its pod's
// terminationGracePeriodSeconds (not a fixed 10 s): the master saves its
// checkpoint in 2 s of its 30, the worker that ignores SIGTERM is killed
// after its 1; and a daemon the master left outside its process group
// ends with it.
TEST_F(RunE2eTest, CtrlCGivesEachReplicaItsGracePeriodAndLeavesNoDaemon) {
  Write("job.yaml", R"(
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: graceful}
spec:
  pytorchReplicaSpecs:
    Master:
      template:
        spec:
          terminationGracePeriodSeconds: 30
          containers:
            - name: pytorch
              image: none
              command: [sh, -c, 'setsid sleep 1000 & echo $! > daemon; trap "sleep 2; echo saved > ckpt; exit 0" TERM; touch master-up; sleep 1000 & wait']
    Worker:
      template:
        spec:
          terminationGracePeriodSeconds: 1
          containers:
            - {name: pytorch, image: none, command: [sh, -c, 'trap "" TERM; touch worker-up; sleep 1000']}
)");
  Result<runtime::Process> p = Start({"job.yaml"});
  ASSERT_TRUE(p.ok());
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!(fs::exists(dir_ / "master-up") && fs::exists(dir_ / "worker-up")) &&
         std::chrono::steady_clock::now() < until) {
    std::this_thread::yield();
  }
  pid_t daemon = 0;
  std::ifstream(dir_ / "daemon") >> daemon;
  int daemon_fd = daemon > 0 ? static_cast<int>(syscall(SYS_pidfd_open, daemon, 0)) : -1;
  auto interrupted = std::chrono::steady_clock::now();
  kill(p->pid(), SIGINT);
  std::optional<runtime::ExitStatus> status = p->WaitFor(std::chrono::seconds(30));
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->exit_code, 130);
  EXPECT_LT(std::chrono::steady_clock::now() - interrupted, std::chrono::seconds(8))
      << "the worker was not killed after its 1 s";
  EXPECT_TRUE(fs::exists(dir_ / "ckpt")) << "the master was killed before its 30 s";
  ASSERT_GE(daemon_fd, 0) << "no daemon pid";
  pollfd pfd{daemon_fd, POLLIN, 0};
  bool ended = poll(&pfd, 1, 10000) == 1;
  if (!ended) syscall(SYS_pidfd_send_signal, daemon_fd, SIGKILL, nullptr, 0);
  close(daemon_fd);
  EXPECT_TRUE(ended) << "the master's setsid daemon outlived the run";
}

// A replica that writes 100 MB without a newline: `trainyard run` prints
// it in pieces of 64 KiB, and never holds the line (it took 306 MB).
TEST_F(RunE2eTest, AHundredMegabyteLineIsPrintedInBoundedMemory) {
  Write("job.yaml", R"(
apiVersion: batch/v1
kind: Job
metadata: {name: long-line}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - {name: main, image: none, command: [sh, -c, 'head -c 100000000 /dev/zero | tr "\0" x; echo; echo end']}
)");
  EXPECT_EQ(Run({"job.yaml"}), 0);
  rusage usage{};
  getrusage(RUSAGE_CHILDREN, &usage);  // the largest of trainyard and what it ran
// Not under ASan, whose quarantine keeps freed memory resident by design.
#ifndef TRAINYARD_SANITIZE
  EXPECT_LT(usage.ru_maxrss, 100 * 1024) << "KiB at most";
#endif
  std::ifstream out(dir_ / "out");
  size_t pieces = 0;
  size_t longest = 0;
  bool end = false;
  for (std::string line; std::getline(out, line);) {
    pieces += line.find("] xxx") != std::string::npos;
    longest = std::max(longest, line.size());
    end = end || line.ends_with("] end");
  }
  EXPECT_EQ(pieces, 100000000 / 65536 + 1);  // the whole pieces, then the rest
  EXPECT_LT(longest, 65536u + 100);
  EXPECT_TRUE(end);
}

TEST_F(RunE2eTest, ExecIntoAReplicaThatIsNotRunningSaysSo) {
  Result<runtime::Process> p = runtime::Process::Start(
      {.argv = {TRAINYARD_BINARY, "exec", "--state", dir_.string(), "w-0", "--", "true"},
       .env = {{"PATH", "/usr/bin:/bin"}},
       .log_path = (dir_ / "out").string()});
  ASSERT_TRUE(p.ok());
  std::optional<runtime::ExitStatus> status = p->WaitFor(std::chrono::seconds(10));
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->exit_code, 1);
  EXPECT_THAT(Output(), ::testing::HasSubstr("trainyard exec: pod default/w-0 not found in " +
                                             dir_.string()));
}

// kubectl exec, locally: the command runs with the replica's env and
// directory, and dies with the replica.
TEST_F(RunE2eTest, ExecRunsACommandInsideAReplica) {
  fs::create_directories(dir_ / "work");
  Write("job.yaml", R"(
apiVersion: kubeflow.org/v1
kind: JAXJob
metadata: {name: ex}
spec:
  jaxReplicaSpecs:
    Worker:
      template:
        spec:
          containers:
            - name: jax
              image: none
              workingDir: WORK
              env: [{name: GREETING, value: hello}]
              command: [sh, -c, 'while [ ! -e done ]; do sleep 0.05; done']
)");
  std::ifstream in(dir_ / "job.yaml");
  std::stringstream text;
  text << in.rdbuf();
  std::string yaml = text.str();
  yaml.replace(yaml.find("WORK"), 4, (dir_ / "work").string());
  Write("job.yaml", yaml);
  Result<runtime::Process> run = Start({"job.yaml"});
  ASSERT_TRUE(run.ok());
  auto exec = [&] {
    Result<runtime::Process> p = runtime::Process::Start(
        {.argv = {TRAINYARD_BINARY, "exec", "--home", (dir_ / "home").string(), "ex-worker-0", "--",
                  "sh", "-c", "echo $GREETING from $HOSTNAME in $(pwd)"},
         .env = {{"PATH", "/usr/bin:/bin"}},
         .log_path = (dir_ / "exec.out").string()});
    std::optional<runtime::ExitStatus> status = p->WaitFor(std::chrono::seconds(10));
    return status ? status->exit_code : -1;
  };
  // Until the replica runs, exec says it is not running (exit 1).
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (exec() != 0 && std::chrono::steady_clock::now() < deadline) {
    run->WaitFor(std::chrono::milliseconds(50));
  }
  Write("work/done", "");
  ASSERT_TRUE(run->WaitFor(std::chrono::seconds(30)).has_value());
  std::ifstream out(dir_ / "exec.out");
  std::string last, line;
  while (std::getline(out, line)) last = line;
  EXPECT_EQ(last, "hello from ex-worker-0 in " + (dir_ / "work").string());
}

}  // namespace
}  // namespace trainyard::cli
