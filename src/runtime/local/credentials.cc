#include "runtime/local/credentials.h"

#include <fmt/format.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "runtime/local/namespace_users.h"

namespace trainyard::runtime {
namespace {

namespace fs = std::filesystem;

// "1001" or "1001:1002": digits only, as runAsUser/runAsGroup are numbers.
std::optional<std::pair<uid_t, std::optional<gid_t>>> NumericUser(const std::string& user) {
  size_t colon = user.find(':');
  std::string uid = user.substr(0, colon);
  std::string gid = colon == std::string::npos ? "" : user.substr(colon + 1);
  auto number = [](const std::string& s) {
    return !s.empty() && s.size() <= 9 && s.find_first_not_of("0123456789") == std::string::npos;
  };
  if (!number(uid) || (colon != std::string::npos && !number(gid))) return std::nullopt;
  std::optional<gid_t> group;
  if (!gid.empty()) group = static_cast<gid_t>(std::stoul(gid));
  return std::pair{static_cast<uid_t>(std::stoul(uid)), group};
}

std::vector<gid_t> GroupsOf(const char* name, gid_t gid) {
  int n = 64;
  std::vector<gid_t> groups(static_cast<size_t>(n));
  if (getgrouplist(name, gid, groups.data(), &n) < 0) {
    groups.resize(static_cast<size_t>(n));
    getgrouplist(name, gid, groups.data(), &n);
  }
  groups.resize(static_cast<size_t>(n));
  return groups;
}

}  // namespace

Result<Credentials> LookupUser(const std::string& user) {
  passwd entry{};
  passwd* found = nullptr;
  std::vector<char> buf(16384);
  std::optional<std::pair<uid_t, std::optional<gid_t>>> numeric = NumericUser(user);
  int error = numeric ? getpwuid_r(numeric->first, &entry, buf.data(), buf.size(), &found)
                      : getpwnam_r(user.c_str(), &entry, buf.data(), buf.size(), &found);
  if (found == nullptr && !numeric) {
    return NotFoundError(fmt::format("no user {:?} on this machine{}", user,
                                     error != 0 ? fmt::format(" ({})", std::strerror(error)) : ""));
  }
  Credentials out{.name = user};
  if (found != nullptr) {
    out.uid = found->pw_uid;
    out.gid = found->pw_gid;
    out.groups = GroupsOf(found->pw_name, found->pw_gid);
    out.home = found->pw_dir;
  } else {
    // A uid with no entry: its own group unless one is given, no others.
    out.uid = numeric->first;
    out.gid = numeric->first;
    out.home = "/";
  }
  if (numeric && numeric->second) {
    out.gid = *numeric->second;
    out.groups = {out.gid};
  }
  if (out.groups.empty()) out.groups = {out.gid};
  return out;
}

Result<std::optional<Credentials>> RunAsPolicy::For(const std::string& namespace_) const {
  auto it = namespaces.find(namespace_);
  if (it != namespaces.end()) return std::optional(it->second);
  if (own_users) {
    ASSIGN_OR_RETURN(Credentials user, own_users->For(namespace_));
    return std::optional(std::move(user));
  }
  return default_user;
}

Result<RunAsPolicy> MakeRunAsPolicy(const std::string& run_as,
                                    const std::vector<std::string>& per_namespace) {
  bool root = geteuid() == 0;
  auto lookup = [&](const std::string& user, const std::string& flag) -> Result<Credentials> {
    Result<Credentials> c = LookupUser(user);
    if (!c.ok()) return InvalidArgumentError(fmt::format("{}: {}", flag, c.status().message()));
    if (!root && c->uid != geteuid()) {
      return InvalidArgumentError(fmt::format(
          "{} {}: only root can run replicas as another user; run trainyard as root, or leave "
          "the flag out to run them as yourself",
          flag, user));
    }
    return c;
  };
  RunAsPolicy policy;
  // Never root unless asked: a root trainyard's replicas are nobody's.
  std::string user = run_as.empty() && root ? "nobody" : run_as;
  if (!user.empty()) {
    ASSIGN_OR_RETURN(Credentials c, lookup(user, "--run-as"));
    if (c.uid != geteuid()) policy.default_user = std::move(c);
  }
  for (const std::string& entry : per_namespace) {
    size_t eq = entry.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == entry.size()) {
      return InvalidArgumentError(
          fmt::format("--run-as-namespace {:?}: want NAMESPACE=USER", entry));
    }
    ASSIGN_OR_RETURN(Credentials c, lookup(entry.substr(eq + 1), "--run-as-namespace"));
    policy.namespaces[entry.substr(0, eq)] = std::move(c);
  }
  return policy;
}

Status CheckPassable(const std::string& dir, const Credentials& user) {
  if (user.uid == 0) return OkStatus();
  std::error_code ec;
  fs::path path = fs::absolute(dir, ec).lexically_normal();
  fs::path up;
  for (const fs::path& part : path) {
    up /= part;
    struct stat st {};
    if (stat(up.c_str(), &st) != 0) break;  // to be made, passable, by trainyard
    bool in_group = st.st_gid == user.gid || std::find(user.groups.begin(), user.groups.end(),
                                                       st.st_gid) != user.groups.end();
    mode_t bit = st.st_uid == user.uid ? S_IXUSR : in_group ? S_IXGRP : S_IXOTH;
    if ((st.st_mode & bit) == 0) {
      return FailedPreconditionError(
          fmt::format("{} cannot pass through {} (mode {:o}, owner {}:{})", user.name, up.string(),
                      st.st_mode & 07777, st.st_uid, st.st_gid));
    }
  }
  return OkStatus();
}

}  // namespace trainyard::runtime
