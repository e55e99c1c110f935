#include "runtime/local/process.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <sstream>

#include "runtime/local/shim_protocol.h"

namespace trainyard::runtime {
namespace {

// Kubernetes' default PATH for a container whose image sets none.
constexpr const char* kDefaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

// What the child writes to the parent, through a close-on-exec pipe, when
// a step before exec fails: the step and errno.
struct ChildFailure {
  int step;
  int error;
};
constexpr const char* kSteps[] = {"set its process group",
                                  "open /dev/null",
                                  "change directory",
                                  "redirect output",
                                  "exec",
                                  "switch to its user",
                                  "join its control group",
                                  "keep its user namespace"};

bool IsExecutableFile(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

// The kernel's struct sigaction (not glibc's), for rt_sigaction(2).
struct KernelSigaction {
  void (*handler)(int);
  unsigned long flags;
  void (*restorer)();
  uint64_t mask;
};

// Everything the child needs, built before fork: after fork only
// async-signal-safe calls are allowed.
struct Prepared {
  std::string program;
  std::vector<std::string> storage;
  std::vector<char*> argv;
  std::vector<char*> envp;
  std::vector<int> cgroup_fds;  // cgroup.procs of each group to join, open for writing
  int userns_fd = -1;           // ProcessSpec::userns, open
};

// Writes this process's pid to `fd` (a cgroup.procs): async-signal-safe.
bool JoinCgroup(int fd) {
  char digits[16];
  size_t n = 0;
  for (pid_t pid = static_cast<pid_t>(syscall(SYS_getpid)); pid > 0 || n == 0; pid /= 10) {
    digits[n++] = static_cast<char>('0' + pid % 10);
  }
  char text[16];
  for (size_t i = 0; i < n; ++i) text[i] = digits[n - 1 - i];
  return write(fd, text, n) == static_cast<ssize_t>(n);
}

Prepared Prepare(const ProcessSpec& spec, std::string program) {
  Prepared p;
  p.program = std::move(program);
  p.storage.reserve(spec.argv.size() + spec.env.size());
  for (const std::string& arg : spec.argv) p.storage.push_back(arg);
  for (const auto& [name, value] : spec.env) p.storage.push_back(name + "=" + value);
  for (size_t i = 0; i < p.storage.size(); ++i) {
    (i < spec.argv.size() ? p.argv : p.envp).push_back(p.storage[i].data());
  }
  p.argv.push_back(nullptr);
  p.envp.push_back(nullptr);
  return p;
}

[[noreturn]] void ChildFail(int pipe_fd, int step) {
  ChildFailure failure{step, errno};
  [[maybe_unused]] ssize_t n = write(pipe_fd, &failure, sizeof(failure));
  _exit(127);
}

// Closes every fd from 3 up but `a` and `b` (each -1, or 3 and up):
// async-signal-safe.
void CloseAllBut(int a, int b) {
  unsigned from = 3;
  for (int keep : {std::min(a, b), std::max(a, b)}) {
    if (keep < 3) continue;
    if (static_cast<unsigned>(keep) > from) close_range(from, static_cast<unsigned>(keep) - 1, 0);
    from = static_cast<unsigned>(keep) + 1;
  }
  close_range(from, ~0U, 0);
}

// Becomes `user`. Raw system calls: glibc's wrappers would signal every
// thread of trainyard (they think the vfork child is multithreaded), and
// the kernel's credentials are the calling thread's alone.
bool SwitchUser(const Credentials& user) {
  return syscall(SYS_setgroups, user.groups.size(), user.groups.data()) == 0 &&
         syscall(SYS_setresgid, user.gid, user.gid, user.gid) == 0 &&
         syscall(SYS_setresuid, user.uid, user.uid, user.uid) == 0;
}

[[noreturn]] void RunChild(const Prepared& p, const ProcessSpec& spec, int log_fd, int pipe_fd,
                           pid_t parent) {
  if (setpgid(0, 0) != 0) ChildFail(pipe_fd, 0);
  for (int fd : p.cgroup_fds) {
    if (!JoinCgroup(fd)) ChildFail(pipe_fd, 6);
  }
  // Under a shim the shim switches (it stays root); else this child does.
  // Before the death signal: a change of user clears it.
  if (spec.shim.empty() && spec.user && !SwitchUser(*spec.user)) ChildFail(pipe_fd, 5);
  // A container's default: files it makes are its own to share or not.
  umask(022);
  // A detached shim is meant to outlive trainyard; anything else dies with
  // it: a shim by killing its replica and all the replica started.
  if (!spec.detach || spec.shim.empty()) {
    prctl(PR_SET_PDEATHSIG, spec.shim.empty() ? SIGKILL : ShimKillSignal());
    if (getppid() != parent) _exit(127);  // trainyard died before the line above
  }
  // Signals trainyard ignores or blocks must not be inherited. The raw
  // syscall, because glibc's signal() and sigaction() refuse its internal
  // signals (32, 33), and an ignore of those can come from whatever started
  // trainyard.
  // Every signal is still blocked (see Start): dispositions first, so no
  // handler of trainyard's can run here, then the mask.
  for (int sig = 1; sig < NSIG; ++sig) {
    KernelSigaction action{};
    action.handler = SIG_DFL;
    syscall(SYS_rt_sigaction, sig, &action, nullptr, sizeof(action.mask));
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  int null_fd = open("/dev/null", O_RDONLY);
  if (null_fd < 0) ChildFail(pipe_fd, 1);
  if (!spec.working_dir.empty() && chdir(spec.working_dir.c_str()) != 0) ChildFail(pipe_fd, 2);
  if (dup2(null_fd, 0) < 0 || dup2(log_fd, 1) < 0 || dup2(log_fd, 2) < 0) ChildFail(pipe_fd, 3);
  // The user namespace its sandboxes join goes to its agreed fd, which
  // the failure pipe leaves first; kept open across exec.
  int keep = -1;
  if (p.userns_fd >= 0) {
    if (pipe_fd == kSandboxUsernsFd) {
      pipe_fd = fcntl(pipe_fd, F_DUPFD_CLOEXEC, kSandboxUsernsFd + 1);
      if (pipe_fd < 0) _exit(127);
    }
    bool placed = p.userns_fd == kSandboxUsernsFd
                      ? fcntl(kSandboxUsernsFd, F_SETFD, 0) == 0
                      : dup2(p.userns_fd, kSandboxUsernsFd) == kSandboxUsernsFd;
    if (!placed) ChildFail(pipe_fd, 7);
    keep = kSandboxUsernsFd;
  }
  // Leave the child only stdin, stdout, stderr, that fd, and the failure
  // pipe (which closes itself on exec).
  CloseAllBut(pipe_fd, keep);
  execve(p.program.c_str(), p.argv.data(), p.envp.data());
  ChildFail(pipe_fd, 4);
}

const char* SignalName(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev != nullptr ? abbrev : "?";
}

ExitStatus FromWaitStatus(const siginfo_t& info) {
  if (info.si_code == CLD_EXITED) return {info.si_status, 0};
  return {128 + info.si_status, info.si_status};
}

}  // namespace

std::string ShimUserArg(const Credentials& user) {
  std::string groups;
  for (gid_t g : user.groups) groups += fmt::format("{}{}", groups.empty() ? "" : ",", g);
  return fmt::format("--as={}:{}:{}", user.uid, user.gid, groups);
}

std::string ExitStatus::Describe() const {
  if (signal != 0)
    return fmt::format("killed by SIG{} (exit code {})", SignalName(signal), exit_code);
  return fmt::format("exit code {}", exit_code);
}

Result<std::string> ResolveProgram(const std::string& program, const std::string& path_env) {
  if (program.empty()) return InvalidArgumentError("the program to run is empty");
  if (program.find('/') != std::string::npos) {
    if (!IsExecutableFile(program))
      return NotFoundError(fmt::format("{}: not an executable file", program));
    return program;
  }
  std::string path = path_env.empty() ? kDefaultPath : path_env;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    std::string dir = path.substr(start, end - start);
    std::string candidate = (dir.empty() ? "." : dir) + "/" + program;
    if (IsExecutableFile(candidate)) return candidate;
    start = end + 1;
  }
  return NotFoundError(fmt::format("{}: not found in PATH={}", program, path));
}

namespace {

// What a shim runs for `spec`, and the program it execs: trainyard-shim
// [--as=...] [--sandboxed] EXIT_FILE PROGRAM ARGV0 ARG..., in a sandbox
// with bwrap as PROGRAM and `trainyard-shim --exec [--as=...]` as bwrap's.
ProcessSpec Shimmed(const ProcessSpec& spec, const std::string& program) {
  ProcessSpec shimmed = spec;
  shimmed.argv = {spec.shim};
  // In a sandbox the user is switched to inside it, by `--exec`: bwrap
  // runs as trainyard, root in no user namespace of its own or otherwise
  // in the one `userns` names, so that all sandboxes share one (an MPI
  // launcher's rsh agent looks into its workers' processes, which the
  // kernel refuses across user namespaces).
  bool sandboxed = !spec.sandbox.empty();
  if (spec.user && !sandboxed) shimmed.argv.push_back(ShimUserArg(*spec.user));
  if (sandboxed) shimmed.argv.push_back("--sandboxed");
  if (sandboxed && !spec.root_overlay_target.empty()) {
    shimmed.argv.insert(shimmed.argv.end(),
                        {"--overlay", spec.root_overlay_target, spec.root_overlay_data});
  }
  shimmed.argv.push_back(spec.exit_path);
  shimmed.argv.push_back(program);
  if (sandboxed) {
    shimmed.argv.insert(shimmed.argv.end(), spec.sandbox.begin(), spec.sandbox.end());
    shimmed.argv.insert(shimmed.argv.end(), {"--info-fd", std::to_string(kSandboxInfoFd)});
    if (!spec.userns.empty()) {
      shimmed.argv.insert(shimmed.argv.end(), {"--userns", std::to_string(kSandboxUsernsFd)});
    }
    if (!spec.working_dir.empty()) {
      shimmed.argv.insert(shimmed.argv.end(), {"--chdir", spec.working_dir});
    }
    const std::string& inside = spec.sandbox_shim.empty() ? spec.shim : spec.sandbox_shim;
    shimmed.argv.insert(shimmed.argv.end(), {"--", inside, "--exec"});
    if (spec.user) shimmed.argv.push_back(ShimUserArg(*spec.user));
    shimmed.working_dir.clear();  // entered in the sandbox, not here
  }
  shimmed.argv.insert(shimmed.argv.end(), spec.argv.begin(), spec.argv.end());
  return shimmed;
}

}  // namespace

namespace {

// The program to exec: argv[0] found on the spec's PATH, or the sandbox's
// (its mounts may be what holds the program and the directory).
Result<std::string> ProgramOf(const ProcessSpec& spec) {
  if (spec.argv.empty()) return InvalidArgumentError("nothing to run: no command and no args");
  if (!spec.sandbox.empty() && spec.shim.empty()) {
    return InvalidArgumentError("a sandboxed process needs a shim");
  }
  if (!spec.sandbox.empty()) return spec.sandbox[0];
  std::string path_env;
  for (const auto& [name, value] : spec.env) {
    if (name == "PATH") path_env = value;
  }
  ASSIGN_OR_RETURN(std::string program, ResolveProgram(spec.argv[0], path_env));
  if (!spec.working_dir.empty()) {
    struct stat st {};
    if (stat(spec.working_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      return NotFoundError(fmt::format("working directory {} does not exist", spec.working_dir));
    }
  }
  return program;
}

// The user namespace and control groups the child enters, opened into
// `prepared`; on an error, whatever of them was opened is closed.
Status OpenJoins(const ProcessSpec& spec, Prepared& prepared) {
  auto close_all = [&] {
    for (int fd : prepared.cgroup_fds) close(fd);
    prepared.cgroup_fds.clear();
    if (prepared.userns_fd >= 0) close(prepared.userns_fd);
    prepared.userns_fd = -1;
  };
  if (!spec.userns.empty()) {
    prepared.userns_fd = open(spec.userns.c_str(), O_RDONLY | O_CLOEXEC);
    if (prepared.userns_fd < 0) {
      return UnavailableError(
          fmt::format("cannot open the user namespace {}: {}", spec.userns, strerror(errno)));
    }
  }
  for (const std::string& dir : spec.cgroups) {
    int fd = open((dir + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
      int open_errno = errno;
      close_all();
      return UnavailableError(
          fmt::format("cannot join control group {}: {}", dir, strerror(open_errno)));
    }
    prepared.cgroup_fds.push_back(fd);
  }
  return OkStatus();
}

// After the fork: the child's report that a step before exec failed, read
// from `report` (closed), or nothing once exec closed it.
Status AwaitExec(pid_t pid, int report, const std::string& program) {
  ChildFailure failure{};
  ssize_t n;
  do {
    n = read(report, &failure, sizeof(failure));
  } while (n < 0 && errno == EINTR);
  close(report);
  if (n != sizeof(failure)) return OkStatus();
  siginfo_t info{};
  waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED);
  return UnavailableError(
      fmt::format("cannot {} for {}: {}", kSteps[failure.step], program, strerror(failure.error)));
}

}  // namespace

Result<Process> Process::Start(const ProcessSpec& spec) {
  ASSIGN_OR_RETURN(std::string program, ProgramOf(spec));
  int log_fd = open(spec.log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) {
    return UnavailableError(fmt::format("cannot open log {}: {}", spec.log_path, strerror(errno)));
  }
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    close(log_fd);
    return UnavailableError(fmt::format("pipe: {}", strerror(errno)));
  }
  ProcessSpec shimmed;
  if (!spec.shim.empty()) {
    shimmed = Shimmed(spec, program);
    // A stale exit file from an earlier run must not be read as this one's.
    unlink(spec.exit_path.c_str());
    program = spec.shim;
  }
  Prepared prepared = Prepare(spec.shim.empty() ? spec : shimmed, program);
  if (Status opened = OpenJoins(spec, prepared); !opened.ok()) {
    close(log_fd);
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    return opened;
  }
  pid_t parent = getpid();
  // vfork: the child borrows trainyard's memory until it execs, so no page
  // table is copied (fork was most of a launch's CPU). It only calls
  // async-signal-safe functions on what Prepare built, and never returns.
  // Signals stay blocked until it has reset their handlers, which would
  // otherwise run in the child on trainyard's memory.
  sigset_t all, saved;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &saved);
  pid_t pid = vfork();
  // The spec the child runs is chosen there: no local variable may be
  // live across vfork (the child could clobber it).
  if (pid == 0) RunChild(prepared, spec.shim.empty() ? spec : shimmed, log_fd, pipe_fds[1], parent);
  int fork_errno = errno;
  pthread_sigmask(SIG_SETMASK, &saved, nullptr);
  for (int fd : prepared.cgroup_fds) close(fd);
  if (prepared.userns_fd >= 0) close(prepared.userns_fd);
  close(log_fd);
  close(pipe_fds[1]);
  if (pid < 0) {
    close(pipe_fds[0]);
    return UnavailableError(fmt::format("fork: {}", strerror(fork_errno)));
  }
  // The parent sets the group too, so that it exists before Start returns
  // whichever of the two runs first.
  setpgid(pid, pid);
  RETURN_IF_ERROR(AwaitExec(pid, pipe_fds[0], program));
  // glibc 2.36 declares pidfd_open without C linkage for C++; call it directly.
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) {
    kill(-pid, SIGKILL);
    siginfo_t info{};
    waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED);
    return UnavailableError(fmt::format("pidfd_open: {}", strerror(errno)));
  }
  fcntl(pidfd, F_SETFD, FD_CLOEXEC);
  Process process(pid, pidfd);
  if (!spec.shim.empty()) {
    process.shim_ = true;
    process.exit_path_ = spec.exit_path;
    // Ours and not reaped yet: its start time is readable even if a quick
    // replica has already ended and the shim with it.
    std::optional<ProcStat> stat = ReadProcStat(pid);
    process.start_time_ = stat ? stat->start_time : 0;
  }
  return process;
}

