#include "common/loopback.h"

#include <gtest/gtest.h>

namespace trainyard {
namespace {

TEST(LoopbackTest, OnlyLoopbackLiteralsAndLocalhostAre) {
  for (const char* host : {"localhost", "127.0.0.1", "127.255.3.4", "::1", "[::1]"}) {
    EXPECT_TRUE(IsLoopbackHost(host)) << host;
  }
  // Names that begin like loopback resolve wherever their owner says.
  for (const char* host :
       {"127.0.0.1.evil.example", "127.evil.example", "127.", "127.1", "0x7f.0.0.1", "128.0.0.1",
        "localhost.evil.example", "[::1].x", "", "::2", "127.0.0.1 "}) {
    EXPECT_FALSE(IsLoopbackHost(host)) << host;
  }
}

TEST(LoopbackTest, AHostHeadersPortIsCutOff) {
  EXPECT_EQ(HostWithoutPort("127.0.0.1:8080"), "127.0.0.1");
  EXPECT_EQ(HostWithoutPort("127.0.0.1.evil.example:8080"), "127.0.0.1.evil.example");
  EXPECT_EQ(HostWithoutPort("[::1]:8080"), "[::1]");
  EXPECT_EQ(HostWithoutPort("[::1]"), "[::1]");
  EXPECT_EQ(HostWithoutPort("localhost"), "localhost");
}

}  // namespace
}  // namespace trainyard
