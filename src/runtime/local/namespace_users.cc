#include "runtime/local/namespace_users.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace trainyard::runtime {
namespace {

Credentials CredentialsOf(const std::string& namespace_, uid_t uid) {
  return Credentials{.name = fmt::format("{} (namespace {})", uid, namespace_),
                     .uid = uid,
                     .gid = static_cast<gid_t>(uid),
                     .groups = {static_cast<gid_t>(uid)},
                     .home = "/",
                     .listed = false};
}

}  // namespace

Result<std::shared_ptr<NamespaceUsers>> NamespaceUsers::Open(const std::string& file) {
  std::shared_ptr<NamespaceUsers> users(new NamespaceUsers(file));
  std::ifstream in(file);
  if (!in.is_open()) return users;  // none given yet
  // No other thread has it yet; the analysis asks for the lock all the same.
  MutexLock lock(users->mu_);
  std::string namespace_;
  uint64_t uid = 0;
  while (in >> namespace_ >> uid) {
    if (uid < kFirstNamespaceUid || uid >= kFirstNamespaceUid + uint64_t{kNamespaceUids}) {
      return FailedPreconditionError(
          fmt::format("{}: uid {} of namespace {} is outside the range trainyard gives", file, uid,
                      namespace_));
    }
    users->uids_[namespace_] = static_cast<uid_t>(uid);
  }
  if (!in.eof() && in.fail()) {
    return FailedPreconditionError(fmt::format("{}: not lines of NAMESPACE UID", file));
  }
  return users;
}

Result<Credentials> NamespaceUsers::For(const std::string& namespace_) {
  MutexLock lock(mu_);
  auto it = uids_.find(namespace_);
  if (it != uids_.end()) return CredentialsOf(namespace_, it->second);
  uid_t next = kFirstNamespaceUid;
  for (const auto& [ns, uid] : uids_) next = std::max<uid_t>(next, uid + 1);
  if (next >= kFirstNamespaceUid + kNamespaceUids) {
    return OutOfRangeError("no uid is left to give a namespace of its own");
  }
  uids_[namespace_] = next;
  if (Status saved = Save(); !saved.ok()) {
    uids_.erase(namespace_);
    return saved;
  }
  return CredentialsOf(namespace_, next);
}

Status NamespaceUsers::Save() const {
  std::ostringstream text;
  for (const auto& [ns, uid] : uids_) text << ns << ' ' << uid << '\n';
  std::string temporary = file_ + ".new";
  int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    return UnavailableError(fmt::format("cannot write {}: {}", temporary, std::strerror(errno)));
  std::string bytes = text.str();
  bool ok = ::write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()) &&
            ::fsync(fd) == 0;
  ::close(fd);
  if (!ok || ::rename(temporary.c_str(), file_.c_str()) != 0) {
    return UnavailableError(fmt::format("cannot write {}: {}", file_, std::strerror(errno)));
  }
  return OkStatus();
}

}  // namespace trainyard::runtime
