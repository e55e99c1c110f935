// TokenRequest and TokenReview on an API-only server, as kube-apiserver
// answers them (checked against a real one): a token holds its audiences,
// its account and the pod it is bound to, and is good only while those are
// the same objects and it has not expired; a token this server did not
// sign is refused.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "server/handler.h"
#include "server/tests/fake_backend.h"

namespace trainyard::server {
namespace {

using ::testing::HasSubstr;

constexpr const char* kTokenPath = "/api/v1/namespaces/ns/serviceaccounts/bot/token";

class ServiceAccountTokensTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Make({{"apiVersion", "v1"},
          {"kind", "ServiceAccount"},
          {"metadata", {{"name", "bot"}, {"namespace", "ns"}}}});
    Make(Pod("p"));
  }
  static api::Json Pod(const std::string& name) {
    return {{"apiVersion", "v1"},
            {"kind", "Pod"},
            {"metadata", {{"name", name}, {"namespace", "ns"}}},
            {"spec",
             {{"serviceAccountName", "bot"}, {"containers", {{{"name", "c"}, {"image", "x"}}}}}}};
  }
  void Make(const api::Json& object) {
    Result<api::Json> created = backend_.writable().Create(object);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
  }
  ApiResponse Post(const std::string& path, const api::Json& body) {
    return handler_.Handle(
        {.method = "POST", .path = path, .content_type = "application/json", .body = body.dump()});
  }
  // A token for `audience`, bound to pod p when `bound`.
  std::string Token(const std::string& audience, bool bound = false) {
    api::Json spec = {{"audiences", {audience}}};
    if (bound) spec["boundObjectRef"] = {{"kind", "Pod"}, {"apiVersion", "v1"}, {"name", "p"}};
    ApiResponse r = Post(kTokenPath, {{"spec", spec}});
    EXPECT_EQ(r.code, 201) << r.body;
    return api::Json::parse(r.body)["status"]["token"];
  }
  api::Json Review(const std::string& token, const std::string& audience) {
    ApiResponse r =
        Post(kTokenReviewsPath, {{"apiVersion", "authentication.k8s.io/v1"},
                                 {"kind", "TokenReview"},
                                 {"spec", {{"token", token}, {"audiences", {audience}}}}});
    EXPECT_EQ(r.code, 201) << r.body;
    return api::Json::parse(r.body)["status"];
  }

  FakeClock clock_;
  FakeBackend backend_{clock_};
  ApiHandler handler_{backend_, clock_, nullptr, nullptr, /*api_only=*/true};
};

TEST_F(ServiceAccountTokensTest, AReviewSaysWhoseTokenItIsForTheAudiencesItHolds) {
  api::Json status = Review(Token("aud-1"), "aud-1");
  EXPECT_TRUE(status["authenticated"].get<bool>()) << status.dump();
  EXPECT_EQ(status["user"]["username"], "system:serviceaccount:ns:bot");
  EXPECT_EQ(status["audiences"], api::Json({"aud-1"}));
  EXPECT_FALSE(status["user"].contains("extra"));
  // Another audience: kube-apiserver's words.
  status = Review(Token("aud-1"), "aud-2");
  EXPECT_FALSE(status.value("authenticated", false));
  EXPECT_EQ(status["error"],
            "[invalid bearer token, token audiences [\"aud-1\"] is invalid for the target "
            "audiences [\"aud-2\"]]");
}

TEST_F(ServiceAccountTokensTest, ABoundTokenNamesItsPodAndDiesWithIt) {
  std::string token = Token("aud", /*bound=*/true);
  api::Json status = Review(token, "aud");
  ASSERT_TRUE(status.value("authenticated", false)) << status.dump();
  EXPECT_EQ(status["user"]["extra"]["authentication.kubernetes.io/pod-name"], api::Json({"p"}));
  ASSERT_TRUE(backend_.writable().Delete({"Pod", "ns", "p"}).ok());
  Make(Pod("p"));  // the same name, another pod
  EXPECT_FALSE(Review(token, "aud").value("authenticated", false));
}

TEST_F(ServiceAccountTokensTest, ForgedExpiredOrOrphanedTokensAreRefused) {
  std::string token = Token("aud");
  std::string forged = token;
  forged.back() = forged.back() == 'A' ? 'B' : 'A';
  EXPECT_FALSE(Review(forged, "aud").value("authenticated", false));
  EXPECT_FALSE(Review("not-a-token", "aud").value("authenticated", false));
  // Another server's key signs other tokens.
  FakeBackend other_backend{clock_};
  ApiHandler other{other_backend, clock_, nullptr, nullptr, /*api_only=*/true};
  ASSERT_TRUE(other_backend.writable()
                  .Create({{"apiVersion", "v1"},
                           {"kind", "ServiceAccount"},
                           {"metadata", {{"name", "bot"}, {"namespace", "ns"}}}})
                  .ok());
  ApiResponse elsewhere = other.Handle(
      {.method = "POST", .path = kTokenPath, .body = R"({"spec": {"audiences": ["aud"]}})"});
  ASSERT_EQ(elsewhere.code, 201);
  EXPECT_FALSE(Review(api::Json::parse(elsewhere.body)["status"]["token"], "aud")
                   .value("authenticated", false));
  // An hour later (the default life), expired.
  clock_.Advance(std::chrono::seconds(3601));
  EXPECT_THAT(Review(token, "aud")["error"].get<std::string>(), HasSubstr("expired"));
  // A token outlives no account.
  std::string fresh = Token("aud");
  ASSERT_TRUE(backend_.writable().Delete({"ServiceAccount", "ns", "bot"}).ok());
  EXPECT_FALSE(Review(fresh, "aud").value("authenticated", false));
}

TEST_F(ServiceAccountTokensTest, BadRequestsAreRefusedInKubeApiserversWords) {
  ApiResponse r = Post(kTokenPath, {{"spec", {{"expirationSeconds", 60}}}});
  EXPECT_EQ(r.code, 422);
  EXPECT_THAT(r.body, HasSubstr("TokenRequest.authentication.k8s.io \\\"\\\" is invalid: "
                                "spec.expirationSeconds: Invalid value: 60: may not specify a "
                                "duration less than 10 minutes"));
  r = Post("/api/v1/namespaces/ns/serviceaccounts/nobody/token", api::Json::object());
  EXPECT_EQ(r.code, 404);
  EXPECT_THAT(r.body, HasSubstr("serviceaccounts \\\"nobody\\\" not found"));
  r = Post(
      kTokenPath,
      {{"spec", {{"boundObjectRef", {{"kind", "Pod"}, {"name", "p"}, {"uid", "not-its-uid"}}}}}});
  EXPECT_EQ(r.code, 409);
  EXPECT_THAT(r.body, HasSubstr("does not match the UID in record"));
  // A pod that runs as another account: kube-apiserver's 400.
  api::Json other = Pod("q");
  other["spec"].erase("serviceAccountName");
  Make(other);
  r = Post(kTokenPath, {{"spec", {{"boundObjectRef", {{"kind", "Pod"}, {"name", "q"}}}}}});
  EXPECT_EQ(r.code, 400);
  EXPECT_THAT(r.body, HasSubstr("cannot bind token for serviceaccount \\\"bot\\\" to pod running "
                                "with different serviceaccount name."));
  r = Post(kTokenReviewsPath, {{"spec", api::Json::object()}});
  EXPECT_EQ(r.code, 400);
  EXPECT_THAT(r.body, HasSubstr("token is required for TokenReview in authentication"));
}

}  // namespace
}  // namespace trainyard::server
