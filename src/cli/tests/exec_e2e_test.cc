// `kubectl exec` against `trainyard server`, as a user runs it: the real
// kubectl over WebSocket, commands run beside a real replica, with and
// without stdin, on a terminal of its own, over TLS with a namespace's
// token.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <poll.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api/json.h"
#include "cli/tests/server_fixture.h"

namespace trainyard::cli::testing {
namespace {

using ::testing::HasSubstr;

constexpr const char* kExecSleeper = R"(
apiVersion: batch/v1
kind: Job
metadata: {name: sleeper, namespace: NAMESPACE}
spec:
  template:
    spec:
      restartPolicy: Never
      # At a path this machine does not have: seen there in the sandbox.
      volumes: [{name: scratch, emptyDir: {}}]
      containers:
        - name: main
          image: none
          env: [{name: GREETING, value: hello-from-the-pod}]
          volumeMounts: [{name: scratch, mountPath: /trainyard-exec-test/scratch}]
          command: [sh, -c, 'echo pods-own > /trainyard-exec-test/scratch/mark; echo ready; exec sleep 600']
)";

class ExecE2eTest : public ServerFixture {
 protected:
  // kubectl before 1.30 runs exec over SPDY only, which the server does not
  // serve (Debian 12's is 1.20): its tests are skipped, saying so; the
  // Python client's covers exec there.
  void NeedKubectlThatExecsOverWebSocket() {
    CommandResult version = Kubectl({"version", "--client", "-o", "json"});
    api::Json doc = api::Json::parse(version.output, nullptr, /*allow_exceptions=*/false);
    int minor = std::atoi(api::StringAt(doc, {"clientVersion", "minor"}).c_str());
    if (minor < 30) {
      GTEST_SKIP() << "kubectl 1." << minor
                   << " runs exec over SPDY only; the server serves it over WebSocket, as kubectl "
                      "1.30 and newer speak it";
    }
  }
  // A running pod of a Job whose replica leaves its process group (setsid).
  std::string ApplyEscaper() {
    CommandResult applied = Kubectl({"apply", "-f", Write("setsid.yaml", R"(
apiVersion: batch/v1
kind: Job
metadata: {name: escaper}
spec:
  template:
    spec:
      restartPolicy: Never
      # Out of the group, it hears no SIGTERM: the grace is its wait.
      terminationGracePeriodSeconds: 1
      containers:
        - {name: main, image: none, command: [setsid, sleep, "600"]}
)")});
    EXPECT_EQ(applied.exit_code, 0) << applied.output;
    std::string pod;
    EXPECT_TRUE(Eventually([&] {
      pod = Field("pods", ".items[?(@.status.phase==\"Running\")].metadata.name");
      return !pod.empty();
    }));
    return pod;
  }
  // The running pod of a sleeper job in `namespace_`.
  std::string RunningSleeper(const std::string& namespace_ = "default",
                             const std::vector<std::string>& auth = {}) {
    std::string job = std::regex_replace(kExecSleeper, std::regex("NAMESPACE"), namespace_);
    std::vector<std::string> apply = {"apply", "-f", Write("sleeper.yaml", job)};
    apply.insert(apply.end(), auth.begin(), auth.end());
    CommandResult applied = Kubectl(apply);
    EXPECT_EQ(applied.exit_code, 0) << applied.output;
    std::string pod;
    EXPECT_TRUE(Eventually([&] {
      std::vector<std::string> get = {
          "get",      "pods", "-n",
          namespace_, "-o",   "jsonpath={.items[?(@.status.phase==\"Running\")].metadata.name}"};
      get.insert(get.end(), auth.begin(), auth.end());
      pod = Kubectl(get).output;
      return !pod.empty() && pod.find(' ') == std::string::npos;
    }));
    // Ready once it said so: its mark is written.
    std::vector<std::string> logs = {"logs", "-n", namespace_, pod};
    logs.insert(logs.end(), auth.begin(), auth.end());
    EXPECT_TRUE(Eventually([&] { return Kubectl(logs).output == "ready\n"; }));
    return pod;
  }
  // `script` run by sh, kubectl on its PATH and this test's kubeconfig.
  CommandResult Shell(const std::string& script) {
    fs::path out = dir_ / ("shell-" + std::to_string(++commands_) + ".out");
    Result<runtime::Process> p = runtime::Process::Start(
        {.argv = {"sh", "-c", script},
         .env = {{"PATH", kPath}, {"HOME", dir_.string()}, {"KUBECONFIG", Kubeconfig().string()}},
         .working_dir = dir_.string(),
         .log_path = out.string()});
    if (!p.ok()) return {-1, p.status().ToString()};
    std::optional<runtime::ExitStatus> status = p->WaitFor(std::chrono::seconds(60));
    return {status ? status->exit_code : -1, ReadFile(out)};
  }
  // kubectl on a terminal of `rows` x `columns`, typed `input`: what the
  // terminal showed, and how kubectl exited.
  CommandResult OnATerminal(const std::vector<std::string>& args, const std::string& input,
                            unsigned short rows, unsigned short columns) {
    std::vector<std::string> strings = {"kubectl", "--kubeconfig", Kubeconfig().string()};
    strings.insert(strings.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& s : strings) argv.push_back(s.data());
    argv.push_back(nullptr);
    std::string path = std::string("PATH=") + kPath, home = "HOME=" + dir_.string();
    char* envp[] = {path.data(), home.data(), nullptr};
    winsize size{.ws_row = rows, .ws_col = columns, .ws_xpixel = 0, .ws_ypixel = 0};
    int terminal = -1;
    pid_t pid = forkpty(&terminal, nullptr, nullptr, &size);
    if (pid == 0) {
      execvpe("kubectl", argv.data(), envp);
      _exit(127);
    }
    if (pid < 0) return {-1, "forkpty failed"};
    std::string shown;
    bool typed = false;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline) {
      // Typed once the command's prompt shows: the terminal is set up.
      if (!typed &&
          (shown.find("$ ") != std::string::npos || shown.find("# ") != std::string::npos)) {
        typed = write(terminal, input.data(), input.size()) == static_cast<ssize_t>(input.size());
      }
      pollfd p{.fd = terminal, .events = POLLIN, .revents = 0};
      if (poll(&p, 1, 100) <= 0) continue;
      char buffer[4096];
      ssize_t n = read(terminal, buffer, sizeof(buffer));
      if (n <= 0) break;  // EIO: kubectl and its terminal are done
      shown.append(buffer, static_cast<size_t>(n));
    }
    // kubectl closes its terminal a moment before it exits: waited for.
    int status = 0;
    bool exited =
        Eventually([&] { return waitpid(pid, &status, WNOHANG) == pid; }, std::chrono::seconds(10));
    if (!exited) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
    }
    close(terminal);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, shown};
  }
  // Whether a process runs whose command line is `argv`, NULs between.
  static bool Running(const std::string& cmdline) {
    std::error_code ec;
    for (auto it = fs::directory_iterator("/proc", ec); !ec && it != fs::directory_iterator();
         it.increment(ec)) {
      if (ReadFile(it->path() / "cmdline") == cmdline &&
          ReadFile(it->path() / "stat").find(") Z") == std::string::npos) {
        return true;
      }
    }
    return false;
  }
};

