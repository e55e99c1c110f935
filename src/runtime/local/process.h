// One replica's process: started from an argv (never through a shell), in
// a process group of its own, with exactly the environment and working
// directory it is given, stdout and stderr appended to its log file.
//
// No process outlives its Process: the group is killed when the leader
// exits (as a container's other processes die with it), when Stop() runs
// out of grace, and when the Process is destroyed; the leader also gets
// SIGKILL if trainyard itself dies (PR_SET_PDEATHSIG).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"

namespace trainyard::runtime {

struct ProcessSpec {
  std::vector<std::string> argv;  // argv[0] without a '/' is looked up in the env's PATH
  std::vector<std::pair<std::string, std::string>> env;  // the whole environment
  std::string working_dir;                               // empty: trainyard's own
  std::string log_path;                                  // stdout and stderr, appended
};

struct ExitStatus {
  int exit_code = 0;  // as Kubernetes reports it: 128 + signal when killed
  int signal = 0;     // the signal that ended it, or 0
  bool ok() const { return exit_code == 0; }
  std::string Describe() const;  // "exit code 1", "killed by SIGKILL (exit code 137)"
  bool operator==(const ExitStatus&) const = default;
};

class Process {
 public:
  // Starts the process. Fails, starting nothing, when the program cannot be
  // found or executed, the log cannot be opened, or the directory is missing.
  static Result<Process> Start(const ProcessSpec& spec);

  Process(Process&& other) noexcept;
  Process& operator=(Process&& other) noexcept;
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;
  ~Process();  // kills the group and reaps the leader if still running

  pid_t pid() const { return pid_; }
  // Readable once the process has exited: for an event loop's poll().
  int pidfd() const { return pidfd_; }
  bool running() const { return !exit_.has_value(); }

  // The exit status when the process has exited; never blocks.
  std::optional<ExitStatus> TryWait();
  // Waits until the process exits, or `timeout` passes (nullopt).
  std::optional<ExitStatus> WaitFor(std::chrono::milliseconds timeout);
  // Sends `signal` to the whole process group.
  void Signal(int signal) const;
  // SIGTERM to the group, then SIGKILL once `grace` has passed.
  ExitStatus Stop(std::chrono::milliseconds grace);

 private:
  Process(pid_t pid, int pidfd) : pid_(pid), pidfd_(pidfd) {}
  void Release();

  pid_t pid_ = -1;
  int pidfd_ = -1;
  std::optional<ExitStatus> exit_;
};

// The path `program` resolves to through `path_env` (a PATH value), or
// NOT_FOUND. A program containing '/' is taken as it is.
Result<std::string> ResolveProgram(const std::string& program, const std::string& path_env);

}  // namespace trainyard::runtime
