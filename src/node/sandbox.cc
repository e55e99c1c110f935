#include "node/sandbox.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "api/json.h"
#include "node/container_env.h"
#include "runtime/local/process.h"
#include "runtime/local/shim_protocol.h"

namespace trainyard::node {
namespace {

namespace fs = std::filesystem;

// Whether `path` is `dir` or below it, element by element (/data2 is not
// below /data).
bool IsWithin(const fs::path& path, const fs::path& dir) {
  auto [in_dir, in_path] = std::mismatch(dir.begin(), dir.end(), path.begin(), path.end());
  return in_dir == dir.end();
}

// The directory on this machine where a mount point for `path` would have
// to be created (it lacks the path's next element), or nullopt when the
// path exists. `path` is canonical: no symlink on the way.
std::optional<fs::path> LackingParent(const fs::path& path) {
  fs::path at = "/";
  for (const fs::path& element : path.relative_path()) {
    fs::path next = at / element;
    struct stat st {};
    if (lstat(next.c_str(), &st) != 0) return at;
    at = next;
  }
  return std::nullopt;
}

class ArgsBuilder {
 public:
  explicit ArgsBuilder(const std::string& bwrap) : args_{bwrap} {}

  void Add(std::initializer_list<std::string> args) {
    args_.insert(args_.end(), args.begin(), args.end());
  }

  // `dir`'s entries, each bound back where it was (a symlink made again),
  // for a shadowed directory; an error past kMaxShadowedEntries in all.
  Status BindEntries(const fs::path& dir, const fs::path& for_path) {
    std::error_code ec;
    for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator();
         it.increment(ec)) {
      const fs::directory_entry& entry = *it;
      if (++entries_ > kMaxShadowedEntries) {
        return FailedPreconditionError(fmt::format(
            "mountPath {}: it would be made in {}, whose entries trainyard would bind back one "
            "by one, and there are more than {}; use a mountPath in a new top-level directory "
            "(/data/...) or one that exists here",
            for_path.string(), dir.string(), kMaxShadowedEntries));
      }
      const std::string path = entry.path().string();
      std::error_code link_ec;
      if (entry.is_symlink(link_ec)) {
        Add({"--symlink", fs::read_symlink(entry.path(), link_ec).string(), path});
      } else {
        Add({"--dev-bind", path, path});
      }
    }
    if (ec) {
      return FailedPreconditionError(fmt::format("mountPath {}: cannot list {}: {}",
                                                 for_path.string(), dir.string(), ec.message()));
    }
    return OkStatus();
  }

  std::vector<std::string> Take() { return std::move(args_); }