TEST_F(ExecE2eTest, ACommandRunsInThePodsEnvironmentAndEndsWithItsExitCode) {
  NeedKubectlThatExecsOverWebSocket();
  StartServer();
  std::string pod = RunningSleeper();
  CommandResult exec =
      Kubectl({"exec", pod, "--", "sh", "-c", "echo \"$GREETING\"; echo oops >&2; exit 3"});
  EXPECT_EQ(exec.exit_code, 3) << exec.output;
  EXPECT_THAT(exec.output, HasSubstr("hello-from-the-pod\n"));
  EXPECT_THAT(exec.output, HasSubstr("oops\n"));
  EXPECT_THAT(exec.output, HasSubstr("command terminated with exit code 3"));
  CommandResult ok = Kubectl({"exec", pod, "-c", "main", "--", "true"});
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
  // `trainyard exec --home H` finds the pod in the server of H.
  CommandResult direct = Trainyard({"exec", pod, "printenv", "GREETING"});
  EXPECT_EQ(direct.exit_code, 0) << direct.output;
  EXPECT_THAT(direct.output, HasSubstr("hello-from-the-pod\n"));

  CommandResult no_container = Kubectl({"exec", pod, "-c", "nosuch", "--", "true"});
  EXPECT_NE(no_container.exit_code, 0);
  EXPECT_THAT(no_container.output, HasSubstr("container nosuch is not valid for pod " + pod));
  CommandResult no_pod = Kubectl({"exec", "nosuch", "--", "true"});
  EXPECT_NE(no_pod.exit_code, 0);
  EXPECT_THAT(no_pod.output, HasSubstr("pods \"nosuch\" not found"));
}

