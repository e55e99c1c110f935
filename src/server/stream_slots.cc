#include "server/stream_slots.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <cstdlib>

namespace trainyard::server {

std::unique_ptr<StreamSlots::Slot> StreamSlots::Acquire(const std::string& client,
                                                        std::string& why) {
  std::lock_guard lock(mu_);
  if (open_ >= total_) {
    why = fmt::format(
        "the server has {} watches and followed logs open, its limit: try again later", open_);
    return nullptr;
  }
  size_t& mine = clients_[client];
  if (mine >= per_client_) {
    why = fmt::format(
        "this client has {} watches and followed logs open, the limit for one client: close some, "
        "or watch a whole collection with a selector instead of its objects one by one",
        mine);
    return nullptr;
  }
  ++mine;
  ++open_;
  return std::make_unique<Slot>(*this, client);
}

void StreamSlots::Release(const std::string& client) {
  std::lock_guard lock(mu_);
  --open_;
  auto it = clients_.find(client);
  if (it != clients_.end() && --it->second == 0) clients_.erase(it);
}

bool PeerClosed(int fd) {
  if (fd < 0) return false;
  pollfd p{.fd = fd, .events = POLLRDHUP, .revents = 0};
  // A watch's client sends nothing more on its connection, so a hang-up
  // (its FIN) or an error is all this can report.
  return ::poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) != 0;
}

namespace {

// "address:port" of a socket address, in the numeric form httplib uses.
std::string Endpoint(const sockaddr_storage& addr) {
  char host[INET6_ADDRSTRLEN] = {};
  int port = 0;
  if (addr.ss_family == AF_INET) {
    const auto& in = reinterpret_cast<const sockaddr_in&>(addr);
    inet_ntop(AF_INET, &in.sin_addr, host, sizeof host);
    port = ntohs(in.sin_port);
  } else if (addr.ss_family == AF_INET6) {
    const auto& in6 = reinterpret_cast<const sockaddr_in6&>(addr);
    inet_ntop(AF_INET6, &in6.sin6_addr, host, sizeof host);
    port = ntohs(in6.sin6_port);
  } else {
    return "";
  }
  return fmt::format("{}:{}", host, port);
}

}  // namespace

int FindConnection(const std::string& local_addr, int local_port, const std::string& remote_addr,
                   int remote_port) {
  std::string local = fmt::format("{}:{}", local_addr, local_port);
  std::string remote = fmt::format("{}:{}", remote_addr, remote_port);
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return -1;
  int found = -1;
  while (dirent* entry = readdir(dir)) {
    char* end = nullptr;
    long fd = std::strtol(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != '\0' || fd == dirfd(dir)) continue;
    struct stat st {};
    if (fstat(static_cast<int>(fd), &st) != 0 || !S_ISSOCK(st.st_mode)) continue;
    sockaddr_storage mine{}, peer{};
    socklen_t mine_len = sizeof mine, peer_len = sizeof peer;
    if (getsockname(static_cast<int>(fd), reinterpret_cast<sockaddr*>(&mine), &mine_len) != 0 ||
        getpeername(static_cast<int>(fd), reinterpret_cast<sockaddr*>(&peer), &peer_len) != 0) {
      continue;
    }
    if (Endpoint(mine) == local && Endpoint(peer) == remote) {
      found = static_cast<int>(fd);
      break;
    }
  }
  closedir(dir);
  return found;
}

}  // namespace trainyard::server
