#include "cli/home_lock.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace trainyard::cli {

Result<HomeLock> HomeLock::Take(const std::string& state_dir) {
  std::error_code ec;
  std::filesystem::create_directories(state_dir, ec);
  std::string path = state_dir + "/lock";
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) {
    return UnavailableError(fmt::format("cannot open {}: {}", path, std::strerror(errno)));
  }
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    char pid[32] = {};
    ssize_t n = pread(fd, pid, sizeof(pid) - 1, 0);
    close(fd);
    std::string holder = n > 0 ? std::string(pid, static_cast<size_t>(n)) : "";
    while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.pop_back();
    return FailedPreconditionError(fmt::format(
        "{} is in use by another trainyard server (pid {}, holding {}): stop it, or give this "
        "one another --home",
        std::filesystem::path(state_dir).parent_path().string(),
        holder.empty() ? "unknown" : holder, path));
  }
  std::string pid = fmt::format("{}\n", getpid());
  if (ftruncate(fd, 0) != 0 || pwrite(fd, pid.data(), pid.size(), 0) < 0) {
    // The lock holds still; only the pid others would be told is missing.
  }
  return HomeLock(fd);
}

HomeLock::~HomeLock() {
  if (fd_ >= 0) close(fd_);  // the lock goes with it
}

}  // namespace trainyard::cli