// Debian's python3-kubernetes client (kubernetes.stream, over WebSocket):
// stdout and stderr apart, stdin, and the exit code from the error
// channel (tests/python/exec_check.py).
TEST_F(ExecE2eTest, ThePythonKubernetesClientExecsWithStdinAndTheExitCode) {
  TRAINYARD_NEEDS(PythonHas("kubernetes"), "python3-kubernetes");
  TRAINYARD_NEEDS(HaveBwrap(), "bubblewrap");
  StartServer();
  std::string pod = RunningSleeper();
  // In the replica's sandbox: its volume at its mountPath, its host name.
  CommandResult check = PythonCheck("exec_check.py", {pod});
  EXPECT_EQ(check.exit_code, 0) << check.output;
  EXPECT_THAT(check.output, HasSubstr("every step as expected"));
}

// The command runs in the replica's sandbox: it sees the volume at its
// mountPath and the pod's host name, as a container's exec does.
TEST_F(ExecE2eTest, TheCommandSeesTheReplicasVolumesAndHostName) {
  NeedKubectlThatExecsOverWebSocket();
  TRAINYARD_NEEDS(HaveBwrap(), "bubblewrap");
  StartServer();
  std::string pod = RunningSleeper();
  CommandResult seen =
      Kubectl({"exec", pod, "--", "sh", "-c", "cat /trainyard-exec-test/scratch/mark; hostname"});
  EXPECT_EQ(seen.exit_code, 0) << seen.output;
  EXPECT_EQ(seen.output, "pods-own\n" + pod + "\n");
  EXPECT_FALSE(fs::exists("/trainyard-exec-test")) << "the mount point was made on the machine";
}

// -i: what kubectl reads goes to the command, and so does its end.
TEST_F(ExecE2eTest, StdinReachesTheCommandToItsEnd) {
  NeedKubectlThatExecsOverWebSocket();
  StartServer();
  std::string pod = RunningSleeper();
  CommandResult counted =
      Shell("printf 'one\\ntwo\\nthree\\n' | kubectl exec -i " + pod + " -- wc -l");
  EXPECT_EQ(counted.exit_code, 0) << counted.output;
  EXPECT_THAT(counted.output, HasSubstr("3\n"));
}

// -it: the command has a terminal of its own, of kubectl's size, and what
// is typed reaches it.
TEST_F(ExecE2eTest, ATerminalOfItsOwnOfKubectlsSize) {
  NeedKubectlThatExecsOverWebSocket();
  StartServer();
  std::string pod = RunningSleeper();
  CommandResult session = OnATerminal({"exec", "-it", pod, "--", "sh", "-i"},
                                      "stty size; test -t 0 && echo on-a-tty; exit 7\n", 40, 100);
  EXPECT_EQ(session.exit_code, 7) << session.output;
  EXPECT_THAT(session.output, HasSubstr("40 100"));
  EXPECT_THAT(session.output, HasSubstr("on-a-tty"));
}

// A client that goes takes its command with it: nothing outlives it.
TEST_F(ExecE2eTest, AKubectlKilledMidwayLeavesNoCommandBehind) {
  NeedKubectlThatExecsOverWebSocket();
  StartServer();
  std::string pod = RunningSleeper();
  // The command's own child too: the whole group it runs in goes.
  Result<runtime::Process> exec =
      StartKubectl({"exec", pod, "--", "sh", "-c", "sleep 987 & wait"}, dir_ / "killed.out");
  ASSERT_TRUE(exec.ok());
  std::string cmdline = std::string("sleep\0987\0", 10);
  ASSERT_TRUE(Eventually([&] { return Running(cmdline); })) << ReadFile(dir_ / "killed.out");
  exec->Signal(SIGKILL);
  exec->WaitFor(std::chrono::seconds(10));
  EXPECT_TRUE(Eventually([&] { return !Running(cmdline); }));
}

