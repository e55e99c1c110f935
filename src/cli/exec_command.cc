#include "cli/exec_command.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include "api/json.h"
#include "api/pod_object.h"
#include "cli/run_command.h"
#include "node/container_env.h"
#include "runtime/local/process.h"
#include "store/sqlite_file_reader.h"

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

int FailExec(const std::string& message) {
  std::cerr << "trainyard exec: " << message << '\n';
  return 1;
}

}  // namespace

namespace {

std::string CommandOf(pid_t pid) {
  std::ifstream in(fmt::format("/proc/{}/comm", pid));
  std::string comm;
  std::getline(in, comm);
  return comm;
}

bool IsShim(pid_t pid) { return CommandOf(pid) == "trainyard-shim"; }

// The first child of `parent`, or 0.
pid_t ChildOf(pid_t parent) {
  std::error_code ec;
  for (auto it = fs::directory_iterator("/proc", ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    pid_t pid = std::atoi(it->path().filename().c_str());
    std::optional<runtime::ProcStat> stat = pid > 0 ? runtime::ReadProcStat(pid) : std::nullopt;
    if (stat && stat->ppid == parent) return pid;
  }
  return 0;
}

// The process group `pid` is bwrap in, or 0 when it is not bwrap.
pid_t InSandboxOf(pid_t pid) {
  std::optional<runtime::ProcStat> stat = runtime::ReadProcStat(pid);
  return stat && CommandOf(pid) == "bwrap" ? stat->pgrp : 0;
}

// The replica's program: `replica` itself, or in a sandbox (node/sandbox.h)
// the child of bwrap, which only waits for it.
Result<pid_t> ProgramOf(pid_t replica) {
  if (CommandOf(replica) != "bwrap") return replica;
  pid_t program = ChildOf(replica);
  // Until it is the replica's own, bwrap's child is still making the
  // sandbox, as trainyard's user: nothing runs beside that.
  std::string command = program == 0 ? "" : CommandOf(program);
  if (program == 0 || command == "bwrap" || command == "trainyard-shim") {
    return FailedPreconditionError("the replica's sandbox is still being made; try again");
  }
  return program;
}

// The replica's own process in the group `leader` leads: the leader, or
// under trainyard-shim the shim's child (the shim stays root; the replica
// may run as a user of its own). Never the shim itself: a command run as
// it would run as root, whoever the replica is.
Result<pid_t> ReplicaOf(pid_t leader) {
  std::error_code ec;
  for (auto it = fs::directory_iterator("/proc", ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    pid_t pid = std::atoi(it->path().filename().c_str());
    std::optional<runtime::ProcStat> stat = runtime::ReadProcStat(pid);
    if (pid > 0 && stat && stat->ppid == leader && stat->pgrp == leader) return pid;
  }
  if (IsShim(leader)) {
    return FailedPreconditionError(
        "the replica's process has left its process group (setsid?) or ended; there is no "
        "process to run the command beside");
  }
  return leader;
}

// Without the store (a replica's own user, as an MPI launcher is, may not
// read it): the process whose output goes to that pod's log under `state`,
// as the node agent names it; only a user's own processes show theirs.
Result<pid_t> FindByLog(const std::string& state, const ExecOptions& options) {
  // <pod>_<container>.log; any container's when none is named.
  std::string prefix =
      (fs::path(state) / "logs" / options.namespace_ /
       (options.pod + "_" + (options.container.empty() ? "" : options.container + ".log")))
          .string();
  std::error_code ec;
  for (auto it = fs::directory_iterator("/proc", ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    pid_t pid = std::atoi(it->path().filename().c_str());
    std::optional<runtime::ProcStat> stat = pid > 0 ? runtime::ReadProcStat(pid) : std::nullopt;
    // The leader, its child, or in a sandbox bwrap's child (bwrap itself
    // may not be looked into): never a daemon that took the log along.
    if (!stat ||
        (pid != stat->pgrp && stat->ppid != stat->pgrp && InSandboxOf(stat->ppid) != stat->pgrp)) {
      continue;
    }
    pid_t group = stat->pgrp;
    std::error_code link_ec;
    std::string out = fs::read_symlink(it->path() / "fd" / "1", link_ec).string();
    if (!link_ec && out.starts_with(prefix)) return group;
  }
  return FailedPreconditionError(
      fmt::format("pod {}/{} is not running (or not yours)", options.namespace_, options.pod));
}

// The pod a DNS name `<hostname>.<subdomain>...` names, as a Trainer MPI
// runtime's hostfile names its nodes. From the store where this user may
// read it: the running pod of that host name and subdomain that is not
// being deleted (a restarted JobSet's old pods share its names). Else (an
// MPI launcher's own user) from the processes this user can see: the one
// logging under `state` in the namespace whose HOSTNAME is that host.
Result<std::string> PodOfHost(const std::string& state, const ExecOptions& options) {
  size_t dot = options.pod.find('.');
  std::string host = options.pod.substr(0, dot);
  std::string rest = dot == std::string::npos ? "" : options.pod.substr(dot + 1);
  std::string subdomain = rest.substr(0, rest.find('.'));
  std::string db = (fs::path(state) / "state.db").string();
  if (access(db.c_str(), R_OK) == 0) {
    std::string found;
    RETURN_IF_ERROR(
        store::SqliteFileReader(db).Scan("Pod", options.namespace_, [&](const api::Json& pod) {
          if (found.empty() && api::StringAt(pod, {"spec", "hostname"}) == host &&
              api::StringAt(pod, {"spec", "subdomain"}) == subdomain &&
              api::StringAt(pod, {"status", "phase"}) == "Running" &&
              api::FindAt(pod, {"metadata", "deletionTimestamp"}) == nullptr) {
            found = api::StringAt(pod, {"metadata", "name"});
          }
        }));
    if (!found.empty()) return found;
    return NotFoundError(fmt::format("no running pod of {}/{}", options.namespace_, options.pod));
  }
  std::string hostname = "HOSTNAME=" + host;
  std::string logs = (fs::path(state) / "logs" / options.namespace_).string() + "/";
  std::error_code ec;
  for (auto it = fs::directory_iterator("/proc", ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    std::error_code link_ec;
    std::string out = fs::read_symlink(it->path() / "fd" / "1", link_ec).string();
    if (link_ec || !out.starts_with(logs)) continue;
    std::ifstream in(it->path() / "environ", std::ios::binary);
    for (std::string entry; std::getline(in, entry, '\0');) {
      // <pod>_<container>.log: neither name may hold a '_'.
      if (entry == hostname)
        return out.substr(logs.size(), out.find('_', logs.size()) - logs.size());
    }
  }
  return NotFoundError(fmt::format("no running pod of {}/{}", options.namespace_, options.pod));
}

// A running replica's processes: its group's leader (the shim, or the
// replica itself) and the replica's program (ReplicaOf, ProgramOf).
struct ReplicaProcesses {
  pid_t leader = 0;
  pid_t program = 0;
};

// The replica's running processes, from the pod as the store has it
// ("trainyard://<pid>"), checked to be that pod's still: the leader its
// own group's, the replica with the pod's HOSTNAME in its environment (a
// reused pid has neither).
Result<ReplicaProcesses> ProcessesOf(const std::string& state, const ExecOptions& options,
                                     std::vector<std::string>& environ) {
  std::string who = options.namespace_ + "/" + options.pod;
  std::string db = (fs::path(state) / "state.db").string();
  pid_t pid = 0;
  std::string hostname;  // "": its log named the pod already
  if (access(db.c_str(), R_OK) != 0 && errno == EACCES) {
    ASSIGN_OR_RETURN(pid, FindByLog(state, options));
  } else {
    Result<api::Json> doc =
        store::SqliteFileReader(db).Get({"Pod", options.namespace_, options.pod});
    if (!doc.ok()) return NotFoundError(fmt::format("pod {} not found in {}", who, state));
    Result<api::Pod> pod = api::DecodePod(*doc);
    if (!pod.ok() || pod->spec.containers.empty()) {
      return FailedPreconditionError(fmt::format("pod {} is not running", who));
    }
    std::string container =
        options.container.empty() ? pod->spec.containers[0].name : options.container;
    const api::ContainerStatus* status = nullptr;
    for (const api::ContainerStatus& s : pod->status.container_statuses) {
      if (s.name == container) status = &s;
    }
    for (const api::ContainerStatus& s : pod->status.init_container_statuses) {
      if (s.name == container) status = &s;
    }
    if (status == nullptr && !options.container.empty()) {
      return NotFoundError(
          fmt::format("container {} is not valid for pod {}", options.container, who));
    }
    if (status == nullptr || !status->state.running) {
      return FailedPreconditionError(
          fmt::format("container {} of pod {} is not running", container, who));
    }
    std::string id = status->container_id;
    pid = std::atoi(id.substr(id.find("://") + 3).c_str());
    hostname = "HOSTNAME=" + node::PodHostname(*pod);  // cut to 63 characters
  }
  if (pid <= 0) return FailedPreconditionError(fmt::format("pod {} is not running", who));
  ASSIGN_OR_RETURN(pid_t replica, ReplicaOf(pid));
  ASSIGN_OR_RETURN(pid_t program, ProgramOf(replica));
  std::ifstream in(fmt::format("/proc/{}/environ", program), std::ios::binary);
  std::string entry;
  bool ours = hostname.empty();
  while (std::getline(in, entry, '\0')) {
    ours = ours || entry == hostname;
    environ.push_back(entry);
  }
  if (pid <= 0 || getpgid(pid) != pid || !ours) {
    return FailedPreconditionError(
        fmt::format("pod {} is not running (process {} is gone)", who, pid));
  }
  return ReplicaProcesses{.leader = pid, .program = program};
}

}  // namespace

// As kubectl exec runs a command as the container's user: when root, the
// user, group and groups of the replica's process.
namespace {

Status BecomeOwnerOf(pid_t pid) {
  if (geteuid() != 0) return OkStatus();
  std::ifstream in(fmt::format("/proc/{}/status", pid));
  std::string line;
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;
  while (std::getline(in, line)) {
    std::istringstream fields(line.substr(line.find(':') + 1));
    if (line.starts_with("Uid:")) fields >> uid;
    if (line.starts_with("Gid:")) fields >> gid;
    for (gid_t g; line.starts_with("Groups:") && fields >> g;) groups.push_back(g);
  }
  if (uid == 0) return OkStatus();
  if (setgroups(groups.size(), groups.data()) != 0 || setresgid(gid, gid, gid) != 0 ||
      setresuid(uid, uid, uid) != 0) {
    return UnavailableError(fmt::format("cannot become user {}: {}", uid, std::strerror(errno)));
  }
  return OkStatus();
}

// Moves this process into the control groups of `pid`'s run (trainyard's:
// node/cgroups.h), so that the command is bounded with the replica (its
// memory, its pod's tasks) and ended with it, daemons it starts included,
// as a command exec'd into a container is. Where it may not (no groups
// are made there), it runs beside them.
void JoinGroupsOf(pid_t pid) {
  std::ifstream in(fmt::format("/proc/{}/cgroup", pid));
  std::error_code ec;
  // A unified hierarchy at the root, or beside v1's (a hybrid machine).
  std::string unified = fs::exists("/sys/fs/cgroup/cgroup.controllers", ec)
                            ? "/sys/fs/cgroup"
                            : "/sys/fs/cgroup/unified";
  for (std::string line; std::getline(in, line);) {
    size_t first = line.find(':'), second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    std::string controllers = line.substr(first + 1, second - first - 1);
    std::string path = line.substr(second + 1);
    if (path.find("/trainyard/") == std::string::npos) continue;  // not a run's
    if (controllers.starts_with("name=")) controllers = controllers.substr(5);
    std::string dir = controllers.empty() ? unified : "/sys/fs/cgroup/" + controllers;
    std::ofstream(dir + path + "/cgroup.procs") << getpid() << std::flush;
  }
}

// Whether `pid` is in this process's namespace of that kind ("mnt").
bool SharesNamespace(pid_t pid, const char* kind) {
  struct stat ours {
  }, theirs{};
  return stat(fmt::format("/proc/self/ns/{}", kind).c_str(), &ours) == 0 &&
         stat(fmt::format("/proc/{}/ns/{}", pid, kind).c_str(), &theirs) == 0 &&
         ours.st_ino == theirs.st_ino && ours.st_dev == theirs.st_dev;
}

// Joins the namespaces of `pid` that this process is not in (a sandbox's:
// node/sandbox.h), the user namespace first, so that the command sees
// what the replica sees: its mounts and its host name; then its root
// (bwrap's, not the mount namespace's first) and its directory. False
// when `pid` is in no sandbox. PERMISSION_DENIED, having changed nothing,
// when this process may not enter it: it runs in a sandbox of its own (an
// MPI launcher's rsh agent).
Result<bool> EnterSandboxOf(pid_t pid) {
  struct Kind {
    const char* name;
    int flag;
  };
  std::vector<std::pair<int, Kind>> joins;
  auto close_all = [&] {
    for (const auto& [fd, kind] : joins) close(fd);
  };
  for (Kind kind :
       {Kind{"user", CLONE_NEWUSER}, Kind{"mnt", CLONE_NEWNS}, Kind{"uts", CLONE_NEWUTS}}) {
    if (SharesNamespace(pid, kind.name)) continue;
    int fd = open(fmt::format("/proc/{}/ns/{}", pid, kind.name).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      close_all();
      return UnavailableError(
          fmt::format("cannot open the replica's {} namespace: {}", kind.name, strerror(errno)));
    }
    joins.push_back({fd, kind});
  }
  if (joins.empty()) return false;
  int root = open(fmt::format("/proc/{}/root", pid).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  int cwd = open(fmt::format("/proc/{}/cwd", pid).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  bool first = true;
  for (const auto& [fd, kind] : joins) {
    if (setns(fd, kind.flag) == 0) {
      first = false;
      continue;
    }
    int error = errno;
    close_all();
    std::string why =
        fmt::format("cannot enter the replica's {} namespace: {}", kind.name, strerror(error));
    if (first && error == EPERM) return PermissionDeniedError(why);
    return UnavailableError(why);
  }
  close_all();
  bool placed = root >= 0 && cwd >= 0 && fchdir(root) == 0 && chroot(".") == 0 && fchdir(cwd) == 0;
  if (root >= 0) close(root);
  if (cwd >= 0) close(cwd);
  if (!placed) return UnavailableError("cannot enter the replica's root and directory");
  return true;
}

// A command run beside its replica runs under this sandbox's host name,
// and so would share every /tmp path named after the host with commands
// run beside the launcher's other replicas: two MPI daemons, started at
// once, then race for one session folder and one fails ("File exists").
// It gets a temporary folder of its replica's own instead (TMPDIR), made
// by its user and used only if it is that user's folder, not a link.
void UseTmpdirOfItsOwn(std::vector<std::string>& env_text) {
  std::string host;
  for (const std::string& e : env_text) {
    if (e.starts_with("HOSTNAME=")) host = e.substr(9);
  }
  if (host.empty() || host.find('/') != std::string::npos) return;
  std::string dir = fmt::format("/tmp/trainyard-beside-{}-{}", host, geteuid());
  (void)mkdir(dir.c_str(), 0700);
  struct stat st {};
  if (lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid()) return;
  std::erase_if(env_text, [](const std::string& e) { return e.starts_with("TMPDIR="); });
  env_text.push_back("TMPDIR=" + dir);
}

// The replica's processes in the run or server whose state is `state`.
Result<ReplicaProcesses> FindIn(std::string state, const ExecOptions& options,
                                std::vector<std::string>& env_text) {
  // As the kernel names the replicas' log files: absolute, no ./ or links.
  std::error_code canonical_ec;
  if (fs::path canonical = fs::weakly_canonical(state, canonical_ec); !canonical_ec) {
    state = canonical.string();
  }
  env_text.clear();
  Result<ReplicaProcesses> processes = ProcessesOf(state, options, env_text);
  if (!processes.ok() && options.pod.find('.') != std::string::npos) {
    if (Result<std::string> pod = PodOfHost(state, options); pod.ok()) {
      ExecOptions named = options;
      named.pod = *pod;
      env_text.clear();
      processes = ProcessesOf(state, named, env_text);
    }
  }
  return processes;
}

}  // namespace

int RunExec(const ExecOptions& options) {
  // --state, else the home's server, else its newest run.
  std::vector<std::string> states;
  if (!options.state.empty()) {
    states.push_back(options.state);
  } else {
    std::string home = options.home.empty() ? DefaultHome() : options.home;
    std::error_code ec;
    if (fs::exists(fs::path(home) / "server" / "state.db", ec)) states.push_back(home + "/server");
    if (std::string run = NewestRun(home); !run.empty()) states.push_back(run);
    if (states.empty()) {
      return FailExec(fmt::format("no server or run under {}; pass --home or --state", home));
    }
  }
  std::vector<std::string> env_text;
  Result<ReplicaProcesses> processes = NotFoundError("");
  for (const std::string& state : states) {
    processes = FindIn(state, options, env_text);
    if (processes.ok() || processes.status().code() != StatusCode::kNotFound) break;
  }
  if (!processes.ok()) return FailExec(processes.status().message());
  // Under a shim (root's) the leader is not the replica.
  auto [leader, program] = *processes;
  std::error_code ec;
  fs::path dir = fs::read_symlink(fmt::format("/proc/{}/cwd", program), ec);
  // Joined as root, from this machine's view of the groups, before the
  // sandbox's.
  JoinGroupsOf(program);
  // Entered before the user is switched: entering takes root's privilege
  // where the sandbox is root's (runtime::ProcessSpec::sandbox).
  Result<bool> entered = EnterSandboxOf(program);
  if (!entered.ok() && entered.status().code() != StatusCode::kPermissionDenied) {
    return FailExec(entered.status().message());
  }
  if (Status became = BecomeOwnerOf(program); !became.ok()) {
    return FailExec(became.message());
  }
  // Not entered (this is an MPI launcher's rsh agent in a sandbox of its
  // own): the command runs beside the replica as without sandboxes, with
  // its environment and directory, among this sandbox's files and under
  // its host name (docs/run.md, "Sandboxes").
  bool beside = !entered.ok() || !*entered;
  if (beside && (ec || chdir(dir.c_str()) != 0)) {
    return FailExec(fmt::format("cannot enter the replica's directory {}", dir.string()));
  }
  if (beside) UseTmpdirOfItsOwn(env_text);
  std::string path_env;
  for (const std::string& e : env_text) {
    if (e.starts_with("PATH=")) path_env = e.substr(5);
  }
  // Looked up as the replica would: in its PATH, among its files.
  Result<std::string> found = runtime::ResolveProgram(options.command[0], path_env);
  if (!found.ok()) return FailExec(found.status().message());
  // Joining the replica's process group makes the command stop with it. It
  // works from the same session (an MPI launcher's rsh agent); from another
  // terminal it does not, and the command then runs beside the replica. A
  // server's exec session keeps the group it made, to end it whole.
  if (!options.own_process_group) setpgid(0, leader);
  // A terminal's kind, as a container runtime gives it to an exec on one.
  const char* term = std::getenv("TERM");
  bool has_term = std::any_of(env_text.begin(), env_text.end(),
                              [](const std::string& e) { return e.starts_with("TERM="); });
  if (term != nullptr && !has_term && isatty(STDIN_FILENO))
    env_text.push_back(std::string("TERM=") + term);
  std::vector<char*> argv, envp;
  for (const std::string& a : options.command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (std::string& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);
  execve(found->c_str(), argv.data(), envp.data());
  return FailExec(fmt::format("cannot run {}: {}", *found, std::strerror(errno)));
}

}  // namespace trainyard::cli
