// WebSocket framing (RFC 6455), the server's side, as `kubectl exec` speaks
// it: the handshake's accept key, frames to send (never masked), and a
// reader that takes a client's bytes as they arrive and gives whole
// messages (fragments joined; control frames at once), bounded in size.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace trainyard::server::websocket {

enum Opcode : uint8_t {
  kContinuation = 0x0,
  kText = 0x1,
  kBinary = 0x2,
  kClose = 0x8,
  kPing = 0x9,
  kPong = 0xA,
};

struct Message {
  Opcode opcode;
  std::string payload;
};

// Sec-WebSocket-Accept for a client's Sec-WebSocket-Key.
std::string AcceptKey(std::string_view client_key);

// One whole frame of `payload`.
std::string Frame(Opcode opcode, std::string_view payload);

// A close frame with a status code (1000: normal closure).
std::string CloseFrame(uint16_t code);

class Reader {
 public:
  explicit Reader(size_t max_message_bytes) : max_message_bytes_(max_message_bytes) {}

  // Takes `bytes` and returns the messages they complete. INVALID_ARGUMENT
  // for what a client must not send: an unmasked frame, a message over the
  // bound, a fragmented control frame, an unknown opcode.
  Result<std::vector<Message>> Feed(std::string_view bytes);

 private:
  size_t max_message_bytes_;
  std::string pending_;  // bytes of a frame not yet whole
  bool in_message_ = false;
  Opcode message_opcode_ = kBinary;
  std::string message_;  // fragments so far
};

}  // namespace trainyard::server::websocket