// What an exec'd command starts runs in its pod's control groups: a daemon
// (setsid -f) outlives the exec, and a server killed with SIGKILL, but not
// its pod, as a command exec'd into a container ends with it.
TEST_F(ExecE2eTest, ADaemonAnExecStartedEndsWithItsPodNotBefore) {
  NeedKubectlThatExecsOverWebSocket();
  TRAINYARD_NEEDS(geteuid() == 0, "root, for control groups");
  StartServer();
  std::string pod = RunningSleeper();
  CommandResult exec = Kubectl({"exec", pod, "--", "setsid", "-f", "sleep", "986"});
  ASSERT_EQ(exec.exit_code, 0) << exec.output;
  std::string cmdline = std::string("sleep\0986\0", 10);
  ASSERT_TRUE(Eventually([&] { return Running(cmdline); }));
  KillServer();
  StartServer();
  EXPECT_TRUE(Running(cmdline)) << "the pod is there still, and so is what ran in it";
  ASSERT_EQ(Kubectl({"delete", "job", "sleeper"}).exit_code, 0);
  EXPECT_TRUE(Eventually([&] { return !Running(cmdline); }));
}

// Without a sandbox, a replica that left its process group (setsid)
// cannot be found, and nothing runs in its place: never as its root-owned
// shim.
TEST_F(ExecE2eTest, WithoutASandboxAReplicaThatLeftItsProcessGroupIsNotStoodInFor) {
  NeedKubectlThatExecsOverWebSocket();
  StartServer({"--no-sandbox"});
  std::string pod = ApplyEscaper();
  ASSERT_FALSE(pod.empty());
  CommandResult exec = Kubectl({"exec", pod, "--", "id", "-u"});
  EXPECT_NE(exec.exit_code, 0) << exec.output;
  EXPECT_THAT(exec.output, HasSubstr("has left its process group"));
}

// In a sandbox, bwrap stays in the group and names the replica's process,
// wherever it went: the command runs beside it, as its user.
TEST_F(ExecE2eTest, InASandboxAReplicaThatLeftItsProcessGroupIsFoundThroughIt) {
  NeedKubectlThatExecsOverWebSocket();
  TRAINYARD_NEEDS(HaveBwrap(), "bubblewrap");
  StartServer();
  std::string pod = ApplyEscaper();
  ASSERT_FALSE(pod.empty());
  CommandResult exec = Kubectl({"exec", pod, "--", "sh", "-c", "id -u; hostname"});
  EXPECT_EQ(exec.exit_code, 0) << exec.output;
  EXPECT_EQ(exec.output, fmt::format("{}\n{}\n", ReplicaUid(), pod));
}

// Over TLS, a namespace's token execs into its namespace's pods and no
// other's.
TEST_F(ExecE2eTest, ATokenExecsOnlyInItsOwnNamespace) {
  NeedKubectlThatExecsOverWebSocket();
  std::string cert, key;
  TRAINYARD_NEEDS(MakeCertificate(cert, key), "openssl");
  std::string tokens = Write("tokens", "admin-token ops *\nteam-a-token alice team-a\n");
  StartServer({"--tls-cert", cert, "--tls-key", key, "--token-file", tokens});
  ASSERT_EQ(Kubectl({"create", "namespace", "team-a"}).exit_code, 0);
  std::string theirs = RunningSleeper("default");
  std::string mine = RunningSleeper("team-a");
  CommandResult own = Kubectl(
      {"exec", "-n", "team-a", mine, "--token", "team-a-token", "--", "sh", "-c", "echo in-a"});
  EXPECT_EQ(own.exit_code, 0) << own.output;
  EXPECT_THAT(own.output, HasSubstr("in-a"));
  CommandResult other =
      Kubectl({"exec", "-n", "default", theirs, "--token", "team-a-token", "--", "true"});
  EXPECT_NE(other.exit_code, 0);
  EXPECT_THAT(other.output, HasSubstr("Forbidden"));
}

}  // namespace
}  // namespace trainyard::cli::testing
