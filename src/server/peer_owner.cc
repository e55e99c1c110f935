#include "server/peer_owner.h"

#include <arpa/inet.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

namespace trainyard::server {
namespace {

bool IsLoopback(const sockaddr_storage& addr) {
  if (addr.ss_family == AF_INET) {
    const auto& in = reinterpret_cast<const sockaddr_in&>(addr);
    return (ntohl(in.sin_addr.s_addr) >> 24) == 127;
  }
  if (addr.ss_family == AF_INET6) {
    const auto& in6 = reinterpret_cast<const sockaddr_in6&>(addr);
    if (IN6_IS_ADDR_LOOPBACK(&in6.sin6_addr)) return true;
    // 127.x.y.z reached through a dual-stack socket.
    return IN6_IS_ADDR_V4MAPPED(&in6.sin6_addr) && in6.sin6_addr.s6_addr[12] == 127;
  }
  return false;
}

// The socket id of `addr` (port and address) as sock_diag takes it.
void Fill(const sockaddr_storage& addr, __be16& port, __be32 (&out)[4]) {
  std::memset(out, 0, sizeof(out));
  if (addr.ss_family == AF_INET) {
    const auto& in = reinterpret_cast<const sockaddr_in&>(addr);
    port = in.sin_port;
    std::memcpy(out, &in.sin_addr, sizeof(in.sin_addr));
  } else {
    const auto& in6 = reinterpret_cast<const sockaddr_in6&>(addr);
    port = in6.sin6_port;
    std::memcpy(out, &in6.sin6_addr, sizeof(in6.sin6_addr));
  }
}

// Closes a descriptor when it goes out of scope.
struct Closer {
  int fd;
  ~Closer() {
    if (fd >= 0) close(fd);
  }
};

}  // namespace

std::optional<uid_t> LoopbackPeerUid(int fd) {
  sockaddr_storage local{}, peer{};
  socklen_t local_len = sizeof(local), peer_len = sizeof(peer);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_len) != 0 ||
      getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peer_len) != 0 || !IsLoopback(peer)) {
    return std::nullopt;
  }
  Closer diag{socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG)};
  if (diag.fd < 0) return std::nullopt;
  timeval tv{.tv_sec = 1, .tv_usec = 0};
  setsockopt(diag.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  struct {
    nlmsghdr header;
    inet_diag_req_v2 request;
  } ask{};
  ask.header = {.nlmsg_len = sizeof(ask),
                .nlmsg_type = SOCK_DIAG_BY_FAMILY,
                .nlmsg_flags = NLM_F_REQUEST,
                .nlmsg_seq = 1,
                .nlmsg_pid = 0};
  ask.request.sdiag_family = static_cast<uint8_t>(peer.ss_family);
  ask.request.sdiag_protocol = IPPROTO_TCP;
  ask.request.idiag_states = ~0u;
  // The peer's socket: its source is the peer's end, its destination ours.
  Fill(peer, ask.request.id.idiag_sport, ask.request.id.idiag_src);
  Fill(local, ask.request.id.idiag_dport, ask.request.id.idiag_dst);
  ask.request.id.idiag_cookie[0] = INET_DIAG_NOCOOKIE;
  ask.request.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
  sockaddr_nl kernel{.nl_family = AF_NETLINK, .nl_pad = 0, .nl_pid = 0, .nl_groups = 0};
  if (sendto(diag.fd, &ask, sizeof(ask), 0, reinterpret_cast<sockaddr*>(&kernel), sizeof(kernel)) <
      0) {
    return std::nullopt;
  }
  alignas(nlmsghdr) char answer[1024];
  ssize_t n = recv(diag.fd, answer, sizeof(answer), 0);
  if (n < static_cast<ssize_t>(NLMSG_LENGTH(sizeof(inet_diag_msg)))) return std::nullopt;
  const auto* header = reinterpret_cast<const nlmsghdr*>(answer);
  if (header->nlmsg_type != SOCK_DIAG_BY_FAMILY) return std::nullopt;  // NLMSG_ERROR: none
  const auto* msg = reinterpret_cast<const inet_diag_msg*>(NLMSG_DATA(header));
  return static_cast<uid_t>(msg->idiag_uid);
}

}  // namespace trainyard::server
