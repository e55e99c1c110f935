// A user of its own for each namespace: what keeps the replicas of one
// team's namespace from reading another's (its files, and through /proc
// its processes' environments, where Secret values and job tokens are). A
// root server with tokens gives every namespace no --run-as-namespace
// names a uid of its own, as systemd's DynamicUser does: numbers with no
// entry in the user database, from kFirstNamespaceUid on, kept in a file
// of the server's so that a namespace keeps its uid (and its files stay
// its own) across restarts.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "common/mutex.h"
#include "common/status.h"
#include "runtime/local/credentials.h"

namespace trainyard::runtime {

// Far above the users a machine has and the ranges subordinate ids
// (/etc/subuid, 65,536 a user from 100,000) hand out.
inline constexpr uid_t kFirstNamespaceUid = 1'000'000'000;
inline constexpr uid_t kNamespaceUids = 100'000'000;

class NamespaceUsers {
 public:
  // The users kept in `file` (a missing file: none yet).
  static Result<std::shared_ptr<NamespaceUsers>> Open(const std::string& file);

  // `namespace_`'s user: its uid and a group of the same number, "/" as
  // its home; given one on first use, and kept (written whole before it
  // is returned). Thread-safe.
  Result<Credentials> For(const std::string& namespace_);

 private:
  explicit NamespaceUsers(std::string file) : file_(std::move(file)) {}
  Status Save() const TRAINYARD_REQUIRES(mu_);

  const std::string file_;
  Mutex mu_;
  std::map<std::string, uid_t> uids_ TRAINYARD_GUARDED_BY(mu_);
};

}  // namespace trainyard::runtime
