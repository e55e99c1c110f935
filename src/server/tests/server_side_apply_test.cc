// Server-side apply through the handler: created by an apply, fields owned
// per manager, conflicts refused unless forced, a field an applier drops
// removed, and ordinary writes recorded as Update managers.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/clock.h"
#include "server/handler.h"
#include "server/tests/fake_backend.h"

namespace trainyard::server {
namespace {

using ::testing::HasSubstr;

class ServerSideApplyTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(handler_.EnsureDefaultNamespace().ok()); }

  ApiResponse Apply(const std::string& yaml, const std::string& manager, bool force = false) {
    std::multimap<std::string, std::string> query = {{"fieldManager", manager}};
    if (force) query.emplace("force", "true");
    return handler_.Handle({.method = "PATCH",
                            .path = std::string(kMaps) + "/settings",
                            .query = std::move(query),
                            .content_type = "application/apply-patch+yaml",
                            .body = yaml});
  }
  api::Json Get() {
    return api::Json::parse(
        handler_.Handle({.method = "GET", .path = std::string(kMaps) + "/settings"}).body);
  }
  std::vector<std::string> Managers() {
    std::vector<std::string> out;
    api::Json stored = Get();
    for (const api::Json& e : stored["metadata"]["managedFields"]) {
      out.push_back(e["manager"].get<std::string>() + "/" + e["operation"].get<std::string>());
    }
    return out;
  }

  static constexpr const char* kMaps = "/api/v1/namespaces/default/configmaps";
  FakeClock clock_;
  FakeBackend backend_{clock_};
  ApiHandler handler_{backend_, clock_};
};

constexpr const char* kSettings = R"(
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {rate: "0.1", batch: "32"}
)";

TEST_F(ServerSideApplyTest, AnApplyCreatesAndOwnsWhatItSets) {
  ApiResponse created = Apply(kSettings, "alice");
  ASSERT_EQ(created.code, 201) << created.body;
  api::Json stored = Get();
  EXPECT_EQ(stored["data"]["rate"], "0.1");
  ASSERT_EQ(stored["metadata"]["managedFields"].size(), 1u);
  const api::Json& entry = stored["metadata"]["managedFields"][0];
  EXPECT_EQ(entry["manager"], "alice");
  EXPECT_EQ(entry["operation"], "Apply");
  EXPECT_EQ(entry["fieldsV1"], api::Json::parse(R"({"f:data":{"f:batch":{},"f:rate":{}}})"));
  // The same configuration again changes nothing.
  ASSERT_EQ(Apply(kSettings, "alice").code, 200);
  EXPECT_EQ(Get()["data"], stored["data"]);
}

TEST_F(ServerSideApplyTest, AnotherManagersFieldConflictsUnlessForcedAndEqualValuesAreShared) {
  ASSERT_EQ(Apply(kSettings, "alice").code, 201);
  ApiResponse conflict = Apply(
      "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\n"
      "data: {rate: \"0.2\", batch: \"32\"}\n",
      "bob");
  EXPECT_EQ(conflict.code, 409);
  EXPECT_THAT(conflict.body, HasSubstr("Apply failed with 1 conflict: conflict with \\\"alice\\\" "
                                       "using v1: .data.rate"));
  EXPECT_EQ(Get()["data"]["rate"], "0.1") << "a refused apply changes nothing";
  ASSERT_EQ(Apply("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\n"
                  "data: {rate: \"0.2\", batch: \"32\"}\n",
                  "bob", /*force=*/true)
                .code,
            200);
  api::Json stored = Get();
  EXPECT_EQ(stored["data"]["rate"], "0.2");
  for (const api::Json& e : stored["metadata"]["managedFields"]) {
    if (e["manager"] == "alice") {  // rate changed hands; batch, equal, is both's
      EXPECT_EQ(e["fieldsV1"], api::Json::parse(R"({"f:data":{"f:batch":{}}})"));
    }
  }
}

TEST_F(ServerSideApplyTest, AFieldItsApplierDropsIsRemovedUnlessAnotherOwnsIt) {
  ASSERT_EQ(Apply(kSettings, "alice").code, 201);
  ASSERT_EQ(Apply("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\n"
                  "data: {batch: \"32\"}\n",
                  "bob")
                .code,
            200);
  ASSERT_EQ(
      Apply("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {}\n", "alice")
          .code,
      200);
  // rate was alice's alone: gone; batch is bob's too: kept.
  EXPECT_EQ(Get()["data"], api::Json::parse(R"({"batch":"32"})"));
}

TEST_F(ServerSideApplyTest, OrdinaryWritesAreUpdateManagersThatApplyConflictsWith) {
  ApiResponse created = handler_.Handle(
      {.method = "POST",
       .path = kMaps,
       .query = {{"fieldManager", "kubectl-client-side-apply"}},
       .content_type = "application/json",
       .body = R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"settings"},
                   "data":{"rate":"0.1"}})"});
  ASSERT_EQ(created.code, 201) << created.body;
  EXPECT_THAT(Managers(), ::testing::ElementsAre("kubectl-client-side-apply/Update"));
  ApiResponse patched = handler_.Handle({.method = "PATCH",
                                         .path = std::string(kMaps) + "/settings",
                                         .content_type = "application/merge-patch+json",
                                         .user_agent = "kubectl-edit/v1.32.3 (linux/amd64)",
                                         .body = R"({"data":{"batch":"64"}})"});
  ASSERT_EQ(patched.code, 200) << patched.body;
  EXPECT_THAT(Managers(),
              ::testing::ElementsAre("kubectl-client-side-apply/Update", "kubectl-edit/Update"));
  // batch differs, and is kubectl-edit's; rate is the same value: shared.
  ApiResponse conflict = Apply(kSettings, "kubectl");
  EXPECT_EQ(conflict.code, 409);
  EXPECT_THAT(conflict.body, HasSubstr("Apply failed with 1 conflict: conflict with "
                                       "\\\"kubectl-edit\\\" using v1: .data.batch"));
}

// managedFields are the client's to send: a key nested past any bound is
// read within the codec's depth bound, never crashing the server.
TEST_F(ServerSideApplyTest, ForgedManagedFieldsAreReadWithinBounds) {
  ASSERT_EQ(Apply(kSettings, "alice").code, 201);
  api::Json stored = Get();
  // Under a list (finalizers), where a value's key is parsed to find it.
  std::string deep = "v:" + std::string(200'000, '[') + std::string(200'000, ']');
  stored["metadata"]["finalizers"] = {"example.com/keep"};
  stored["metadata"]["managedFields"][0]["fieldsV1"]["f:metadata"]["f:finalizers"][deep] =
      api::Json::object();
  ApiResponse put = handler_.Handle({.method = "PUT",
                                     .path = std::string(kMaps) + "/settings",
                                     .content_type = "application/json",
                                     .body = stored.dump()});
  ASSERT_EQ(put.code, 200) << put.body;
  ApiResponse applied =
      Apply("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {}\n", "alice");
  EXPECT_EQ(applied.code, 200) << applied.body;
  EXPECT_EQ(Get()["data"], nullptr) << "alice's fields, no one else's, are gone";
  EXPECT_EQ(Get()["metadata"]["finalizers"], api::Json({"example.com/keep"}));
}

}  // namespace
}  // namespace trainyard::server
