#include "server/auth.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace trainyard::server {
namespace {

Authorizer Tokens() {
  return *Authorizer::Parse(
      "# token user namespaces\n"
      "alice-secret-1 alice team-a,team-b\n"
      "ops-secret-123 ops *\n");
}

ApiRequest Request(std::string method, std::string path, std::string token = "") {
  return {.method = std::move(method),
          .path = std::move(path),
          .authorization = token.empty() ? "" : "Bearer " + token};
}

int Code(const std::optional<ApiError>& e) { return e ? e->code : 200; }

TEST(AuthTest, TokensReachOnlyTheirNamespaces) {
  Authorizer auth = Tokens();
  const std::string jobs = "/apis/kubeflow.org/v1/namespaces/";
  EXPECT_EQ(Code(auth.Check(Request("GET", jobs + "team-a/pytorchjobs"))), 401);
  EXPECT_EQ(Code(auth.Check(Request("GET", jobs + "team-a/pytorchjobs", "wrong-secret"))), 401);
  EXPECT_EQ(Code(auth.Check(Request("POST", jobs + "team-a/pytorchjobs", "alice-secret-1"))), 200);
  EXPECT_EQ(Code(auth.Check(Request("GET", jobs + "team-b/pytorchjobs/x", "alice-secret-1"))), 200);
  std::optional<ApiError> denied =
      auth.Check(Request("DELETE", jobs + "team-c/pytorchjobs/x", "alice-secret-1"));
  ASSERT_EQ(Code(denied), 403);
  EXPECT_EQ(denied->body["message"],
            "pytorchjobs.kubeflow.org is forbidden: User \"alice\" cannot delete resource "
            "\"pytorchjobs\" in API group \"kubeflow.org\" in the namespace \"team-c\"");
  // Every namespace's jobs at once, or a new namespace: only for `*`.
  EXPECT_EQ(Code(auth.Check(Request("GET", "/apis/kubeflow.org/v1/pytorchjobs", "alice-secret-1"))),
            403);
  EXPECT_EQ(Code(auth.Check(Request("POST", "/api/v1/namespaces", "alice-secret-1"))), 403);
  EXPECT_EQ(Code(auth.Check(Request("GET", "/api/v1/namespaces", "alice-secret-1"))), 200);
  EXPECT_EQ(Code(auth.Check(Request("GET", "/apis", "alice-secret-1"))), 200);
  EXPECT_EQ(Code(auth.Check(Request("POST", "/api/v1/namespaces", "ops-secret-123"))), 200);
  EXPECT_EQ(Code(auth.Check(Request("GET", "/healthz"))), 200);
  // The dashboard's files hold no data; what its pages then ask for does.
  EXPECT_EQ(Code(auth.Check(Request("GET", "/"))), 200);
  EXPECT_EQ(Code(auth.Check(Request("GET", "/ui/vendor/uPlot.esm.js"))), 200);
  // Every namespace's job counts: not for a namespace's token.
  EXPECT_EQ(Code(auth.Check(Request("GET", "/metrics", "alice-secret-1"))), 403);
  EXPECT_EQ(Code(auth.Check(Request("GET", "/metrics", "ops-secret-123"))), 200);
  EXPECT_EQ(auth.AdminToken(), "ops-secret-123");
}

TEST(AuthTest, AMalformedTokenFileIsRefusedWithItsLine) {
  EXPECT_THAT(Authorizer::Parse("tok-1234567 alice\n").status().message(),
              ::testing::HasSubstr("line 1: want TOKEN USER NAMESPACES"));
  EXPECT_THAT(Authorizer::Parse("short a *\n").status().message(),
              ::testing::HasSubstr("8 characters"));
  EXPECT_THAT(Authorizer::Parse("# only a comment\n").status().message(),
              ::testing::HasSubstr("no tokens"));
}

}  // namespace
}  // namespace trainyard::server
