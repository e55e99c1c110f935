// One replica's process: started from an argv (never through a shell), in
// a process group of its own, with exactly the environment and working
// directory it is given, stdout and stderr appended to its log file.
//
// No process outlives its Process: the group is killed when the leader
// exits (as a container's other processes die with it), when Stop() runs
// out of grace, and when the Process is destroyed; the leader also gets
// SIGKILL if trainyard itself dies (PR_SET_PDEATHSIG).
//
// Under a shim (ProcessSpec::shim) the leader is trainyard-shim, the
// replica's parent and the subreaper of all it starts: when the replica
// ends, so does everything it started, daemons that left its process group
// included. The shim records the replica's end in an exit file; a detached
// one (`trainyard server`) survives trainyard's death, and a restarted
// trainyard adopts it (Adopt) by pid and start time.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "runtime/local/credentials.h"

namespace trainyard::runtime {

struct ProcessSpec {
  std::vector<std::string> argv;  // argv[0] without a '/' is looked up in the env's PATH
  std::vector<std::pair<std::string, std::string>> env;  // the whole environment
  std::string working_dir;                               // empty: trainyard's own
  std::string log_path;                                  // stdout and stderr, appended
  // trainyard-shim's path: run the program under it, recording its end in
  // `exit_path`. Empty: the program is trainyard's own child, and only its
  // process group is killed when it ends.
  std::string shim;
  std::string exit_path;
  // Under a shim: the shim outlives trainyard, to be adopted by the next
  // one. Otherwise trainyard's death ends it and all the replica started.
  bool detach = false;
  // Set: the program runs as this user (trainyard must be root). Under a
  // shim, the shim stays root, so that the replica can neither kill it nor
  // write how it ended, and switches only the replica.
  std::optional<Credentials> user;
  // Control groups (their directories) the process joins before it execs,
  // so that all it starts is held to their limits from its first
  // instruction.
  std::vector<std::string> cgroups;
  // Set (under a shim only): bubblewrap's path and arguments, up to its
  // program. The replica runs inside that sandbox, in namespaces of its
  // own; argv[0] is looked up, and working_dir entered, in there.
  std::vector<std::string> sandbox;
  // In a sandbox whose root is an image's: where the shim is inside it
  // (the sandbox binds it there; the image has none), and the overlay the
  // shim mounts, in a mount namespace of the replica's own, for bwrap to
  // bind as "/" (`trainyard-shim --overlay`). Empty: the machine's root.
  std::string sandbox_shim;
  std::string root_overlay_target;
  std::string root_overlay_data;  // overlayfs's lowerdir=...,upperdir=...,workdir=...
  // Set: a user namespace (its /proc/<pid>/ns/user) that the process gets
  // open at kSandboxUsernsFd, for bwrap's --userns, which a sandbox then
  // joins (added to `sandbox`'s arguments). All of an unprivileged
  // trainyard's sandboxes share one, so that their processes may look into
  // each other's, as an MPI launcher's rsh agent does into its workers';
  // the kernel refuses that across user namespaces.
  std::string userns;
};

// trainyard-shim's argument that makes it run the replica as `user`:
// "--as=UID:GID:G1,G2,...".
std::string ShimUserArg(const Credentials& user);

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
  // Takes over a shim another trainyard started: the process `pid` if it
  // still runs and started at `start_time` (a reused pid did not).
  // NOT_FOUND otherwise: then ReadExitFile says how it ended, if it could.
  static Result<Process> Adopt(pid_t pid, uint64_t start_time, std::string exit_path);

  Process(Process&& other) noexcept;
  Process& operator=(Process&& other) noexcept;
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;
  ~Process();  // kills the group and reaps the leader if still running

  pid_t pid() const { return pid_; }
  // When the leader started, in clock ticks since boot (/proc/<pid>/stat):
  // with the pid, what identifies it across a restart of trainyard.
  uint64_t start_time() const { return start_time_; }
  // Readable once the process has exited: for an event loop's poll().
  int pidfd() const { return pidfd_; }
  bool running() const { return !exit_.has_value(); }

  // The exit status when the process has exited; never blocks.
  std::optional<ExitStatus> TryWait();
  // Waits until the process exits, or `timeout` passes (nullopt).
  std::optional<ExitStatus> WaitFor(std::chrono::milliseconds timeout);
  // Sends `signal` to the whole process group. SIGKILL under a shim asks
  // the shim to kill the replica and everything it started (a group kill
  // would end the shim first and set the replica's daemons free).
  void Signal(int signal) const;
  // SIGTERM to the group, then SIGKILL once `grace` has passed.
  ExitStatus Stop(std::chrono::milliseconds grace);

 private:
  Process(pid_t pid, int pidfd) : pid_(pid), pidfd_(pidfd) {}
  void Release();
  // SIGKILL, and under a shim the group too if the shim does not end soon.
  void Kill();
  // The exit of an adopted shim, which is not trainyard's child to wait for.
  std::optional<ExitStatus> TryWaitAdopted();

  pid_t pid_ = -1;
  int pidfd_ = -1;
  uint64_t start_time_ = 0;
  std::string exit_path_;  // under a shim
  bool shim_ = false;      // the leader is trainyard-shim
  bool adopted_ = false;
  std::optional<ExitStatus> exit_;
};

// What /proc/<pid>/stat says of a process (proc(5)); nullopt when it is
// gone or cannot be read.
struct ProcStat {
  char state = '?';  // R, S, D, Z (a zombie), ...
  pid_t ppid = 0;
  pid_t pgrp = 0;
  uint64_t start_time = 0;  // clock ticks since boot
  // Not a zombie: whoever reaps it, a zombie runs no more.
  bool running() const { return state != 'Z' && state != 'X'; }
};
std::optional<ProcStat> ReadProcStat(pid_t pid);

// A process's start time in clock ticks since boot; nullopt when it is gone
// (a zombie has ended: whoever reaps it, it runs no more).
std::optional<uint64_t> ProcessStartTime(pid_t pid);

// What a shim recorded in its exit file; nullopt when it recorded nothing
// (it was killed before its replica ended).
std::optional<ExitStatus> ReadExitFile(const std::string& path);

// The path `program` resolves to through `path_env` (a PATH value), or
// NOT_FOUND. A program containing '/' is taken as it is.
Result<std::string> ResolveProgram(const std::string& program, const std::string& path_env);

}  // namespace trainyard::runtime
