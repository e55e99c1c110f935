#include "server/websocket.h"

#include <fmt/format.h>
#include <openssl/sha.h>

#include "common/strings.h"

namespace trainyard::server::websocket {
namespace {

constexpr std::string_view kGuid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

bool IsControl(uint8_t opcode) { return (opcode & 0x8) != 0; }

bool IsKnown(uint8_t opcode) {
  return opcode == kContinuation || opcode == kText || opcode == kBinary || opcode == kClose ||
         opcode == kPing || opcode == kPong;
}

}  // namespace

std::string AcceptKey(std::string_view client_key) {
  std::string text = std::string(client_key) + std::string(kGuid);
  unsigned char digest[SHA_DIGEST_LENGTH];
  SHA1(reinterpret_cast<const unsigned char*>(text.data()), text.size(), digest);
  return Base64Encode(std::string_view(reinterpret_cast<const char*>(digest), sizeof(digest)));
}

std::string Frame(Opcode opcode, std::string_view payload) {
  std::string out;
  out.push_back(static_cast<char>(0x80 | opcode));  // FIN: always whole
  size_t n = payload.size();
  if (n < 126) {
    out.push_back(static_cast<char>(n));
  } else if (n <= 0xFFFF) {
    out.push_back(126);
    out.push_back(static_cast<char>(n >> 8));
    out.push_back(static_cast<char>(n & 0xFF));
  } else {
    out.push_back(127);
    for (int shift = 56; shift >= 0; shift -= 8)
      out.push_back(static_cast<char>((n >> shift) & 0xFF));
  }
  out.append(payload);
  return out;
}

std::string CloseFrame(uint16_t code) {
  std::string payload = {static_cast<char>(code >> 8), static_cast<char>(code & 0xFF)};
  return Frame(kClose, payload);
}

Result<std::vector<Message>> Reader::Feed(std::string_view bytes) {
  pending_.append(bytes);
  std::vector<Message> out;
  size_t at = 0;
  auto byte = [&](size_t i) { return static_cast<uint8_t>(pending_[at + i]); };
  while (pending_.size() - at >= 2) {
    uint8_t first = byte(0), second = byte(1);
    bool fin = (first & 0x80) != 0;
    uint8_t opcode = first & 0x0F;
    if ((first & 0x70) != 0 || !IsKnown(opcode)) {
      return InvalidArgumentError(
          fmt::format("websocket: a frame with opcode {:#x} or reserved "
                      "bits set",
                      opcode));
    }
    if ((second & 0x80) == 0) return InvalidArgumentError("websocket: a client frame unmasked");
    uint64_t length = second & 0x7F;
    size_t header = 2;
    if (length == 126 || length == 127) {
      size_t extra = length == 126 ? 2 : 8;
      if (pending_.size() - at < header + extra) break;
      length = 0;
      for (size_t i = 0; i < extra; ++i) length = (length << 8) | byte(header + i);
      header += extra;
    }
    if (IsControl(opcode) && (!fin || length > 125)) {
      return InvalidArgumentError("websocket: a control frame fragmented or over 125 bytes");
    }
    if (length > max_message_bytes_ || message_.size() + length > max_message_bytes_) {
      return InvalidArgumentError(
          fmt::format("websocket: a message over {} bytes", max_message_bytes_));
    }
    if (pending_.size() - at < header + 4 + length) break;
    const char* mask = pending_.data() + at + header;
    std::string payload = pending_.substr(at + header + 4, length);
    for (size_t i = 0; i < payload.size(); ++i) payload[i] ^= mask[i % 4];
    at += header + 4 + length;
    if (IsControl(opcode)) {
      out.push_back({static_cast<Opcode>(opcode), std::move(payload)});
      continue;
    }
    if (opcode == kContinuation) {
      if (!in_message_) return InvalidArgumentError("websocket: a continuation of no message");
    } else {
      if (in_message_) return InvalidArgumentError("websocket: a new message inside another");
      in_message_ = true;
      message_opcode_ = static_cast<Opcode>(opcode);
      message_.clear();
    }
    message_ += payload;
    if (fin) {
      out.push_back({message_opcode_, std::move(message_)});
      message_.clear();
      in_message_ = false;
    }
  }
  pending_.erase(0, at);
  return out;
}

}  // namespace trainyard::server::websocket
