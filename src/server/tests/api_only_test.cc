// An API-only server answers as kube-apiserver does where its controllers
// and a real cluster told them apart (each seen against a real
// kube-apiserver v1.25): a status sent with a create is not kept, a
// pod's delete is answered as the real one answers it, a pod on no node
// has an empty log, a new Node is tainted not ready.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "server/handler.h"
#include "server/tests/fake_backend.h"

namespace trainyard::server {
namespace {

class ApiOnlyTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(handler_.EnsureDefaultNamespace().ok()); }
  ApiResponse Call(std::string method, std::string path, std::string body = "") {
    std::string type = method == "PATCH" ? "application/merge-patch+json" : "application/json";
    return handler_.Handle({.method = std::move(method),
                            .path = std::move(path),
                            .content_type = type,
                            .body = std::move(body)});
  }
  static api::Json Body(const ApiResponse& r) { return api::Json::parse(r.body); }
  ApiResponse CreatePod(const std::string& name, const std::string& node,
                        const std::string& phase) {
    api::Json pod = {{"apiVersion", "v1"},
                     {"kind", "Pod"},
                     {"metadata", {{"name", name}}},
                     {"spec", {{"containers", {{{"name", "c"}, {"image", "i"}}}}}}};
    if (!node.empty()) pod["spec"]["nodeName"] = node;
    EXPECT_EQ(Call("POST", kPods, pod.dump()).code, 201);
    if (phase.empty()) return {};
    ApiResponse patched = Call("PATCH", std::string(kPods) + "/" + name + "/status",
                               api::Json{{"status", {{"phase", phase}}}}.dump());
    EXPECT_EQ(patched.code, 200) << patched.body;
    return patched;
  }

  static constexpr const char* kPods = "/api/v1/namespaces/default/pods";
  FakeClock clock_;
  FakeBackend backend_{clock_};
  ApiHandler handler_{backend_, clock_, nullptr, nullptr, /*api_only=*/true};
};

TEST_F(ApiOnlyTest, AStatusSentWithACreateIsNotKept) {
  api::Json suggestion = {{"apiVersion", "kubeflow.org/v1beta1"},
                          {"kind", "Suggestion"},
                          {"metadata", {{"name", "s"}}},
                          {"spec", {{"algorithm", {{"algorithmName", "random"}}}, {"requests", 2}}},
                          {"status", {{"suggestionCount", 2}}}};
  ApiResponse created =
      Call("POST", "/apis/kubeflow.org/v1beta1/namespaces/default/suggestions", suggestion.dump());
  ASSERT_EQ(created.code, 201) << created.body;
  EXPECT_FALSE(Body(created).contains("status")) << created.body;
  // A pod starts Pending, whatever it was sent with.
  api::Json pod = {{"apiVersion", "v1"},
                   {"kind", "Pod"},
                   {"metadata", {{"name", "p"}}},
                   {"spec", {{"containers", {{{"name", "c"}, {"image", "i"}}}}}},
                   {"status", {{"phase", "Running"}}}};
  EXPECT_EQ(Body(Call("POST", kPods, pod.dump()))["status"], (api::Json{{"phase", "Pending"}}));
}

TEST_F(ApiOnlyTest, APodOnNoNodeOrFinishedGoesAtOnceOneRunningWaitsForItsKubelet) {
  CreatePod("unbound", "", "");
  CreatePod("done", "node-a", "Succeeded");
  for (const char* name : {"unbound", "done"}) {
    ApiResponse deleted = Call("DELETE", std::string(kPods) + "/" + name);
    ASSERT_EQ(deleted.code, 200) << deleted.body;
    // Answered as it was, marked: gone, with a grace period of 0.
    EXPECT_FALSE(Body(deleted)["metadata"].value("deletionTimestamp", "").empty()) << name;
    EXPECT_EQ(Body(deleted)["metadata"]["deletionGracePeriodSeconds"], 0) << name;
    EXPECT_EQ(Call("GET", std::string(kPods) + "/" + name).code, 404) << name;
  }
  CreatePod("running", "node-a", "Running");
  ApiResponse marked = Call("DELETE", std::string(kPods) + "/running");
  ASSERT_EQ(marked.code, 200);
  EXPECT_EQ(Body(marked)["metadata"]["deletionGracePeriodSeconds"], 30);
  EXPECT_EQ(Call("GET", std::string(kPods) + "/running").code, 200) << "its kubelet ends it";
  // The kubelet, once its containers have stopped: grace 0.
  ApiResponse gone = Call("DELETE", std::string(kPods) + "/running",
                          R"({"kind":"DeleteOptions","apiVersion":"v1","gracePeriodSeconds":0})");
  ASSERT_EQ(gone.code, 200) << gone.body;
  EXPECT_EQ(Call("GET", std::string(kPods) + "/running").code, 404);
}

TEST_F(ApiOnlyTest, APodOnNoNodeHasAnEmptyLog) {
  CreatePod("unbound", "", "");
  ApiResponse log = Call("GET", std::string(kPods) + "/unbound/log");
  EXPECT_EQ(log.code, 204);
  EXPECT_EQ(log.body, "");
  EXPECT_EQ(log.stream, nullptr);
}

TEST_F(ApiOnlyTest, ANewNodeIsTaintedNotReady) {
  ApiResponse node = Call("POST", "/api/v1/nodes",
                          R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n"},)"
                          R"("status":{"allocatable":{"cpu":"8"}}})");
  ASSERT_EQ(node.code, 201) << node.body;
  EXPECT_EQ(Body(node)["spec"]["taints"],
            (api::Json{{{"key", "node.kubernetes.io/not-ready"}, {"effect", "NoSchedule"}}}));
  EXPECT_EQ(Body(node)["status"]["allocatable"]["cpu"], "8") << "a Node's status is its kubelet's";
}

}  // namespace
}  // namespace trainyard::server
