// Who is at the other end of a loopback connection: every local process
// connects from 127.0.0.1, so an address tells users apart no better than a
// shared name would. The kernel knows the user owning each TCP socket, and
// says so to anyone who asks (as /proc/net/tcp shows it); SO_PEERCRED, the
// usual way, works on Unix sockets only.
#pragma once

#include <sys/types.h>

#include <optional>

namespace trainyard::server {

// The uid owning the peer socket of `fd`, a TCP connection whose peer is
// on this machine's loopback; nullopt for another peer, or when the kernel
// does not say (no sock_diag).
std::optional<uid_t> LoopbackPeerUid(int fd);

}  // namespace trainyard::server
