// `trainyard exec [--state DIR] [-n NS] POD -- COMMAND...`: runs a command
// inside a running replica, as `kubectl exec` does in a container: with the
// environment and working directory its process was started with (read
// from /proc), in its process group (so it stops with the replica),
// replacing this process. MPI launchers use it as their
// rsh agent to start ranks inside the worker replicas.
#pragma once

#include <string>
#include <vector>

namespace trainyard::cli {

struct ExecOptions {
  std::string state;  // a run's state directory; default: the newest run under home
  std::string home;
  std::string namespace_ = "default";
  std::string pod;
  std::string container;  // empty: the pod's first container
  // Keeps the process group it was started in rather than joining the
  // replica's: a server's exec session ends that group whole.
  bool own_process_group = false;
  std::vector<std::string> command;
};

// Returns only on failure (exit code 1, message on stderr).
int RunExec(const ExecOptions& options);

}  // namespace trainyard::cli
