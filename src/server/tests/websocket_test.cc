// WebSocket framing on its own: the handshake key, frames as sent, and a
// client's frames read back whole however they arrive.
#include "server/websocket.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace trainyard::server::websocket {
namespace {

// A client's frame: masked, as RFC 6455 requires of clients.
std::string ClientFrame(uint8_t first_byte, std::string_view payload) {
  std::string out(1, static_cast<char>(first_byte));
  size_t n = payload.size();
  if (n < 126) {
    out.push_back(static_cast<char>(0x80 | n));
  } else {
    out.push_back(static_cast<char>(0x80 | 126));
    out.push_back(static_cast<char>(n >> 8));
    out.push_back(static_cast<char>(n & 0xFF));
  }
  const char mask[4] = {0x11, 0x22, 0x33, 0x44};
  out.append(mask, 4);
  for (size_t i = 0; i < n; ++i) out.push_back(static_cast<char>(payload[i] ^ mask[i % 4]));
  return out;
}

TEST(WebSocketTest, TheAcceptKeyIsRfc6455s) {
  EXPECT_EQ(AcceptKey("dGhlIHNhbXBsZSBub25jZQ=="), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
}

TEST(WebSocketTest, FramesCarryTheirLengthInTheSmallestForm) {
  EXPECT_EQ(Frame(kBinary, "\x01hi"), std::string("\x82\x03\x01hi", 5));
  std::string medium = Frame(kBinary, std::string(300, 'x'));
  EXPECT_EQ(medium.substr(0, 4), std::string("\x82\x7e\x01\x2c", 4));
  EXPECT_EQ(medium.size(), 4u + 300u);
  std::string large = Frame(kBinary, std::string(70000, 'x'));
  EXPECT_EQ(large.substr(0, 10), std::string("\x82\x7f\x00\x00\x00\x00\x00\x01\x11\x70", 10));
  EXPECT_EQ(CloseFrame(1000), std::string("\x88\x02\x03\xe8", 4));
}

TEST(WebSocketTest, MessagesComeWholeHoweverTheBytesArrive) {
  Reader reader(1 << 20);
  // A fragmented message with a ping between its fragments, a byte at a time.
  std::string bytes = ClientFrame(0x02, std::string("\x00he", 3)) + ClientFrame(0x89, "beat") +
                      ClientFrame(0x00, std::string(200, 'l')) + ClientFrame(0x80, "o");
  std::vector<Message> got;
  for (char c : bytes) {
    Result<std::vector<Message>> some = reader.Feed(std::string_view(&c, 1));
    ASSERT_TRUE(some.ok()) << some.status().ToString();
    got.insert(got.end(), some->begin(), some->end());
  }
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].opcode, kPing);
  EXPECT_EQ(got[0].payload, "beat");
  EXPECT_EQ(got[1].opcode, kBinary);
  EXPECT_EQ(got[1].payload, std::string("\x00he", 3) + std::string(200, 'l') + "o");
}

TEST(WebSocketTest, WhatAClientMustNotSendIsRefused) {
  std::string unmasked = Frame(kBinary, "x");
  EXPECT_FALSE(Reader(1024).Feed(unmasked).ok());
  // A length of 2^63 declared in the 8-byte form: refused from its header,
  // before any payload is waited for or held.
  std::string huge = "\x82\xff\x7f\xff\xff\xff\xff\xff\xff\xff";
  EXPECT_THAT(Reader(1 << 20).Feed(huge).status().message(), ::testing::HasSubstr("over"));
  EXPECT_THAT(Reader(100).Feed(ClientFrame(0x82, std::string(101, 'x'))).status().message(),
              ::testing::HasSubstr("over 100 bytes"));
  // The bound holds across fragments too, before they are all in.
  Reader fragments(100);
  ASSERT_TRUE(fragments.Feed(ClientFrame(0x02, std::string(60, 'x'))).ok());
  EXPECT_FALSE(fragments.Feed(ClientFrame(0x80, std::string(60, 'x'))).ok());
  EXPECT_FALSE(Reader(1024).Feed(ClientFrame(0x09, "ping")).ok()) << "a fragmented control frame";
  EXPECT_FALSE(Reader(1024).Feed(ClientFrame(0x83, "x")).ok()) << "an unknown opcode";
  EXPECT_FALSE(Reader(1024).Feed(ClientFrame(0x80, "x")).ok()) << "a continuation of nothing";
}

}  // namespace
}  // namespace trainyard::server::websocket
