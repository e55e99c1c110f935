// Requests an attacker or an unlucky client sends: each is answered as
// kube-apiserver answers it, changes nothing, and costs the server little.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>

#include "server/api_path.h"
#include "server/auth.h"
#include "server/handler.h"
#include "server/json_patch.h"
#include "server/tests/fake_backend.h"

namespace trainyard::server {
namespace {

using ::testing::HasSubstr;

constexpr const char* kJobs = "/apis/kubeflow.org/v1/namespaces/default/pytorchjobs";

// `[[[...0...]]]`, `depth` arrays deep.
std::string Nested(int depth) { return std::string(depth, '[') + "0" + std::string(depth, ']'); }

class HardeningTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(handler_.EnsureDefaultNamespace().ok());
    ASSERT_EQ(Call("POST", kJobs, kTestJob).code, 201);
    setup_writes_ = backend_.writes;
  }
  // Writes run through the control loop since SetUp.
  int Writes() const { return backend_.writes - setup_writes_; }
  ApiResponse Call(std::string method, std::string path, std::string body = "",
                   std::string content_type = "application/json",
                   std::multimap<std::string, std::string> query = {}) {
    return handler_.Handle({.method = std::move(method),
                            .path = std::move(path),
                            .query = std::move(query),
                            .content_type = std::move(content_type),
                            .body = std::move(body)});
  }
  ApiResponse JsonPatch(const std::string& patch, const std::string& subresource = "") {
    return Call("PATCH", std::string(kJobs) + "/mnist" + subresource, patch,
                "application/json-patch+json");
  }
  static api::Json Body(const ApiResponse& r) { return api::Json::parse(r.body); }

  FakeClock clock_;
  FakeBackend backend_{clock_};
  ApiHandler handler_{backend_, clock_};
  int setup_writes_ = 0;
};

TEST_F(HardeningTest, ADeeplyNestedJsonPatchIsRefusedBeforeItIsApplied) {
  int64_t rv = backend_.store().CurrentResourceVersion();
  std::string deep =
      R"([{"op": "add", "path": "/metadata/labels", "value": )" + Nested(100'000) + "}]";
  ApiResponse r = JsonPatch(deep);
  EXPECT_EQ(r.code, 400);
  EXPECT_THAT(r.body, HasSubstr("nesting deeper than 128 levels"));
  EXPECT_EQ(Writes(), 0);  // the control loop never saw it
  EXPECT_EQ(backend_.store().CurrentResourceVersion(), rv);
  // A merge patch as deep is refused the same way.
  r = Call("PATCH", std::string(kJobs) + "/mnist",
           R"({"metadata": {"labels": )" + Nested(100'000) + "}}", "application/merge-patch+json");
  EXPECT_EQ(r.code, 400);
}

TEST_F(HardeningTest, CopiesThatDoubleAValueAreCutOffAtKubernetesCopyLimit) {
  // 26 copies, each doubling the last: 2^26 times the start, had it run.
  std::string patch = R"([{"op": "add", "path": "/metadata/annotations", "value": {"a0": ")" +
                      std::string(64, 'x') + R"("}})";
  for (int i = 1; i <= 26; ++i) {
    patch +=
        fmt::format(R"(, {{"op": "copy", "from": "/metadata/annotations", "path": "/x{}"}})", i);
    patch += fmt::format(
        R"(, {{"op": "move", "from": "/x{}", "path": "/metadata/annotations/a{}"}})", i, i);
  }
  patch += "]";
  auto start = std::chrono::steady_clock::now();
  ApiResponse r = JsonPatch(patch);
  EXPECT_EQ(r.code, 422) << r.body.substr(0, 300);
  EXPECT_THAT(Body(r)["message"].get<std::string>(),
              HasSubstr("the accumulated size increase of copy is"));
  EXPECT_THAT(Body(r)["message"].get<std::string>(), HasSubstr("exceeding the limit 3145728"));
  EXPECT_EQ(Writes(), 0);
  // Not a timing assertion of the test's verdict: a bound far above the
  // few milliseconds it takes, and far below the minutes it took unbounded.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
}

TEST_F(HardeningTest, AJsonPatchOfTooManyOperationsIs413) {
  std::string patch = "[";
  for (int i = 0; i < 10'001; ++i) {
    patch +=
        std::string(i ? "," : "") + R"({"op": "test", "path": "/kind", "value": "PyTorchJob"})";
  }
  patch += "]";
  ApiResponse r = JsonPatch(patch);
  EXPECT_EQ(r.code, 413);
  EXPECT_EQ(Body(r)["message"],
            "The allowed maximum operations in a JSON patch is 10000, got 10001");
}

