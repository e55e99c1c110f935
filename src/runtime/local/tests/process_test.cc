// Real processes: these tests fork and exec /bin/sh and coreutils.
#include "runtime/local/process.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/tests/needs.h"
#include "common/tests/test_dir.h"

namespace trainyard::runtime {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;

class ProcessTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = FreshTestDir("trainyard-process-test"); }
  void TearDown() override { fs::remove_all(dir_); }

  ProcessSpec Shell(const std::string& script) {
    return {.argv = {"sh", "-c", script},
            .env = {{"PATH", "/usr/bin:/bin"}},
            .working_dir = dir_.string(),
            .log_path = (dir_ / "log").string()};
  }
  std::string Log() {
    std::ifstream in(dir_ / "log");
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  fs::path dir_;
};

// True when `pid` no longer runs (gone, or a zombie awaiting its new parent).
bool Gone(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(stat, text)) return true;
  size_t paren = text.rfind(')');
  return paren != std::string::npos && text.size() > paren + 2 && text[paren + 2] == 'Z';
}

bool GoneWithin(pid_t pid, seconds deadline) {
  auto until = std::chrono::steady_clock::now() + deadline;
  while (!Gone(pid)) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::yield();
  }
  return true;
}

TEST_F(ProcessTest, RunsWithExactlyItsEnvAndDirectoryAndLogsBothStreams) {
  ProcessSpec spec = Shell("echo out; echo err >&2; env | sort; pwd");
  spec.env.emplace_back("RANK", "3");
  Result<Process> p = Process::Start(spec);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  std::optional<ExitStatus> status = p->WaitFor(seconds(10));
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(*status, (ExitStatus{0, 0}));
  std::string log = Log();
  EXPECT_THAT(log, ::testing::HasSubstr("out\nerr\n"));
  EXPECT_THAT(log, ::testing::HasSubstr("RANK=3\n"));
  EXPECT_THAT(log, ::testing::HasSubstr(dir_.string() + "\n"));
  EXPECT_THAT(log, ::testing::Not(::testing::HasSubstr("HOME=")));  // nothing inherited
}

TEST_F(ProcessTest, ExitCodesAndSignalsAsKubernetesReportsThem) {
  Result<Process> p = Process::Start(Shell("exit 3"));
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->WaitFor(seconds(10))->exit_code, 3);
  Result<Process> killed = Process::Start(Shell("kill -KILL $$"));
  ASSERT_TRUE(killed.ok());
  ExitStatus status = *killed->WaitFor(seconds(10));
  EXPECT_EQ(status.exit_code, 137);
  EXPECT_EQ(status.signal, SIGKILL);
  EXPECT_EQ(status.Describe(), "killed by SIGKILL (exit code 137)");
}

