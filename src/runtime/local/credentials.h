// Who a replica runs as. A server run as root never runs replicas as root
// unless told to: each namespace's replicas run as a user of their own
// (`--run-as-namespace`), or as one unprivileged default (`--run-as`,
// `nobody` unless set), so that nothing they run can read the server's
// state, its tokens or another namespace's files, or signal its processes.
// Switching users needs root (CAP_SETUID and CAP_SETGID); a server run as
// an ordinary user runs replicas as that user.
#pragma once

#include <sys/types.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace trainyard::runtime {

struct Credentials {
  std::string name;  // as given: a user name, or a number
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;  // supplementary, as initgroups(3) would set them
  std::string home;           // the user's home, for HOME; "/" without one
  // Whether the user database names it (a namespace's own uid has no
  // entry: its replicas are told their name in USER and LOGNAME).
  bool listed = true;
  bool operator==(const Credentials&) const = default;
};

// A user by name (from the user database) or by number ("1001", or
// "1001:1001" for a uid and gid with no entry of their own, as a
// container's runAsUser/runAsGroup may be). NOT_FOUND names the user.
Result<Credentials> LookupUser(const std::string& user);

class NamespaceUsers;

// Which user each namespace's replicas run as.
struct RunAsPolicy {
  std::optional<Credentials> default_user;  // unset: trainyard's own user
  std::map<std::string, Credentials> namespaces;
  // Set: a namespace `namespaces` does not name gets a user of its own
  // (namespace_users.h), rather than `default_user`.
  std::shared_ptr<NamespaceUsers> own_users;
  // The user for `namespace_`'s replicas; nullopt: trainyard's own.
  Result<std::optional<Credentials>> For(const std::string& namespace_) const;
};

// The policy a `trainyard server` (or run) gets from its flags: `--run-as
// USER` (empty: `nobody` when trainyard is root, else its own user) and
// `--run-as-namespace NS=USER`, each repeatable. INVALID_ARGUMENT for an
// unknown user, a malformed entry, or a switch trainyard cannot make
// (another user than its own, when not root).
Result<RunAsPolicy> MakeRunAsPolicy(const std::string& run_as,
                                    const std::vector<std::string>& per_namespace);

// OK when `user` may pass through `dir` and every folder above it (search
// permission as its owner, its group or others); the part of `dir` not
// made yet is not looked at. FAILED_PRECONDITION names the first folder
// that stops it.
Status CheckPassable(const std::string& dir, const Credentials& user);

}  // namespace trainyard::runtime
