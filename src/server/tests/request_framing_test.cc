// Where a request ends in what a client sent so far, read before a thread
// serves it.
#include "server/request_framing.h"

#include <gtest/gtest.h>

namespace trainyard::server {
namespace {

const FramingLimits kLimits{.max_head_bytes = 1024, .max_body_bytes = 100};

TEST(RequestFramingTest, AHeadIsWholeAtItsBlankLineAndABodyAtItsLength) {
  std::string get = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
  EXPECT_EQ(FrameRequest(get.substr(0, get.size() - 1), kLimits).state, RequestFraming::kNeedMore);
  RequestFraming whole = FrameRequest(get + "GET /next", kLimits);
  EXPECT_EQ(whole.state, RequestFraming::kComplete);
  EXPECT_EQ(whole.size, get.size());  // the next request is not this one's

  std::string post = "POST /x HTTP/1.1\r\ncontent-LENGTH: 5\r\n\r\n";
  RequestFraming head = FrameRequest(post + "abc", kLimits);
  EXPECT_EQ(head.state, RequestFraming::kNeedMore);
  EXPECT_EQ(head.head_size, post.size());
  EXPECT_EQ(FrameRequest(post + "abcde", kLimits).size, post.size() + 5);
}

TEST(RequestFramingTest, AChunkedBodyEndsAtItsLastChunkAndTrailer) {
  std::string head = "POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n";
  std::string body = "3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\nX-Trailer: 1\r\n\r\n";
  for (size_t cut = 0; cut < body.size(); ++cut) {
    EXPECT_EQ(FrameRequest(head + body.substr(0, cut), kLimits).state, RequestFraming::kNeedMore)
        << cut;
  }
  RequestFraming whole = FrameRequest(head + body + "GET", kLimits);
  EXPECT_EQ(whole.state, RequestFraming::kComplete);
  EXPECT_EQ(whole.size, head.size() + body.size());
}

TEST(RequestFramingTest, BodiesOverTheLimitAreNotAwaited) {
  EXPECT_EQ(FrameRequest("PUT /x HTTP/1.1\r\nContent-Length: 101\r\n\r\n", kLimits).state,
            RequestFraming::kTooLarge);
  EXPECT_EQ(
      FrameRequest("PUT /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n65\r\n", kLimits).state,
      RequestFraming::kTooLarge);
}

TEST(RequestFramingTest, WhatCannotBeFramedOrIsTooLongIsMalformed) {
  for (const char* request :
       {"POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
        "POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
        "POST / HTTP/1.1\r\nContent-Length: 1x\r\n\r\n",
        "POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n",
        "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n",
        "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nabc\r\n"}) {
    EXPECT_EQ(FrameRequest(request, kLimits).state, RequestFraming::kMalformed) << request;
  }
  EXPECT_EQ(FrameRequest("GET / HTTP/1.1\r\nX: " + std::string(1100, 'a'), kLimits).state,
            RequestFraming::kMalformed);
}

TEST(RequestFramingTest, ExpectContinueIsSeenAndTakenOut) {
  std::string head = "PUT /x HTTP/1.1\r\nExpect: 100-Continue\r\nContent-Length: 3\r\n\r\n";
  RequestFraming framing = FrameRequest(head, kLimits);
  EXPECT_TRUE(framing.expect_continue);
  EXPECT_EQ(WithoutExpect(head), "PUT /x HTTP/1.1\r\nContent-Length: 3\r\n\r\n");
}

TEST(RequestFramingTest, AFormsTypeIsRenamedSoItsBodyIsLeftWhole) {
  std::string head =
      "PUT /a?x=1 HTTP/1.1\r\ncontent-type:  Application/X-WWW-Form-Urlencoded; charset=x\r\n"
      "Content-Length: 3\r\n\r\n";
  EXPECT_EQ(WithUnparsedForm(head),
            "PUT /a?x=1 HTTP/1.1\r\nContent-Type: " + std::string(kUnparsedForm) +
                "\r\nContent-Length: 3\r\n\r\n");
  std::string json = "PUT /a HTTP/1.1\r\nContent-Type: application/json\r\n\r\n";
  EXPECT_EQ(WithUnparsedForm(json), json);
  EXPECT_EQ(TargetOf(head), "/a?x=1");
  EXPECT_EQ(TargetOf("garbage"), "");
}

}  // namespace
}  // namespace trainyard::server
