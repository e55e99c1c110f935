#include "server/request_framing.h"

#include <fmt/format.h>

#include <charconv>
#include <optional>

#include "common/strings.h"

namespace trainyard::server {
namespace {

constexpr std::string_view kCrlf = "\r\n";
constexpr size_t kMaxChunkLine = 1024;  // a size and its extensions

bool NameIs(std::string_view name, std::string_view want) {
  return name.size() == want.size() && AsciiLower(std::string(name)) == want;
}

std::optional<size_t> ParseNumber(std::string_view text, int base) {
  size_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

RequestFraming Malformed(std::string why) {
  return {.state = RequestFraming::kMalformed, .why = std::move(why)};
}

// The end of a chunked body that begins at `at`, or kNeedMore/kTooLarge/
// kMalformed in `out`.
void FrameChunked(std::string_view bytes, size_t at, const FramingLimits& limits,
                  RequestFraming& out) {
  size_t body = 0;
  while (true) {
    size_t eol = bytes.find(kCrlf, at);
    if (eol == std::string_view::npos) {
      if (bytes.size() - at > kMaxChunkLine) out = Malformed("a chunk's size line is too long");
      return;
    }
    std::string_view line = bytes.substr(at, eol - at);
    std::optional<size_t> size = ParseNumber(Trim(line.substr(0, line.find(';'))), 16);
    if (!size) {
      out = Malformed("a chunk's size is not a hexadecimal number");
      return;
    }
    at = eol + kCrlf.size();
    if (*size == 0) break;
    if (*size > limits.max_body_bytes - body) {
      out.state = RequestFraming::kTooLarge;
      return;
    }
    body += *size;
    if (bytes.size() - at < *size + kCrlf.size()) return;
    if (bytes.substr(at + *size, kCrlf.size()) != kCrlf) {
      out = Malformed("a chunk does not end where its size says");
      return;
    }
    at += *size + kCrlf.size();
  }
  // Trailer fields, then the blank line.
  while (true) {
    size_t eol = bytes.find(kCrlf, at);
    if (eol == std::string_view::npos) {
      if (bytes.size() - at > limits.max_head_bytes) out = Malformed("the trailer is too long");
      return;
    }
    if (eol == at) break;
    at = eol + kCrlf.size();
  }
  out.state = RequestFraming::kComplete;
  out.size = at + kCrlf.size();
}

// `head` with each header field line `rewrite` answers for (given its
// name and trimmed value) replaced by its answer ("" drops it); the request
// line and other fields as they are.
template <class Rewrite>
std::string RewriteFields(std::string_view head, const Rewrite& rewrite) {
  std::string out;
  size_t at = 0;
  while (at < head.size()) {
    size_t eol = head.find(kCrlf, at);
    size_t next = eol == std::string_view::npos ? head.size() : eol + kCrlf.size();
    std::string_view line = head.substr(at, next - at);
    size_t colon = line.find(':');
    std::optional<std::string> replaced;
    if (at != 0 && colon != std::string_view::npos) {
      replaced = rewrite(line.substr(0, colon),
                         Trim(line.substr(colon + 1, line.find(kCrlf) - colon - 1)));
    }
    out += replaced ? *replaced : std::string(line);
    at = next;
  }
  return out;
}

}  // namespace

RequestFraming FrameRequest(std::string_view bytes, const FramingLimits& limits) {
  size_t end = bytes.find("\r\n\r\n");
  if (end == std::string_view::npos || end + 4 > limits.max_head_bytes) {
    if (bytes.size() > limits.max_head_bytes) return Malformed("the request's head is too long");
    return {};
  }
  RequestFraming out{.head_size = end + 4};
  std::optional<size_t> length;
  bool chunked = false;
  size_t at = bytes.find(kCrlf) + kCrlf.size();  // past the request line
  while (at < end + kCrlf.size()) {
    size_t eol = bytes.find(kCrlf, at);
    std::string_view line = bytes.substr(at, eol - at);
    at = eol + kCrlf.size();
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;  // httplib's to refuse
    std::string_view name = line.substr(0, colon);
    std::string_view value = Trim(line.substr(colon + 1));
    if (NameIs(name, "content-length")) {
      std::optional<size_t> n = ParseNumber(value, 10);
      if (!n || (length && *length != *n)) return Malformed("Content-Length is not one number");
      length = n;
    } else if (NameIs(name, "transfer-encoding")) {
      // Only chunked is read (httplib's one coding); anything else, and
      // both framings at once, is how requests are smuggled.
      if (AsciiLower(std::string(value)) != "chunked" || chunked) {
        return Malformed("Transfer-Encoding other than one chunked");
      }
      chunked = true;
    } else if (NameIs(name, "expect")) {
      out.expect_continue = AsciiLower(std::string(value)) == "100-continue";
    }
  }
  if (chunked && length) return Malformed("both Content-Length and Transfer-Encoding");
  if (chunked) {
    FrameChunked(bytes, out.head_size, limits, out);
    return out;
  }
  out.body_expected = length.value_or(0);
  if (out.body_expected > limits.max_body_bytes) {
    out.state = RequestFraming::kTooLarge;
    return out;
  }
  if (bytes.size() - out.head_size >= out.body_expected) {
    out.state = RequestFraming::kComplete;
    out.size = out.head_size + out.body_expected;
  }
  return out;
}

std::string WithoutExpect(std::string_view head) {
  return RewriteFields(head, [](std::string_view name, std::string_view) {
    return NameIs(name, "expect") ? std::optional<std::string>("") : std::nullopt;
  });
}

std::string WithUnparsedForm(std::string_view head) {
  return RewriteFields(head, [](std::string_view name, std::string_view value) {
    bool form = NameIs(name, "content-type") &&
                AsciiLower(value).starts_with("application/x-www-form-urlencoded");
    return form ? std::optional(fmt::format("Content-Type: {}\r\n", kUnparsedForm)) : std::nullopt;
  });
}

std::string_view TargetOf(std::string_view head) {
  std::string_view line = head.substr(0, head.find(kCrlf));
  size_t first = line.find(' ');
  if (first == std::string_view::npos) return "";
  size_t second = line.find(' ', first + 1);
  return line.substr(
      first + 1, second == std::string_view::npos ? std::string_view::npos : second - first - 1);
}

}  // namespace trainyard::server