 private:
  std::vector<std::string> args_;
  size_t entries_ = 0;
};

// A mount with its destination made plain, and where it is inside the
// sandbox (machine symlinks followed, as the bind will be).
struct Destination {
  const Mount* mount;
  fs::path path;
  fs::path lexical;  // the mount path made plain, as the manifest names it
};

// A directory to shadow, and the first mount path that needs it.
struct Shadow {
  fs::path dir;
  fs::path for_path;
};

// The mounts' destinations, shortest first (a mount inside another is made
// after it), and the directories to shadow for them, shallowest first.
struct Plan {
  std::vector<Destination> destinations;
  std::vector<Shadow> shadowed;
};

size_t Depth(const fs::path& path) {
  return static_cast<size_t>(std::distance(path.begin(), path.end()));
}

// A mount path bwrap can make, or why not: absolute, and neither the root
// nor under /proc or /sys (the kernel's own, shared with the machine).
Status CheckMountPath(const fs::path& path) {
  auto refuse = [&](const char* why) {
    return FailedPreconditionError(fmt::format("mountPath {}: {}", path.string(), why));
  };
  if (!path.is_absolute()) return refuse("must be an absolute path");
  if (path == "/")
    return refuse("cannot be /: a volume here is mounted beside the machine's files");
  if (IsWithin(path, "/proc") || IsWithin(path, "/sys")) {
    return refuse("is under /proc or /sys, which are the machine's own here; mount it elsewhere");
  }
  return OkStatus();
}

// Refuses a symlink on the way from `outer`'s volume to `d`, inside that
// volume on this machine: a replica may have made it, to lead a mount
// point's directories (made by bwrap, as trainyard's user) anywhere.
Status NoSymlinkInVolume(const Destination& d, const Destination& outer) {
  fs::path at = outer.mount->host_path;
  for (const fs::path& element : d.path.lexically_relative(outer.path)) {
    at /= element;
    struct stat st {};
    if (lstat(at.c_str(), &st) != 0) return OkStatus();  // made from here on
    if (S_ISLNK(st.st_mode)) {
      return FailedPreconditionError(fmt::format(
          "mountPath {}: {} in the volume mounted at {} is a symbolic link, which a mount point "
          "is never made through; remove it",
          d.path.string(),
          (fs::path(outer.mount->mount_path) / at.lexically_relative(outer.mount->host_path))
              .string(),
          outer.mount->mount_path));
    }
  }
  return OkStatus();
}

// The volume `destinations[i]` is inside of, if any: the deepest earlier,
// by their paths in the sandbox, or by the paths the manifest names.
const Destination* OuterOf(const std::vector<Destination>& destinations, size_t i,
                           fs::path Destination::*path = &Destination::path) {
  for (size_t j = i; j-- > 0;) {
    if (IsWithin(destinations[i].*path, destinations[j].*path)) return &destinations[j];
  }
  return nullptr;
}

void SortByDepth(std::vector<Destination>& destinations) {
  std::stable_sort(
      destinations.begin(), destinations.end(),
      [](const Destination& a, const Destination& b) { return Depth(a.path) < Depth(b.path); });
}

Result<Plan> PlanMounts(const Mounts& mounts) {
  Plan plan;
  for (const Mount& m : mounts) {
    fs::path path = fs::path(m.mount_path).lexically_normal();
    if (path.filename().empty() && path != "/") path = path.parent_path();  // "/data/"
    RETURN_IF_ERROR(CheckMountPath(path));
    plan.destinations.push_back({&m, path, path});
  }
  SortByDepth(plan.destinations);
  // Where each is inside the sandbox: inside another volume, in that
  // volume (as a container runtime makes it); else on the machine, through
  // the machine's symlinks, as the bind follows them.
  for (size_t i = 0; i < plan.destinations.size(); ++i) {
    Destination& d = plan.destinations[i];
    if (const Destination* outer = OuterOf(plan.destinations, i, &Destination::lexical)) {
      d.path = outer->path / d.lexical.lexically_relative(outer->lexical);
      continue;
    }
    std::error_code ec;
    fs::path canonical = fs::weakly_canonical(d.path, ec);
    if (!ec) d.path = canonical;
  }
  // A symlink may have led one into another's volume.
  SortByDepth(plan.destinations);
  std::map<fs::path, fs::path> shadowed;  // dir -> the first mount path needing it
  for (size_t i = 0; i < plan.destinations.size(); ++i) {
    const Destination& d = plan.destinations[i];
    RETURN_IF_ERROR(CheckMountPath(d.path));
    if (const Destination* outer = OuterOf(plan.destinations, i)) {
      RETURN_IF_ERROR(NoSymlinkInVolume(d, *outer));
    } else if (std::optional<fs::path> parent = LackingParent(d.path)) {
      shadowed.emplace(*parent, d.path);
    }
  }
  for (const auto& [dir, for_path] : shadowed) plan.shadowed.push_back({dir, for_path});
  std::stable_sort(plan.shadowed.begin(), plan.shadowed.end(),
                   [](const Shadow& a, const Shadow& b) { return Depth(a.dir) < Depth(b.dir); });
  return plan;
}

// Whether `path` is there inside the sandbox before the mount at
// `destinations[before]` and those after it are made: in the volume of an
// earlier mount it is inside of, or else on the machine.
bool ExistsHere(const fs::path& path, const Plan& plan, size_t before) {
  fs::path here = path;
  for (size_t i = before; i-- > 0;) {
    const Destination& outer = plan.destinations[i];
    if (path == outer.path) return true;  // mounted there
    if (IsWithin(path, outer.path)) {
      here = fs::path(outer.mount->host_path) / path.lexically_relative(outer.path);
      break;
    }
  }
  struct stat st {};
  return lstat(here.c_str(), &st) == 0;
}

// The shadowing tmpfs's mode, as bwrap's --perms takes it ("1777"): the
// directory's own. The tmpfs is trainyard's user's, so a directory of
// another user's (a home under --run-as) is made 1777 instead, as /tmp
// is: its user can still make files in it (gone with the sandbox).
std::string PermsOf(const fs::path& dir) {
  struct stat st {};
  if (stat(dir.c_str(), &st) != 0) return "0755";
  mode_t mode = st.st_uid == geteuid() ? st.st_mode & 07777 : 01777;
  return fmt::format("{:04o}", mode);
}

// Whether a mount of the pod's own covers /etc/hosts: then it is the
// pod's, as the kubelet leaves it.
bool CoversHosts(const Mounts& mounts) {
  return std::any_of(mounts.begin(), mounts.end(), [](const Mount& m) {
    return IsWithin("/etc/hosts", fs::path(m.mount_path).lexically_normal());
  });
}

}  // namespace