TEST_F(HardeningTest, ADeepPushBodyIsRefusedAndABadValueIsNotEchoedWhole) {
  api::Json trial = {{"apiVersion", "kubeflow.org/v1beta1"},
                     {"kind", "Trial"},
                     {"metadata", {{"name", "t1"}, {"namespace", "default"}}},
                     {"spec",
                      {{"objective", {{"type", "minimize"}, {"objectiveMetricName", "loss"}}},
                       {"metricsCollector", {{"collector", {{"kind", "Push"}}}}}}}};
  ASSERT_TRUE(backend_.writable().Create(trial).ok());
  const std::string push = "/apis/kubeflow.org/v1beta1/namespaces/default/trials/t1/observations";
  ApiResponse r = Call("POST", push, R"({"metrics": {"loss": )" + Nested(100'000) + "}}");
  EXPECT_EQ(r.code, 400);
  EXPECT_THAT(r.body, HasSubstr("nesting deeper than 128 levels"));
  std::string long_text(100'000, '7');
  r = Call("POST", push, R"({"metrics": {"loss": ")" + long_text + R"(x", "acc": [[1]]}})");
  EXPECT_EQ(r.code, 422);
  EXPECT_LT(r.body.size(), 2'000u);
  EXPECT_THAT(r.body, HasSubstr("metrics[acc]: Invalid value: an array"));
  EXPECT_EQ(Writes(), 0);
}

TEST(JsonPatchTest, AppliesEachOperationAsRfc6902Says) {
  api::Json doc = api::Json::parse(R"({"a": {"b": [1, 2, 3]}, "c": "x"})");
  ASSERT_TRUE(ApplyJsonPatch(doc, api::Json::parse(R"([
      {"op": "add", "path": "/a/b/1", "value": 9},
      {"op": "add", "path": "/a/b/-", "value": 10},
      {"op": "remove", "path": "/a/b/0"},
      {"op": "replace", "path": "/c", "value": "y"},
      {"op": "copy", "from": "/a/b", "path": "/d"},
      {"op": "move", "from": "/c", "path": "/e"},
      {"op": "test", "path": "/e", "value": "y"},
      {"op": "add", "path": "/a/~1slash", "value": true}])"))
                  .ok());
  EXPECT_EQ(doc,
            api::Json::parse(
                R"({"a": {"b": [9, 2, 3, 10], "/slash": true}, "d": [9, 2, 3, 10], "e": "y"})"));
  for (const char* bad :
       {R"([{"op": "test", "path": "/e", "value": "z"}])",
        R"([{"op": "remove", "path": "/nothing"}])",
        R"([{"op": "add", "path": "/a/b/9", "value": 1}])",
        R"([{"op": "add", "path": "/a/b/01", "value": 1}])",
        R"([{"op": "move", "from": "/a", "path": "/a/b/x"}])",
        R"([{"op": "replace", "path": "/zz", "value": 1}])",
        R"([{"op": "add", "path": "no-slash", "value": 1}])", R"([{"op": "add", "path": "/x"}])",
        R"([{"op": "jump", "path": "/x"}])", R"([{"op": "remove", "path": ""}])"}) {
    api::Json copy = doc;
    Status s = ApplyJsonPatch(copy, api::Json::parse(bad));
    EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << bad;
  }
  EXPECT_EQ(ApplyJsonPatch(doc, api::Json::object()).code(), StatusCode::kInvalidArgument);
}

TEST_F(HardeningTest, AStatusThatDoesNotDecodeIsRefusedAndTheObjectStaysReadable) {
  std::string job = std::string(kJobs) + "/mnist";
  int64_t rv = backend_.store().CurrentResourceVersion();
  ApiResponse r = Call("PATCH", job + "/status", R"({"status": {"conditions": "Running"}})",
                       "application/merge-patch+json");
  EXPECT_EQ(r.code, 422) << r.body;
  EXPECT_THAT(r.body, HasSubstr("status.conditions"));
  api::Json with_status = Body(Call("GET", job));
  with_status["status"] = {{"replicaStatuses", {{"Master", {{"active", "one"}}}}}};
  EXPECT_EQ(Call("PUT", job + "/status", with_status.dump()).code, 422);
  EXPECT_EQ(backend_.store().CurrentResourceVersion(), rv);
  // Lists and tables of the namespace still work.
  EXPECT_EQ(Call("GET", kJobs).code, 200);
  // A well-formed status is taken, and the spec sent along is not.
  with_status["status"] = {{"conditions", {{{"type", "Created"}, {"status", "True"}}}}};
  with_status["spec"]["runPolicy"]["suspend"] = true;
  r = Call("PUT", job + "/status", with_status.dump());
  ASSERT_EQ(r.code, 200) << r.body;
  api::Json stored = Body(Call("GET", job));
  EXPECT_EQ(stored["status"]["conditions"][0]["type"], "Created");
  EXPECT_NE(stored["spec"]["runPolicy"].value("suspend", false), true);
}

TEST_F(HardeningTest, AUidInTheBodyIsAPreconditionAndNeverChangesTheObjectsUid) {
  std::string job = std::string(kJobs) + "/mnist";
  std::string uid = Body(Call("GET", job))["metadata"]["uid"];
  int64_t rv = backend_.store().CurrentResourceVersion();
  ApiResponse r =
      Call("PATCH", job, R"({"metadata": {"uid": "0000-other"}})", "application/merge-patch+json");
  EXPECT_EQ(r.code, 409) << r.body;
  EXPECT_THAT(
      Body(r)["message"].get<std::string>(),
      HasSubstr("Precondition failed: UID in precondition: 0000-other, UID in object meta: " +
                uid));
  api::Json replaced = Body(Call("GET", job));
  replaced["metadata"]["uid"] = "0000-other";
  EXPECT_EQ(Call("PUT", job, replaced.dump()).code, 409);
  EXPECT_EQ(Call("PUT", job + "/status", replaced.dump()).code, 409);
  EXPECT_EQ(backend_.store().CurrentResourceVersion(), rv);
  EXPECT_EQ(Body(Call("GET", job))["metadata"]["uid"], uid);
}

TEST_F(HardeningTest, BodiesInFormatsTheApiDoesNotReadAre415) {
  api::Json other = api::Json::parse(kTestJob);
  other["metadata"]["name"] = "other";
  EXPECT_EQ(Call("POST", kJobs, other.dump(), "text/plain").code, 415);
  EXPECT_EQ(Call("PUT", std::string(kJobs) + "/mnist", kTestJob, "text/plain").code, 415);
  EXPECT_EQ(Call("POST", kJobs, other.dump(), "application/json; charset=utf-8").code, 201);
}

TEST_F(HardeningTest, AWatchFromAVersionNotReachedOrNotANumberIsRefused) {
  int64_t current = backend_.store().CurrentResourceVersion();
  ApiResponse r = Call("GET", kJobs, "", "",
                       {{"watch", "true"}, {"resourceVersion", std::to_string(current + 100)}});
  EXPECT_EQ(r.code, 504);
  EXPECT_FALSE(r.stream);
  EXPECT_EQ(Body(r)["message"],
            fmt::format("Too large resource version: {}, current: {}", current + 100, current));
  EXPECT_EQ(Body(r)["details"]["causes"][0]["reason"], "ResourceVersionTooLarge");
  for (const char* bad : {"-5", "12abc", "1e3", " 1"}) {
    r = Call("GET", kJobs, "", "", {{"watch", "true"}, {"resourceVersion", bad}});
    EXPECT_EQ(r.code, 400) << bad;
  }
  r = Call("GET", kJobs, "", "", {{"watch", "true"}, {"resourceVersion", std::to_string(current)}});
  EXPECT_EQ(r.code, 200);
}

TEST(QueryTest, SplitsEachPairAtItsFirstEqualsSignAsGoDoes) {
  auto q =
      ParseQuery("labelSelector=app=x&watch=1&fieldSelector=a%3Db%2Cc!%3Dd&empty&x=1+2&bad=%zz");
  EXPECT_EQ(q.find("labelSelector")->second, "app=x");
  EXPECT_EQ(q.find("watch")->second, "1");
  EXPECT_EQ(q.find("fieldSelector")->second, "a=b,c!=d");
  EXPECT_EQ(q.find("empty")->second, "");
  EXPECT_EQ(q.find("x")->second, "1 2");
  EXPECT_EQ(q.count("bad"), 0u);
}

TEST(BearerTest, TheSchemeIsReadInAnyCase) {
  Authorizer auth = *Authorizer::Parse("ops-secret-123 ops *\n");
  for (const char* header :
       {"Bearer ops-secret-123", "bearer ops-secret-123", "BEARER ops-secret-123"}) {
    ApiRequest request{.method = "GET", .path = "/api/v1/namespaces", .authorization = header};
    EXPECT_FALSE(auth.Check(request).has_value()) << header;
  }
  ApiRequest basic{.method = "GET", .path = "/api/v1/namespaces", .authorization = "Basic x"};
  EXPECT_EQ(auth.Check(basic)->code, 401);
  ApiRequest empty{.method = "GET", .path = "/api/v1/namespaces", .authorization = "Bearer "};
  EXPECT_EQ(auth.Check(empty)->code, 401);
}

class PodSecurityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* ns : {"team-a", "shared"}) {
      ASSERT_EQ(Call("POST", "/api/v1/namespaces",
                     fmt::format(R"({{"metadata": {{"name": "{}"}}}})", ns), kAdmin)
                    .code,
                201);
    }
  }
  ApiResponse Call(std::string method, std::string path, std::string body, const char* token,
                   std::string content_type = "application/json") {
    return handler_.Handle({.method = std::move(method),
                            .path = std::move(path),
                            .content_type = std::move(content_type),
                            .authorization = fmt::format("Bearer {}", token),
                            .body = std::move(body)});
  }
  static api::Json Body(const ApiResponse& r) { return api::Json::parse(r.body); }
  static std::string WithHostPath(const std::string& name) {
    api::Json job = api::Json::parse(kTestJob);
    job["metadata"]["name"] = name;
    api::Json& spec = job["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"];
    spec["volumes"] = {{{"name", "etc"}, {"hostPath", {{"path", "/etc"}}}}};
    spec["containers"][0]["volumeMounts"] = {{{"name", "etc"}, {"mountPath", "/host-etc"}}};
    return job.dump();
  }

  static constexpr const char* kAdmin = "ops-secret-123";
  static constexpr const char* kAlice = "alice-secret-1";
  FakeClock clock_;
  FakeBackend backend_{clock_};
  Authorizer auth_ = *Authorizer::Parse("ops-secret-123 ops *\nalice-secret-1 alice team-a\n");
  ApiHandler handler_{backend_, clock_, &auth_};
};

TEST_F(PodSecurityTest, HostPathNeedsANamespaceAnAdministratorMadePrivileged) {
  const std::string jobs = "/apis/kubeflow.org/v1/namespaces/team-a/pytorchjobs";
  ApiResponse r = Call("POST", jobs, WithHostPath("reads-etc"), kAlice);
  EXPECT_EQ(r.code, 403) << r.body;
  EXPECT_THAT(
      Body(r)["message"].get<std::string>(),
      HasSubstr("violates PodSecurity \"baseline:latest\": hostPath volume (volume \"etc\")"));
  // Nor through a patch of a job that had none.
  ASSERT_EQ(Call("POST", jobs, kTestJob, kAlice).code, 201);
  r = Call("PATCH", jobs + "/mnist",
           R"([{"op": "add", "path": "/spec/pytorchReplicaSpecs/Master/template/spec/volumes",
                "value": [{"name": "etc", "hostPath": {"path": "/etc"}}]}])",
           kAlice, "application/json-patch+json");
  EXPECT_EQ(r.code, 403) << r.body;
  // Alice may not label her namespace; an administrator may.
  const std::string label =
      R"({"metadata": {"labels": {"pod-security.kubernetes.io/enforce": "privileged"}}})";
  EXPECT_EQ(
      Call("PATCH", "/api/v1/namespaces/team-a", label, kAlice, "application/merge-patch+json")
          .code,
      403);
  ASSERT_EQ(
      Call("PATCH", "/api/v1/namespaces/team-a", label, kAdmin, "application/merge-patch+json")
          .code,
      200);
  EXPECT_EQ(Call("POST", jobs, WithHostPath("reads-etc"), kAlice).code, 201);
}

TEST(PodSecurityWithoutTokensTest, TheOneUserOfAServerWithoutTokensMayUseHostPath) {
  FakeClock clock;
  FakeBackend backend(clock);
  ApiHandler handler(backend, clock);
  ASSERT_TRUE(handler.EnsureDefaultNamespace().ok());
  api::Json job = api::Json::parse(kTestJob);
  job["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["volumes"] = {
      {{"name", "data"}, {"hostPath", {{"path", "/tmp"}}}}};
  ApiRequest create{
      .method = "POST", .path = kJobs, .content_type = "application/json", .body = job.dump()};
  EXPECT_EQ(handler.Handle(create).code, 201);
}

}  // namespace
}  // namespace trainyard::server
