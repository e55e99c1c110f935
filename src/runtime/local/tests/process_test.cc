// Real processes: these tests fork and exec /bin/sh and coreutils.
#include "runtime/local/process.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

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

ProcessSpec UnderShim(ProcessSpec spec, const fs::path& dir) {
  spec.shim = TRAINYARD_SHIM;
  spec.exit_path = (dir / "exit").string();
  return spec;
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

// A trainyard that dies (here: a forked child that starts a replica and
// exits without cleaning up) leaves its shims running; another adopts them
// by pid and start time and learns how each replica ended.
TEST_F(ProcessTest, AShimOutlivesItsStarterAndIsAdoptedByAnother) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  ProcessSpec spec = UnderShim(Shell("sleep 0.5; echo done; exit 7"), dir_);
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

TEST(ResolveProgramTest, SearchesTheGivenPath) {
  EXPECT_EQ(*ResolveProgram("sh", "/nonexistent:/bin"), "/bin/sh");
  EXPECT_EQ(*ResolveProgram("/bin/sh", ""), "/bin/sh");
  EXPECT_FALSE(ResolveProgram("sh", "/nonexistent").ok());
}

}  // namespace
}  // namespace trainyard::runtime