Result<std::vector<std::string>> SandboxArgs(const std::string& bwrap, const SandboxSpec& spec) {
  Mounts mounts = spec.mounts;
  if (!spec.hosts_file.empty() && !CoversHosts(mounts)) {
    mounts.push_back({.mount_path = "/etc/hosts", .host_path = spec.hosts_file, .read_only = true});
  }
  ASSIGN_OR_RETURN(Plan plan, PlanMounts(mounts));
  ArgsBuilder args(bwrap);
  // Devices stay usable (/dev/null, GPUs): bwrap's plain binds are nodev.
  // The root is bwrap's own tmpfs unless the machine's is bound over it.
  if (plan.shadowed.empty() || plan.shadowed.front().dir != "/") {
    args.Add({"--dev-bind", "/", "/"});
  }
  for (const auto& [dir, for_path] : plan.shadowed) {
    if (dir != "/") args.Add({"--perms", PermsOf(dir), "--tmpfs", dir.string()});
    RETURN_IF_ERROR(args.BindEntries(dir, for_path));
  }
  std::set<fs::path> made, added;  // std::set: shallowest first
  for (size_t i = 0; i < plan.destinations.size(); ++i) {
    const Destination& d = plan.destinations[i];
    // The directories on the way that are not there, made as a container
    // runtime makes them: root's, 0755 (bwrap would make them 0700, where
    // a replica of another user could not pass).
    for (fs::path at = d.path.parent_path(); at != at.root_path(); at = at.parent_path()) {
      if (made.contains(at)) break;
      if (ExistsHere(at, plan, i)) break;
      made.insert(at);
    }
    for (const fs::path& dir : made) {
      if (IsWithin(d.path, dir) && !added.contains(dir)) {
        args.Add({"--perms", "0755", "--dir", dir.string()});
        added.insert(dir);
      }
    }
    const char* kind = d.mount->read_only ? "--ro-bind"
                       : d.mount->devices ? "--dev-bind"
                                          : "--bind";
    args.Add({kind, d.mount->host_path, d.path.string()});
  }
  if (spec.read_only_root) args.Add({"--remount-ro", "/"});
  args.Add({"--unshare-uts", "--hostname", spec.hostname, "--die-with-parent"});
  return args.Take();
}

bool ReadOnlyRoot(const api::Container& container) {
  const api::Json* read_only =
      api::FindAt(container.extra, {"securityContext", "readOnlyRootFilesystem"});
  return read_only != nullptr && read_only->is_boolean() && read_only->get<bool>();
}

// A name or address fit for a hosts file line: no blank, no newline, no
// comment; anything else is left out (validation refuses it at admission
// on a cluster).
bool HostsToken(const std::string& token) {
  return !token.empty() && token.size() <= 253 &&
         std::all_of(token.begin(), token.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == ':' ||
                  c == '_';
         });
}

std::string HostsFileOf(const api::Pod& pod, const std::string& ip) {
  std::string hostname = PodHostname(pod);
  std::string subdomain = api::StringAt(pod.spec.extra, "subdomain");
  if (!HostsToken(subdomain)) subdomain.clear();
  std::string names = hostname;
  if (!subdomain.empty()) {
    names = fmt::format("{}.{}.{}.svc.cluster.local {}", hostname, subdomain,
                        pod.metadata.namespace_, hostname);
  }
  std::string out = fmt::format(
      "# Kubernetes-managed hosts file (written by trainyard).\n"
      "127.0.0.1\tlocalhost\n"
      "::1\tlocalhost ip6-localhost ip6-loopback\n"
      "fe00::0\tip6-localnet\n"
      "fe00::0\tip6-mcastprefix\n"
      "fe00::1\tip6-allnodes\n"
      "fe00::2\tip6-allrouters\n"
      "{}\t{}\n",
      ip, names);
  const api::Json* aliases = api::FindAt(pod.spec.extra, {"hostAliases"});
  if (aliases == nullptr || !aliases->is_array()) return out;
  out += "\n# Entries added by HostAliases.\n";
  for (const api::Json& alias : *aliases) {
    std::string line = api::StringAt(alias, "ip");
    const api::Json* hostnames = api::FindAt(alias, {"hostnames"});
    if (!HostsToken(line) || hostnames == nullptr || !hostnames->is_array()) continue;
    for (const api::Json& name : *hostnames) {
      if (name.is_string() && HostsToken(name.get<std::string>())) {
        line += "\t" + name.get<std::string>();
      }
    }
    out += line + "\n";
  }
  return out;
}