std::optional<ProcStat> ReadProcStat(pid_t pid) {
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string stat;
  if (!std::getline(in, stat)) return std::nullopt;
  // The command (field 2) is in parentheses and may hold spaces and
  // parentheses of its own: the fields go on after the last ')'.
  size_t close = stat.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(stat.substr(close + 1));
  ProcStat out;
  std::string skip;
  if (!(fields >> out.state >> out.ppid >> out.pgrp)) return std::nullopt;
  for (int i = 6; i < 22; ++i) fields >> skip;  // fields 6 to 21
  if (!(fields >> out.start_time)) return std::nullopt;
  return out;
}

std::optional<uint64_t> ProcessStartTime(pid_t pid) {
  std::optional<ProcStat> stat = ReadProcStat(pid);
  if (!stat || !stat->running()) return std::nullopt;
  return stat->start_time;
}

std::optional<ExitStatus> ReadExitFile(const std::string& path) {
  std::ifstream in(path);
  std::string kind;
  int value = -1;
  if (!(in >> kind >> value) || value < 0) return std::nullopt;
  if (kind == "exit") return ExitStatus{value, 0};
  if (kind == "signal") return ExitStatus{128 + value, value};
  return std::nullopt;
}

Result<Process> Process::Adopt(pid_t pid, uint64_t start_time, std::string exit_path) {
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) return NotFoundError(fmt::format("process {} is gone", pid));
  fcntl(pidfd, F_SETFD, FD_CLOEXEC);
  // Checked after the pidfd is held: it names this process even if the pid
  // is reused later.
  if (ProcessStartTime(pid) != start_time) {
    close(pidfd);
    return NotFoundError(fmt::format("process {} is gone (the pid is another's now)", pid));
  }
  Process process(pid, pidfd);
  process.start_time_ = start_time;
  process.exit_path_ = std::move(exit_path);
  process.shim_ = true;
  process.adopted_ = true;
  return process;
}

