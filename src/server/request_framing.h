// Where an HTTP/1.1 request ends in the bytes received so far, read before
// any thread is given to it (request_reader.h): its head, then its body by
// Content-Length or chunked framing. Only framing is read here; httplib
// parses the request itself once it is whole.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace trainyard::server {

struct FramingLimits {
  size_t max_head_bytes = 64 * 1024;
  // A body past this is not waited for: the request goes on at once, to
  // be refused (413) without its body being read.
  size_t max_body_bytes = 3 * 1024 * 1024;
};

struct RequestFraming {
  enum State {
    kNeedMore,   // the head or body is not whole yet
    kComplete,   // `size` bytes make the whole request
    kTooLarge,   // its body is over the limit: serve at once, to refuse it
    kMalformed,  // cannot be framed: close the connection
  } state = kNeedMore;
  size_t head_size = 0;          // through the blank line; 0 while unknown
  size_t size = 0;               // head and body, once kComplete
  size_t body_expected = 0;      // Content-Length, once the head is whole
  bool expect_continue = false;  // Expect: 100-continue
  std::string why;               // for kMalformed
};

// How much of `bytes` (from the start of a request) is the request.
RequestFraming FrameRequest(std::string_view bytes, const FramingLimits& limits);

// `head` with its Expect: 100-continue line taken out, for a request whose
// body was awaited after answering 100 Continue already.
std::string WithoutExpect(std::string_view head);

// httplib parses a body sent as application/x-www-form-urlencoded (curl's
// default for --data) into parameters, and refuses one over 8 KiB with 413,
// though no route here reads forms: such a head's Content-Type is renamed
// to kUnparsedForm, which ApiRequest reads back as what was sent.
inline constexpr std::string_view kUnparsedForm = "application/x.trainyard-unparsed-form";
std::string WithUnparsedForm(std::string_view head);

// The request target of a head's request line ("" when it has none).
std::string_view TargetOf(std::string_view head);

}  // namespace trainyard::server