std::string FindBwrap() {
  const char* path = getenv("PATH");
  Result<std::string> found = runtime::ResolveProgram("bwrap", path != nullptr ? path : "");
  return found.ok() ? *found : "";
}

Sandboxes::Sandboxes(std::string bwrap, std::string why_none)
    : bwrap_(std::move(bwrap)), why_none_(std::move(why_none)) {}

Sandboxes::~Sandboxes() {
  if (userns_fd_ >= 0) close(userns_fd_);
}

std::string Sandboxes::userns() const {
  MutexLock lock(mu_);
  return userns_;
}

std::string Sandboxes::HoldUserNamespace() const {
  Result<runtime::Process> holder = runtime::Process::Start(
      {.argv = {"unshare", "--user", "--map-current-user", "--", "sleep", "infinity"},
       .env = {{"PATH", "/usr/bin:/bin"}},
       .log_path = "/dev/null"});
  if (!holder.ok()) return std::string(holder.status().message());
  // Mapped once unshare has exec'd sleep.
  std::string comm = fmt::format("/proc/{}/comm", holder->pid());
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (std::string name; name != "sleep";) {
    if (!holder->running() || holder->TryWait() || std::chrono::steady_clock::now() > deadline) {
      return "unshare --user cannot make a user namespace";
    }
    std::ifstream in(comm);
    std::getline(in, name);
    if (name != "sleep") std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  // Held open by trainyard too, and named through that: a holder that dies
  // (and whose pid is reused) cannot make a sandbox join a stranger's.
  int fd = open(fmt::format("/proc/{}/ns/user", holder->pid()).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fmt::format("cannot open the user namespace: {}", strerror(errno));
  userns_fd_ = fd;
  userns_ = fmt::format("/proc/self/fd/{}", fd);
  holder_ = std::move(*holder);
  return "";
}

std::string Sandboxes::Problem() const {
  if (bwrap_.empty()) return why_none_;
  MutexLock lock(mu_);
  if (problem_) return *problem_;
  std::string problem = geteuid() == 0 ? "" : HoldUserNamespace();
  // What a replica's sandbox needs: a mount namespace with a tmpfs in it,
  // and a host name.
  char log[] = "/tmp/trainyard-bwrap-probe-XXXXXX";
  int fd = mkstemp(log);
  if (fd >= 0) close(fd);
  runtime::ProcessSpec probe{
      .argv = {bwrap_, "--dev-bind", "/", "/", "--tmpfs", "/tmp", "--unshare-uts", "--hostname",
               "trainyard-probe", "--die-with-parent"},
      .env = {{"PATH", "/usr/bin:/bin"}},
      .log_path = fd >= 0 ? log : "/dev/null",
      .userns = userns_};
  if (!userns_.empty()) {
    probe.argv.insert(probe.argv.end(), {"--userns", std::to_string(runtime::kSandboxUsernsFd)});
  }
  probe.argv.insert(probe.argv.end(), {"--", "true"});
  if (problem.empty()) {
    Result<runtime::Process> process = runtime::Process::Start(probe);
    if (!process.ok()) {
      problem = std::string(process.status().message());
    } else {
      std::optional<runtime::ExitStatus> exit = process->WaitFor(std::chrono::seconds(10));
      if (!exit || !exit->ok()) {
        std::ifstream in(log);
        std::getline(in, problem);
        if (problem.empty()) problem = exit ? exit->Describe() : "it did not finish in 10 s";
      }
    }
  }
  if (fd >= 0) unlink(log);
  if (!problem.empty()) {
    problem = fmt::format("bubblewrap cannot make a sandbox: {}", problem);
    holder_.reset();
    userns_.clear();
    if (userns_fd_ >= 0) close(std::exchange(userns_fd_, -1));
  }
  problem_ = problem;
  return problem;
}

}  // namespace trainyard::node
