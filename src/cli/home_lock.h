// One server to a home: a lock held on <state dir>/lock for the server's
// life. A second server on the same --home would rewrite the first one's
// kubeconfig and, when stopped, end the first one's replicas.
#pragma once

#include <string>

#include "common/status.h"

namespace trainyard::cli {

class HomeLock {
 public:
  // Takes the lock of `state_dir` (made if missing) and writes this
  // process's pid in it. kFailedPrecondition when another process holds
  // it, naming that process's pid and the lock file.
  static Result<HomeLock> Take(const std::string& state_dir);
  HomeLock(HomeLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  HomeLock& operator=(HomeLock&&) = delete;
  ~HomeLock();

 private:
  explicit HomeLock(int fd) : fd_(fd) {}
  int fd_;  // open, locked, close-on-exec: no replica inherits it
};

}  // namespace trainyard::cli