TEST_F(ProcessTest, StartFailsCleanlyWhenItCannotRun) {
  ProcessSpec missing = Shell("true");
  missing.argv = {"no-such-program-xyz"};
  Result<Process> p = Process::Start(missing);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(p.status().message(), "no-such-program-xyz: not found in PATH=/usr/bin:/bin");

  ProcessSpec bad_dir = Shell("true");
  bad_dir.working_dir = (dir_ / "nope").string();
  EXPECT_EQ(Process::Start(bad_dir).status().code(), StatusCode::kNotFound);

  ProcessSpec not_executable = Shell("true");
  std::ofstream(dir_ / "script.txt") << "echo hi\n";
  not_executable.argv = {(dir_ / "script.txt").string()};
  EXPECT_EQ(Process::Start(not_executable).status().code(), StatusCode::kNotFound);

  EXPECT_EQ(Process::Start(ProcessSpec{}).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(ProcessTest, StopSendsTermThenKillsAfterTheGracePeriod) {
  // Each script says "ready" once its trap is set, so TERM cannot arrive first.
  auto ready = [&](const char* name) {
    auto until = std::chrono::steady_clock::now() + seconds(10);
    while (!fs::exists(dir_ / name) && std::chrono::steady_clock::now() < until) {
      std::this_thread::yield();
    }
    return fs::exists(dir_ / name);
  };
  Result<Process> polite =
      Process::Start(Shell("trap 'exit 0' TERM; touch polite; while :; do sleep 0.05; done"));
  ASSERT_TRUE(polite.ok());
  ASSERT_TRUE(ready("polite"));
  EXPECT_EQ(polite->Stop(seconds(10)).exit_code, 0);

  Result<Process> term_ignoring =
      Process::Start(Shell("trap '' TERM; touch term_ignoring; while :; do sleep 0.05; done"));
  ASSERT_TRUE(term_ignoring.ok());
  ASSERT_TRUE(ready("term_ignoring"));
  auto start = std::chrono::steady_clock::now();
  ExitStatus status = term_ignoring->Stop(milliseconds(300));
  EXPECT_EQ(status.signal, SIGKILL);
  EXPECT_GE(std::chrono::steady_clock::now() - start, milliseconds(300));
}

TEST_F(ProcessTest, WhatTheLeaderLeavesBehindDiesWithIt) {
  Result<Process> p = Process::Start(Shell("sleep 1000 & echo $! > child.pid; exit 0"));
  ASSERT_TRUE(p.ok());
  ASSERT_TRUE(p->WaitFor(seconds(10)).has_value());
  pid_t child = 0;
  std::ifstream(dir_ / "child.pid") >> child;
  ASSERT_GT(child, 0);
  EXPECT_TRUE(GoneWithin(child, seconds(10)));
}

TEST_F(ProcessTest, DestroyingARunningProcessKillsItsGroup) {
  pid_t leader = 0;
  pid_t child = 0;
  {
    Result<Process> p = Process::Start(Shell("sleep 1000 & echo $! > child.pid; wait"));
    ASSERT_TRUE(p.ok());
    leader = p->pid();
    auto until = std::chrono::steady_clock::now() + seconds(10);
    while (!(std::ifstream(dir_ / "child.pid") >> child) &&
           std::chrono::steady_clock::now() < until) {
      std::this_thread::yield();
    }
    ASSERT_GT(child, 0);
  }
  EXPECT_TRUE(GoneWithin(leader, seconds(10)));
  EXPECT_TRUE(GoneWithin(child, seconds(10)));
}

TEST_F(ProcessTest, InheritsNoIgnoredSignalsAndReadsEmptyStdin) {
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  struct sigaction old {};
  sigaction(SIGINT, &ignore, &old);
  Result<Process> p = Process::Start(Shell("grep -E '^Sig(Ign|Blk)' /proc/self/status; cat"));
  sigaction(SIGINT, &old, nullptr);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->WaitFor(seconds(10))->exit_code, 0);  // cat saw end of input at once
  EXPECT_THAT(Log(), ::testing::HasSubstr("SigBlk:\t0000000000000000"));
  EXPECT_THAT(Log(), ::testing::HasSubstr("SigIgn:\t0000000000000000"));
}

ProcessSpec UnderShim(ProcessSpec spec, const fs::path& dir, bool detach = false) {
  spec.shim = TRAINYARD_SHIM;
  spec.exit_path = (dir / "exit").string();
  spec.detach = detach;
  return spec;
}

// A replica that leaves two daemons behind: one `setsid`, one double-forked
// into a session of its own, neither in the replica's process group. Each
// writes its pid to the fifo `daemons`; then `then` runs.
std::string DaemonsThen(const std::string& then) {
  return "setsid sleep 1000 & echo $! > daemons; "
         "setsid sh -c 'sleep 1000 & echo $! > daemons'; " +
         then;
}

// The daemons' pidfds, once both have said who they are (10 s at most).
class Daemons {
 public:
  explicit Daemons(const fs::path& fifo) : fifo_(fifo) { mkfifo(fifo.c_str(), 0600); }
  ~Daemons() {
    for (const auto& [pid, fd] : fds_) {
      SendKill(fd);  // never outlive the test, whatever it found
      close(fd);
    }
  }
  // Reads the two pids (the fifo opened before the replica starts).
  bool Read() {
    int fd = open(fifo_.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    std::string text;
    auto until = std::chrono::steady_clock::now() + seconds(10);
    while (std::count(text.begin(), text.end(), '\n') < 2 &&
           std::chrono::steady_clock::now() < until) {
      pollfd pfd{fd, POLLIN, 0};
      poll(&pfd, 1, 100);
      char buf[64];
      ssize_t n = read(fd, buf, sizeof(buf));
      if (n > 0) text.append(buf, static_cast<size_t>(n));
    }
    close(fd);
    std::istringstream pids(text);
    int said = 0;
    for (pid_t pid; pids >> pid; ++said) {
      int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
      // ESRCH: the daemon said its pid and is already gone (killed and
      // reaped by the shim as the replica ended): it has ended, as wanted.
      if (pidfd >= 0) {
        fds_.emplace_back(pid, pidfd);
      } else if (errno != ESRCH) {
        return false;
      }
    }
    return said == 2;
  }
  // Whether every daemon has ended within 10 s: each pidfd polls readable.
  bool AllEnd() {
    auto until = std::chrono::steady_clock::now() + seconds(10);
    for (const auto& [pid, fd] : fds_) {
      auto left =
          std::chrono::duration_cast<milliseconds>(until - std::chrono::steady_clock::now());
      pollfd pfd{fd, POLLIN, 0};
      if (poll(&pfd, 1, static_cast<int>(std::max<int64_t>(0, left.count()))) != 1) return false;
    }
    return true;
  }

 private:
  static void SendKill(int fd) { syscall(SYS_pidfd_send_signal, fd, SIGKILL, nullptr, 0); }
  fs::path fifo_;
  std::vector<std::pair<pid_t, int>> fds_;
};

// A replica that ends, is stopped, or is killed takes all it started with
// it under the shim, which is the subreaper of its orphans; a group kill
// alone leaves setsid and double-forked daemons running.
TEST_F(ProcessTest, UnderAShimNothingAReplicaStartedOutlivesIt) {
  for (bool detach : {false, true}) {
    SCOPED_TRACE(detach ? "detached" : "attached");
    {
      Daemons daemons(dir_ / "daemons");
      Process p = *Process::Start(UnderShim(Shell(DaemonsThen("exit 4")), dir_, detach));
      ASSERT_TRUE(daemons.Read());
      EXPECT_EQ(p.WaitFor(seconds(10)), (ExitStatus{4, 0}));  // the replica's own end
      EXPECT_TRUE(daemons.AllEnd());
    }
    fs::remove(dir_ / "daemons");
    {
      Daemons daemons(dir_ / "daemons");
      Process p = *Process::Start(UnderShim(Shell(DaemonsThen("exec sleep 1000")), dir_, detach));
      ASSERT_TRUE(daemons.Read());
      EXPECT_EQ(p.Stop(seconds(10)), (ExitStatus{128 + SIGTERM, SIGTERM}));
      EXPECT_TRUE(daemons.AllEnd());
    }
    fs::remove(dir_ / "daemons");
    {
      Daemons daemons(dir_ / "daemons");
      // TERM ignored from the start: a stop that comes early kills nothing.
      std::optional<Process> p = *Process::Start(
          UnderShim(Shell("trap '' TERM; " + DaemonsThen("sleep 1000")), dir_, detach));
      ASSERT_TRUE(daemons.Read());
      EXPECT_EQ(p->Stop(milliseconds(0)), (ExitStatus{128 + SIGKILL, SIGKILL}));
      EXPECT_TRUE(daemons.AllEnd());
    }
    fs::remove(dir_ / "daemons");
  }
}

// Under `trainyard run` the shim is not detached: when trainyard dies
// (here: a forked starter, SIGKILLed), the replica and
// all it started end too.
TEST_F(ProcessTest, AnAttachedShimEndsEverythingWhenTrainyardDies) {
  Daemons daemons(dir_ / "daemons");
  ProcessSpec spec = UnderShim(Shell(DaemonsThen("exec sleep 1000")), dir_);
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t starter = fork();
  if (starter == 0) {
    Result<Process> p = Process::Start(spec);
    pid_t pid = p.ok() ? p->pid() : 0;
    [[maybe_unused]] ssize_t n = write(fds[1], &pid, sizeof(pid));
    for (;;) pause();  // until the test kills it: as a crash would leave it
  }
  close(fds[1]);
  pid_t shim = 0;
  bool told = read(fds[0], &shim, sizeof(shim)) == static_cast<ssize_t>(sizeof(shim)) && shim > 0;
  close(fds[0]);
  int shim_fd = told ? static_cast<int>(syscall(SYS_pidfd_open, shim, 0)) : -1;
  bool daemons_ran = told && daemons.Read();
  kill(starter, SIGKILL);
  waitpid(starter, nullptr, 0);
  ASSERT_TRUE(daemons_ran);
  pollfd pfd{shim_fd, POLLIN, 0};
  EXPECT_EQ(poll(&pfd, 1, 10000), 1);
  close(shim_fd);
  EXPECT_TRUE(daemons.AllEnd());
}

TEST_F(ProcessTest, UnderAShimTheReplicasOwnEndIsReported) {
  Process exited = *Process::Start(UnderShim(Shell("echo hi; exit 3"), dir_));
  EXPECT_EQ(exited.WaitFor(seconds(10)), (ExitStatus{3, 0}));
  EXPECT_EQ(Log(), "hi\n");
  EXPECT_GT(exited.start_time(), 0u);
  // A graceful stop reaches the replica; the shim outlives it to record it.
  Process stopped = *Process::Start(UnderShim(Shell("exec sleep 100"), dir_));
  EXPECT_EQ(stopped.Stop(seconds(10)), (ExitStatus{128 + SIGTERM, SIGTERM}));
}

// bubblewrap on this machine, or "" (a sandbox's tests then skip).
std::string Bwrap() {
  Result<std::string> found = ResolveProgram("bwrap", "/usr/bin:/bin");
  return found.ok() ? *found : "";
}

// `spec` under a shim, in a sandbox with a host name of its own.
ProcessSpec Sandboxed(ProcessSpec spec, const fs::path& dir) {
  spec = UnderShim(std::move(spec), dir);
  spec.sandbox = {Bwrap(),         "--dev-bind",       "/", "/", "--unshare-uts", "--hostname",
                  "sandboxed-pod", "--die-with-parent"};
  return spec;
}

// In a sandbox, bwrap waits for the replica: it must neither die of the
// group's SIGTERM (which would end the replica's graceful stop at once) nor
// blur how the replica ended.
TEST_F(ProcessTest, InASandboxTheReplicaStopsGracefullyAndItsEndIsItsOwn) {
  TRAINYARD_NEEDS(!Bwrap().empty(), "bubblewrap");
  // Looked up in its own PATH, in its own directory, with its host name.
  Process exited = *Process::Start(Sandboxed(Shell("hostname; pwd; exit 3"), dir_));
  EXPECT_EQ(exited.WaitFor(seconds(10)), (ExitStatus{3, 0}));
  EXPECT_EQ(Log(), "sandboxed-pod\n" + dir_.string() + "\n");
  Process killed = *Process::Start(Sandboxed(Shell("kill -KILL $$"), dir_));
  EXPECT_EQ(killed.WaitFor(seconds(10)), (ExitStatus{128 + SIGKILL, SIGKILL}));
  // A TERM handled: the replica's own exit code, after its handler ran.
  Process polite = *Process::Start(Sandboxed(
      Shell("trap 'echo stopping; exit 5' TERM; touch ready; while :; do sleep 0.05; done"), dir_));
  auto until = std::chrono::steady_clock::now() + seconds(10);
  while (!fs::exists(dir_ / "ready") && std::chrono::steady_clock::now() < until) {
    std::this_thread::yield();
  }
  EXPECT_EQ(polite.Stop(seconds(10)), (ExitStatus{5, 0}));
  EXPECT_THAT(Log(), ::testing::HasSubstr("stopping\n"));
  // One that left the group hears the stop from the shim.
  fs::remove(dir_ / "ready");
  Process away = *Process::Start(Sandboxed(
      Shell("exec setsid sh -c 'trap \"exit 6\" TERM; touch ready; while :; do sleep 0.05; done'"),
      dir_));
  until = std::chrono::steady_clock::now() + seconds(10);
  while (!fs::exists(dir_ / "ready") && std::chrono::steady_clock::now() < until) {
    std::this_thread::yield();
  }
  EXPECT_EQ(away.Stop(seconds(10)), (ExitStatus{6, 0}));
  // A program that is not there: the kubelet's exit code for it, and why.
  Process missing = *Process::Start(Sandboxed({.argv = {"no-such-program"},
                                               .env = {{"PATH", "/usr/bin:/bin"}},
                                               .log_path = (dir_ / "log").string()},
                                              dir_));
  EXPECT_EQ(missing.WaitFor(seconds(10)), (ExitStatus{128, 0}));
  EXPECT_THAT(Log(), ::testing::HasSubstr("cannot run no-such-program: No such file"));
}

// A stop that comes while the sandbox is still being made is not lost:
// the replica hears it once it runs, long before the grace period ends.
TEST_F(ProcessTest, InASandboxAStopAtOnceReachesTheReplica) {
  TRAINYARD_NEEDS(!Bwrap().empty(), "bubblewrap");
  for (int i = 0; i < 5; ++i) {
    Process p = *Process::Start(Sandboxed(Shell("exec sleep 100"), dir_));
    auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(p.Stop(seconds(30)), (ExitStatus{128 + SIGTERM, SIGTERM}));
    EXPECT_LT(std::chrono::steady_clock::now() - start, seconds(10));
  }
}

TEST_F(ProcessTest, InASandboxNothingAReplicaStartedOutlivesIt) {
  TRAINYARD_NEEDS(!Bwrap().empty(), "bubblewrap");
  {
    Daemons daemons(dir_ / "daemons");
    Process p = *Process::Start(Sandboxed(Shell(DaemonsThen("exit 4")), dir_));
    ASSERT_TRUE(daemons.Read());
    EXPECT_EQ(p.WaitFor(seconds(10)), (ExitStatus{4, 0}));
    EXPECT_TRUE(daemons.AllEnd());
  }
  fs::remove(dir_ / "daemons");
  {
    Daemons daemons(dir_ / "daemons");
    std::optional<Process> p =
        *Process::Start(Sandboxed(Shell("trap '' TERM; " + DaemonsThen("sleep 1000")), dir_));
    ASSERT_TRUE(daemons.Read());
    EXPECT_EQ(p->Stop(milliseconds(0)), (ExitStatus{128 + SIGKILL, SIGKILL}));
    EXPECT_TRUE(daemons.AllEnd());
  }
}

// A trainyard that dies (here: a forked child that starts a replica and
// exits without cleaning up) leaves its detached shims running; another
// adopts them by pid and start time and learns how each replica ended.
TEST_F(ProcessTest, AShimOutlivesItsStarterAndIsAdoptedByAnother) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  ProcessSpec spec = UnderShim(Shell("sleep 0.5; echo done; exit 7"), dir_, /*detach=*/true);
  pid_t starter = fork();
  if (starter == 0) {
    Result<Process> p = Process::Start(spec);
    uint64_t ids[2] = {p.ok() ? static_cast<uint64_t>(p->pid()) : 0, p.ok() ? p->start_time() : 0};
    [[maybe_unused]] ssize_t n = write(fds[1], ids, sizeof(ids));
    _exit(0);  // no destructors: as a SIGKILL would leave it
  }
  close(fds[1]);
  uint64_t ids[2] = {0, 0};
  ASSERT_EQ(read(fds[0], ids, sizeof(ids)), static_cast<ssize_t>(sizeof(ids)));
  close(fds[0]);
  waitpid(starter, nullptr, 0);
  ASSERT_GT(ids[0], 0u);
  pid_t pid = static_cast<pid_t>(ids[0]);
  EXPECT_EQ(Process::Adopt(pid, ids[1] + 1, spec.exit_path).status().code(),
            StatusCode::kNotFound);  // another process under a reused pid
  Result<Process> adopted = Process::Adopt(pid, ids[1], spec.exit_path);
  ASSERT_TRUE(adopted.ok()) << adopted.status().ToString();
  EXPECT_TRUE(adopted->running());
  EXPECT_EQ(adopted->WaitFor(seconds(10)), (ExitStatus{7, 0}));
  EXPECT_EQ(Log(), "done\n");
  EXPECT_EQ(Process::Adopt(pid, ids[1], spec.exit_path).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(ReadExitFile(spec.exit_path), (ExitStatus{7, 0}));
}

// A command name may hold ") (": the fields are read after the last ')'.
TEST(ProcStatTest, ReadsPastACommandNameOfParentheses) {
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    prctl(PR_SET_NAME, "x) (y 1 2");
    pause();
    _exit(0);
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  std::string comm;
  while (comm != "x) (y 1 2\n" && std::chrono::steady_clock::now() < deadline) {
    std::ifstream in("/proc/" + std::to_string(child) + "/comm");
    std::stringstream text;
    text << in.rdbuf();
    comm = text.str();
  }
  std::optional<ProcStat> stat = ReadProcStat(child);
  ASSERT_TRUE(stat.has_value());
  EXPECT_NE(stat->state, 'Z');
  EXPECT_EQ(stat->ppid, getpid());
  EXPECT_EQ(stat->pgrp, getpgrp());
  EXPECT_EQ(ProcessStartTime(child), stat->start_time);
  kill(child, SIGKILL);
  deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (ProcessStartTime(child) && std::chrono::steady_clock::now() < deadline) {
  }
  EXPECT_FALSE(ProcessStartTime(child).has_value()) << "a zombie runs no more";
  EXPECT_EQ(ReadProcStat(child)->state, 'Z');
  waitpid(child, nullptr, 0);
  EXPECT_FALSE(ReadProcStat(child).has_value());
}

TEST(ResolveProgramTest, SearchesTheGivenPath) {
  EXPECT_EQ(*ResolveProgram("sh", "/nonexistent:/bin"), "/bin/sh");
  EXPECT_EQ(*ResolveProgram("/bin/sh", ""), "/bin/sh");
  EXPECT_FALSE(ResolveProgram("sh", "/nonexistent").ok());
}

}  // namespace
}  // namespace trainyard::runtime
