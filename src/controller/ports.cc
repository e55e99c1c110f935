#include "controller/ports.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

namespace trainyard::controller {
namespace {

Result<int> KernelPickedPort() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return UnavailableError(fmt::format("socket: {}", strerror(errno)));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    int error = errno;
    close(fd);
    return UnavailableError(fmt::format("cannot find a free port: {}", strerror(error)));
  }
  close(fd);
  return static_cast<int>(ntohs(addr.sin_port));
}

}  // namespace

Result<int> LocalPortAllocator::Allocate(const std::string& owner) {
  // The kernel hands out ephemeral ports round-robin, so a repeat of one
  // still in use by a job is rare; skip it when it happens.
  for (int attempt = 0; attempt < 64; ++attempt) {
    ASSIGN_OR_RETURN(int port, KernelPickedPort());
    if (owners_.try_emplace(port, owner).second) return port;
  }
  return UnavailableError("cannot find a free port: every one offered is in use by a job");
}

}  // namespace trainyard::controller
