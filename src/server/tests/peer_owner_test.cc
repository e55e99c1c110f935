// The kernel says who owns the other end of a loopback connection.
#include "server/peer_owner.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace trainyard::server {
namespace {

TEST(PeerOwnerTest, ALoopbackPeerIsKnownByItsUser) {
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{.sin_family = AF_INET, .sin_port = 0};
  inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(listener, 1), 0);
  socklen_t len = sizeof(addr);
  getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len);
  int client = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_EQ(connect(client, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  int served = accept(listener, nullptr, nullptr);
  ASSERT_GE(served, 0);
  std::optional<uid_t> uid = LoopbackPeerUid(served);
  if (!uid) GTEST_SKIP() << "this kernel answers no sock_diag query";
  EXPECT_EQ(*uid, geteuid());
  close(served);
  close(client);
  close(listener);
}

TEST(PeerOwnerTest, WhatIsNoConnectionHasNoOwner) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  EXPECT_FALSE(LoopbackPeerUid(fd).has_value());
  close(fd);
}

}  // namespace
}  // namespace trainyard::server
