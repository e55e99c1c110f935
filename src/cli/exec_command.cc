#include "cli/exec_command.h"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "api/json.h"
#include "api/pod_object.h"
#include "cli/run_command.h"
#include "node/container_env.h"
#include "runtime/local/process.h"
#include "store/sqlite_store.h"

namespace trainyard::cli {
namespace {

namespace fs = std::filesystem;

// The newest run under `home`: run directories are named by their start time.
std::string NewestRun(const std::string& home) {
  std::string newest;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(fs::path(home) / "runs", ec)) {
    if (e.is_directory() && e.path().string() > newest) newest = e.path().string();
  }
  return newest;
}

int Fail(const std::string& message) {
  std::cerr << "trainyard exec: " << message << '\n';
  return 1;
}

}  // namespace

// The replica's running leader process, from the pod as the store has it
// ("trainyard://<pid>"), checked to be that pod's still: its own group
// leader, with the pod's HOSTNAME in its environment (a reused pid has
// neither).
Result<pid_t> LeaderOf(const std::string& state, const ExecOptions& options,
                       std::vector<std::string>& environ) {
  std::string who = options.namespace_ + "/" + options.pod;
  Result<api::Json> doc = store::SqliteStore::ReadCommitted(
      (fs::path(state) / "state.db").string(), {"Pod", options.namespace_, options.pod});
  if (!doc.ok()) return NotFoundError(fmt::format("pod {} not found in {}", who, state));
  Result<api::Pod> pod = api::DecodePod(*doc);
  if (!pod.ok() || pod->status.container_statuses.empty() ||
      !pod->status.container_statuses[0].state.running) {
    return FailedPreconditionError(fmt::format("pod {} is not running", who));
  }
  std::string id = pod->status.container_statuses[0].container_id;
  pid_t pid = std::atoi(id.substr(id.find("://") + 3).c_str());
  std::ifstream in(fmt::format("/proc/{}/environ", pid), std::ios::binary);
  std::string entry;
  bool ours = false;
  std::string hostname = "HOSTNAME=" + node::PodHostname(*pod);  // cut to 63 characters
  while (std::getline(in, entry, '\0')) {
    ours = ours || entry == hostname;
    environ.push_back(entry);
  }
  if (pid <= 0 || getpgid(pid) != pid || !ours) {
    return FailedPreconditionError(
        fmt::format("pod {} is not running (process {} is gone)", who, pid));
  }
  return pid;
}

int RunExec(const ExecOptions& options) {
  std::string state = options.state;
  if (state.empty()) {
    state = NewestRun(options.home.empty() ? DefaultHome() : options.home);
    if (state.empty()) return Fail("no runs found; pass --state with a run's directory");
  }
  std::vector<std::string> env_text;
  Result<pid_t> leader = LeaderOf(state, options, env_text);
  if (!leader.ok()) return Fail(leader.status().message());
  std::string path_env;
  for (const std::string& e : env_text) {
    if (e.starts_with("PATH=")) path_env = e.substr(5);
  }
  Result<std::string> program = runtime::ResolveProgram(options.command[0], path_env);
  if (!program.ok()) return Fail(program.status().message());
  std::error_code ec;
  fs::path dir = fs::read_symlink(fmt::format("/proc/{}/cwd", *leader), ec);
  if (ec || chdir(dir.c_str()) != 0) {
    return Fail(fmt::format("cannot enter the replica's directory {}", dir.string()));
  }
  // Joining the replica's process group makes the command stop with it. It
  // works from the same session (an MPI launcher's rsh agent); from another
  // terminal it does not, and the command then runs beside the replica.
  setpgid(0, *leader);
  std::vector<char*> argv, envp;
  for (const std::string& a : options.command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (std::string& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);
  execve(program->c_str(), argv.data(), envp.data());
  return Fail(fmt::format("cannot run {}: {}", *program, std::strerror(errno)));
}

}  // namespace trainyard::cli
