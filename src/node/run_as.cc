#include "node/run_as.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "api/pod_security.h"
#include "common/held_dir.h"

namespace trainyard::node {
namespace {

namespace fs = std::filesystem;

// The trainyard folder (of `own_dirs`) `path` lies in for `namespace_`.
std::optional<fs::path> OwnRoot(const std::string& path, const std::string& namespace_,
                                const std::vector<std::string>& own_dirs) {
  fs::path normal = fs::path(path).lexically_normal();
  for (const std::string& own : own_dirs) {
    fs::path mine = (fs::path(own) / namespace_).lexically_normal();
    fs::path rel = normal.lexically_relative(mine);
    if (!rel.empty() && *rel.begin() != ".." && rel != ".") return fs::path(own);
  }
  return std::nullopt;
}

// Makes every folder from `top` down to `path`'s parent traversable by
// anyone (0711): a user can reach what it is given, and list nothing on
// the way.
Status OpenTheWay(const fs::path& top, const fs::path& path) {
  fs::path rel = path.lexically_normal().lexically_relative(top.lexically_normal());
  fs::path dir = top.lexically_normal();
  std::vector<fs::path> way = {dir};
  for (auto it = rel.begin(); it != rel.end() && std::next(it) != rel.end(); ++it) {
    dir /= *it;
    way.push_back(dir);
  }
  for (const fs::path& d : way) {
    if (chmod(d.c_str(), 0711) != 0) {
      return UnavailableError(
          fmt::format("cannot open the way to {} at {}", path.string(), d.string()));
    }
  }
  return OkStatus();
}

}  // namespace

Status CheckHostPaths(const api::Pod& pod, const HostAccess& access,
                      const store::ObjectStore& store) {
  if (!access.baseline_namespaces) return OkStatus();
  Result<api::Json> ns = store.Get({"Namespace", "", pod.metadata.namespace_});
  if (api::PrivilegedNamespace(ns.ok() ? &*ns : nullptr)) return OkStatus();
  for (const api::Volume& volume : pod.spec.volumes) {
    if (!volume.host_path) continue;
    if (OwnRoot(volume.host_path->path, pod.metadata.namespace_, access.own_dirs)) continue;
    return FailedPreconditionError(fmt::format(
        "volume {}: hostPath {} is forbidden in namespace {} (Pod Security baseline): an "
        "administrator may allow it by labelling the namespace {}=privileged",
        volume.name, volume.host_path->path, pod.metadata.namespace_,
        api::kPodSecurityEnforceLabel));
  }
  return OkStatus();
}

Status GivePodFiles(const api::Pod& pod, const PodVolumeDirs& dirs, const std::string& pods_dir,
                    const HostAccess& access, const runtime::Credentials& user) {
  std::error_code ec;
  // The pod's folder stays trainyard's (volumes.h): its way is opened, and
  // what in it is the user's was handed over as it was made.
  fs::path pod_dir = fs::path(dirs.disk).parent_path();
  if (fs::exists(pod_dir, ec))
    RETURN_IF_ERROR(OpenTheWay(fs::path(pods_dir).parent_path(), pod_dir));
  for (const api::Volume& volume : pod.spec.volumes) {
    if (volume.persistent_volume_claim && !dirs.claims.empty()) {
      ASSIGN_OR_RETURN(std::string claim, ClaimDir(dirs.claims, pod.metadata.namespace_,
                                                   volume.persistent_volume_claim->claim_name));
      struct stat st {};
      if (lstat(claim.c_str(), &st) != 0) continue;
      RETURN_IF_ERROR(OpenTheWay(fs::path(dirs.claims).parent_path(), claim));
      // Its folder, once: what the user writes in it is the user's
      // already, and a claim may hold a dataset too large to walk at every
      // start.
      if (st.st_uid != user.uid && lchown(claim.c_str(), user.uid, user.gid) != 0) {
        return UnavailableError(fmt::format("cannot hand {} to user {}", claim, user.name));
      }
      continue;
    }
    if (!volume.host_path) continue;
    const std::string& path = volume.host_path->path;
    std::optional<fs::path> own = OwnRoot(path, pod.metadata.namespace_, access.own_dirs);
    if (!own || !fs::exists(path, ec)) continue;
    RETURN_IF_ERROR(OpenTheWay(own->parent_path(), path));
    RETURN_IF_ERROR(GiveTree(path, FileOwner{user.uid, user.gid}));
  }
  return OkStatus();
}

Status GiveOutputDir(const std::string& root, const std::string& dir,
                     const runtime::Credentials& user) {
  RETURN_IF_ERROR(OpenTheWay(fs::path(root).parent_path(), dir));
  struct stat st {};
  if (lstat(dir.c_str(), &st) != 0) return NotFoundError(fmt::format("{} is gone", dir));
  // Its folder alone, as a claim's: what the user writes there is the
  // user's already.
  if (st.st_uid != user.uid && lchown(dir.c_str(), user.uid, user.gid) != 0) {
    return UnavailableError(fmt::format("cannot hand {} to user {}", dir, user.name));
  }
  return OkStatus();
}

std::optional<FileOwner> FileOwnerOf(const std::optional<runtime::Credentials>& user) {
  if (!user || user->uid == geteuid()) return std::nullopt;
  return FileOwner{user->uid, user->gid};
}

void UseHomeOf(const runtime::Credentials& user, const api::Container& container, EnvList& env) {
  auto set = [&](const std::string& name, const std::string& value) {
    bool own = std::any_of(container.env.begin(), container.env.end(),
                           [&](const api::EnvVar& v) { return v.name == name; });
    if (own) return;
    std::erase_if(env, [&](const auto& entry) { return entry.first == name; });
    env.emplace_back(name, value);
  };
  set("HOME", user.home.empty() ? "/" : user.home);
  // A user with no entry in the user database: programs that ask who they
  // run as (Python's getpass, ssh) read these first.
  if (!user.listed) {
    std::string name = fmt::format("u{}", user.uid);
    set("USER", name);
    set("LOGNAME", name);
  }
}

}  // namespace trainyard::node
