#include "common/subprocess.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <map>

extern char** environ;

namespace trainyard {
namespace {

// "NAME=value" strings: trainyard's environment with `extra` applied.
std::vector<std::string> EnvironmentWith(
    const std::vector<std::pair<std::string, std::string>>& extra) {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string_view entry(*e);
    size_t eq = entry.find('=');
    if (eq != std::string_view::npos) env[std::string(entry.substr(0, eq))] = entry.substr(eq + 1);
  }
  for (const auto& [name, value] : extra) env[name] = value;
  std::vector<std::string> out;
  for (const auto& [name, value] : env) out.push_back(name + "=" + value);
  return out;
}

std::vector<char*> Pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// Reads `fd` to its end, handing each line on and keeping the tail.
void ReadLines(int fd, const ToolOptions& options, std::string& kept) {
  std::string pending;
  char buffer[4096];
  for (;;) {
    ssize_t n = read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    pending.append(buffer, static_cast<size_t>(n));
    size_t start = 0;
    for (size_t nl; (nl = pending.find('\n', start)) != std::string::npos; start = nl + 1) {
      std::string_view line(pending.data() + start, nl - start);
      if (options.on_line) options.on_line(line);
      kept.append(line).push_back('\n');
    }
    pending.erase(0, start);
    if (kept.size() > 2 * kToolOutputKept) kept.erase(0, kept.size() - kToolOutputKept);
  }
  if (!pending.empty()) {
    if (options.on_line) options.on_line(pending);
    kept += pending;
  }
  if (kept.size() > kToolOutputKept) kept.erase(0, kept.size() - kToolOutputKept);
}

}  // namespace

Result<ToolRun> RunTool(const std::vector<std::string>& argv, const ToolOptions& options) {
  if (argv.empty()) return InvalidArgumentError("no program to run");
  // Everything the child needs is made before fork: after it, only
  // async-signal-safe calls.
  std::vector<std::string> args = argv;
  std::vector<std::string> env = EnvironmentWith(options.env);
  std::vector<char*> arg_ptrs = Pointers(args);
  std::vector<char*> env_ptrs = Pointers(env);
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0)
    return InternalError(fmt::format("pipe: {}", std::strerror(errno)));
  int ready[2];  // closed by a successful exec; carries errno otherwise
  if (pipe2(ready, O_CLOEXEC) != 0) {
    close(fds[0]);
    close(fds[1]);
    return InternalError(fmt::format("pipe: {}", std::strerror(errno)));
  }
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) return InternalError(fmt::format("fork: {}", std::strerror(errno)));
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    int devnull = open("/dev/null", O_RDONLY);
    dup2(devnull, STDIN_FILENO);
    dup2(fds[1], STDOUT_FILENO);
    dup2(fds[1], STDERR_FILENO);
    execvpe(arg_ptrs[0], arg_ptrs.data(), env_ptrs.data());
    int error = errno;
    (void)!write(ready[1], &error, sizeof error);
    _exit(127);
  }
  close(fds[1]);
  close(ready[1]);
  int exec_errno = 0;
  ssize_t got = read(ready[0], &exec_errno, sizeof exec_errno);
  close(ready[0]);
  ToolRun run;
  if (got <= 0) ReadLines(fds[0], options, run.output);
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (got > 0) {
    return FailedPreconditionError(
        fmt::format("cannot run {}: {}", argv[0], std::strerror(exec_errno)));
  }
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return run;
}

}  // namespace trainyard
