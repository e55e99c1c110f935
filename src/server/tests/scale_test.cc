// The scale subresource as kube-apiserver serves it: a Deployment's and a
// PyTorchJob's Workers' autoscaling/v1 Scale, read, patched (as `kubectl
// scale` does) and replaced, each write an update of the object, checked
// as one; listed in discovery with its group.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "server/handler.h"
#include "server/tests/fake_backend.h"

namespace trainyard::server {
namespace {

using ::testing::HasSubstr;

class ScaleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(handler_.EnsureDefaultNamespace().ok());
    api::Json deployment = {{"apiVersion", "apps/v1"},
                            {"kind", "Deployment"},
                            {"metadata", {{"name", "web"}}},
                            {"spec",
                             {{"replicas", 2},
                              {"selector", {{"matchLabels", {{"app", "web"}}}}},
                              {"template",
                               {{"metadata", {{"labels", {{"app", "web"}}}}},
                                {"spec", {{"containers", {{{"name", "c"}, {"image", "i"}}}}}}}}}}};
    ApiResponse created = Call("POST", kDeployments, deployment.dump());
    ASSERT_EQ(created.code, 201) << created.body;
  }
  ApiResponse Call(std::string method, std::string path, std::string body = "",
                   std::string type = "application/json") {
    return handler_.Handle({.method = std::move(method),
                            .path = std::move(path),
                            .content_type = std::move(type),
                            .body = std::move(body)});
  }
  static api::Json Body(const ApiResponse& r) { return api::Json::parse(r.body); }

  static constexpr const char* kDeployments = "/apis/apps/v1/namespaces/default/deployments";
  static constexpr const char* kScale = "/apis/apps/v1/namespaces/default/deployments/web/scale";
  FakeClock clock_;
  FakeBackend backend_{clock_};
  ApiHandler handler_{backend_, clock_};
};

TEST_F(ScaleTest, ADeploymentsScaleIsItsReplicasAndSelector) {
  ApiResponse read = Call("GET", kScale);
  ASSERT_EQ(read.code, 200) << read.body;
  api::Json scale = Body(read);
  EXPECT_EQ(scale["kind"], "Scale");
  EXPECT_EQ(scale["apiVersion"], "autoscaling/v1");
  EXPECT_EQ(scale["metadata"]["name"], "web");
  EXPECT_EQ(scale["spec"]["replicas"], 2);
  EXPECT_EQ(scale["status"]["selector"], "app=web");
}

TEST_F(ScaleTest, APatchOfTheScaleChangesTheObjectsReplicas) {
  ApiResponse patched =
      Call("PATCH", kScale, R"({"spec":{"replicas":5}})", "application/merge-patch+json");
  ASSERT_EQ(patched.code, 200) << patched.body;
  EXPECT_EQ(Body(patched)["spec"]["replicas"], 5);
  api::Json deployment = Body(Call("GET", std::string(kDeployments) + "/web"));
  EXPECT_EQ(deployment["spec"]["replicas"], 5);
  EXPECT_EQ(deployment["metadata"]["generation"], 2);
}

TEST_F(ScaleTest, ANegativeCountOrAStaleVersionChangesNothing) {
  ApiResponse negative =
      Call("PATCH", kScale, R"({"spec":{"replicas":-1}})", "application/merge-patch+json");
  EXPECT_EQ(negative.code, 422);
  EXPECT_THAT(negative.body, HasSubstr("spec.replicas: Invalid value: -1: must be greater than "
                                       "or equal to 0"));
  api::Json stale = Body(Call("GET", kScale));
  stale["metadata"]["resourceVersion"] = "1";
  stale["spec"]["replicas"] = 3;
  EXPECT_EQ(Call("PUT", kScale, stale.dump()).code, 409);
  EXPECT_EQ(Body(Call("GET", kScale))["spec"]["replicas"], 2);
}

TEST_F(ScaleTest, APyTorchJobScalesByItsWorkers) {
  api::Json job = {
      {"apiVersion", "kubeflow.org/v1"},
      {"kind", "PyTorchJob"},
      {"metadata", {{"name", "pj"}}},
      {"spec",
       {{"pytorchReplicaSpecs",
         {{"Worker",
           {{"replicas", 1},
            {"template",
             {{"spec", {{"containers", {{{"name", "pytorch"}, {"image", "i"}}}}}}}}}}}}}}};
  std::string jobs = "/apis/kubeflow.org/v1/namespaces/default/pytorchjobs";
  ASSERT_EQ(Call("POST", jobs, job.dump()).code, 201);
  ApiResponse put = Call("PATCH", jobs + "/pj/scale", R"({"spec":{"replicas":3}})",
                         "application/merge-patch+json");
  ASSERT_EQ(put.code, 200) << put.body;
  EXPECT_EQ(Body(Call("GET", jobs + "/pj"))["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"],
            3);
  // A TFJob's CRD declares no scale subresource.
  EXPECT_EQ(Call("GET", "/apis/kubeflow.org/v1/namespaces/default/tfjobs/pj/scale").code, 404);
}

TEST_F(ScaleTest, DiscoveryListsTheScaleWithItsGroup) {
  api::Json apps = Body(Call("GET", "/apis/apps/v1"));
  bool found = false;
  for (const api::Json& r : apps["resources"]) {
    if (r["name"] != "deployments/scale") continue;
    found = true;
    EXPECT_EQ(r["group"], "autoscaling");
    EXPECT_EQ(r["kind"], "Scale");
  }
  EXPECT_TRUE(found) << apps.dump();
}

}  // namespace
}  // namespace trainyard::server
