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
#include "cli/run_command.h"
#include "runtime/local/process.h"

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

int RunExec(const ExecOptions& options) {
  std::string state = options.state;
  if (state.empty()) {
    state = NewestRun(options.home.empty() ? DefaultHome() : options.home);
    if (state.empty()) return Fail("no runs found; pass --state with a run's directory");
  }
  fs::path info_path = fs::path(state) / "pods" / options.namespace_ / options.pod / "exec.json";
  std::ifstream in(info_path);
  api::Json info = api::Json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!in || !info.is_object() || !info["pid"].is_number_integer()) {
    return Fail(
        fmt::format("pod {}/{} is not running in {}", options.namespace_, options.pod, state));
  }
  pid_t leader = info["pid"].get<pid_t>();
  if (kill(leader, 0) != 0 || getpgid(leader) != leader) {
    return Fail(fmt::format("pod {}/{} is not running (its process {} is gone)", options.namespace_,
                            options.pod, leader));
  }
  std::vector<std::string> env_text;
  std::string path_env;
  for (const api::Json& pair : info["env"]) {
    std::string name = pair[0].get<std::string>();
    std::string value = pair[1].get<std::string>();
    if (name == "PATH") path_env = value;
    env_text.push_back(name + "=" + value);
  }
  Result<std::string> program = runtime::ResolveProgram(options.command[0], path_env);
  if (!program.ok()) return Fail(program.status().message());
  std::string dir = info.value("workingDir", "");
  if (!dir.empty() && chdir(dir.c_str()) != 0) {
    return Fail(fmt::format("cannot enter {}: {}", dir, std::strerror(errno)));
  }
  // Joining the replica's process group makes the command stop with it. It
  // works from the same session (an MPI launcher's rsh agent); from another
  // terminal it does not, and the command then runs beside the replica.
  setpgid(0, leader);
  std::vector<char*> argv, envp;
  for (const std::string& a : options.command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (std::string& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);
  execve(program->c_str(), argv.data(), envp.data());
  return Fail(fmt::format("cannot run {}: {}", *program, std::strerror(errno)));
}

}  // namespace trainyard::cli