Process::Process(Process&& other) noexcept { *this = std::move(other); }

Process& Process::operator=(Process&& other) noexcept {
  if (this != &other) {
    Release();
    pid_ = std::exchange(other.pid_, -1);
    pidfd_ = std::exchange(other.pidfd_, -1);
    start_time_ = std::exchange(other.start_time_, 0);
    exit_path_ = std::exchange(other.exit_path_, "");
    shim_ = std::exchange(other.shim_, false);
    adopted_ = std::exchange(other.adopted_, false);
    exit_ = std::exchange(other.exit_, std::nullopt);
  }
  return *this;
}

Process::~Process() { Release(); }

void Process::Kill() {
  Signal(SIGKILL);
  // A shim's cleanup is a /proc scan: a wedged one (stopped, say) must not
  // hold trainyard, so then its group at least is killed.
  if (!shim_ || WaitFor(std::chrono::seconds(5))) return;
  kill(-pid_, SIGKILL);
}

void Process::Release() {
  if (pid_ > 0 && !exit_) {
    Kill();
    WaitFor(std::chrono::hours(1));
  }
  if (pidfd_ >= 0) close(pidfd_);
  pid_ = -1;
  pidfd_ = -1;
}

std::optional<ExitStatus> Process::TryWaitAdopted() {
  pollfd pfd{pidfd_, POLLIN, 0};
  if (poll(&pfd, 1, 0) != 1) return std::nullopt;
  // Gone; init reaped it. No group kill: the shim killed its group itself,
  // and the group id may be another's by now.
  exit_ = ReadExitFile(exit_path_).value_or(ExitStatus{128 + SIGKILL, SIGKILL});
  return exit_;
}

std::optional<ExitStatus> Process::TryWait() {
  if (exit_ || pid_ <= 0) return exit_;
  if (adopted_) return TryWaitAdopted();
  // Look without reaping: while the leader is a zombie its pid, and so the
  // group id, cannot be reused, so the group kill below cannot hit a
  // stranger.
  siginfo_t info{};
  if (waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0 ||
      info.si_pid == 0) {
    return std::nullopt;
  }
  kill(-pid_, SIGKILL);  // what the leader left behind in its group dies with it
  waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED);
  exit_ = FromWaitStatus(info);
  // A shim ends by killing its group, itself included: how the replica
  // ended is in its exit file (absent when the shim was killed first).
  if (!exit_path_.empty()) exit_ = ReadExitFile(exit_path_).value_or(*exit_);
  return exit_;
}

std::optional<ExitStatus> Process::WaitFor(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!TryWait()) {
    auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return std::nullopt;
    // Rounded up, so a grace period is never cut short.
    auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - now);
    pollfd pfd{pidfd_, POLLIN, 0};
    poll(&pfd, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
  }
  return exit_;
}

void Process::Signal(int signal) const {
  if (pid_ <= 0 || exit_) return;
  if (signal == SIGKILL && shim_) {
    kill(pid_, ShimKillSignal());  // the shim alone: it ends the rest, then itself
    return;
  }
  kill(-pid_, signal);
}

ExitStatus Process::Stop(std::chrono::milliseconds grace) {
  if (exit_) return *exit_;
  Signal(SIGTERM);
  if (std::optional<ExitStatus> status = WaitFor(grace)) return *status;
  Kill();
  return *WaitFor(std::chrono::hours(1));
}

}  // namespace trainyard::runtime
