#include "server/api_path.h"

#include <gtest/gtest.h>

namespace trainyard::server {
namespace {

TEST(ApiPathTest, NamesResourcesAsKubernetesLaysThemOut) {
  ApiTarget t = *ParseApiPath("/apis/kubeflow.org/v1/namespaces/team/pytorchjobs/mnist/status");
  EXPECT_EQ(t.resource->kind, "PyTorchJob");
  EXPECT_EQ(t.namespace_, "team");
  EXPECT_EQ(t.name, "mnist");
  EXPECT_EQ(t.subresource, "status");

  t = *ParseApiPath("/apis/kubeflow.org/v1/tfjobs");  // every namespace
  EXPECT_EQ(t.resource->kind, "TFJob");
  EXPECT_EQ(t.namespace_, "");
  EXPECT_EQ(t.name, "");

  t = *ParseApiPath("/api/v1/namespaces/default/pods/a-worker-0/log");
  EXPECT_EQ(t.resource->kind, "Pod");
  EXPECT_EQ(t.subresource, "log");

  t = *ParseApiPath("/api/v1/namespaces/team");  // a Namespace, not a namespace's resource
  EXPECT_EQ(t.resource->kind, "Namespace");
  EXPECT_EQ(t.name, "team");
  EXPECT_EQ(ParseApiPath("/api/v1/nodes")->resource->kind, "Node");
  EXPECT_EQ(ParseApiPath("/apis/batch/v1/namespaces/x/jobs/j")->resource->kind, "Job");
}

TEST(ApiPathTest, RefusesWhatIsNoResourceAndNamesThatCouldEscape) {
  for (const char* path :
       {"/", "/apis", "/apis/kubeflow.org/v2/pytorchjobs", "/api/v1/namespaces/a/widgets",
        "/api/v1/namespaces/a/pods/p/attach", "/apis/kubeflow.org/v1/namespaces/a/tfjobs/t/log",
        "/api/v1/namespaces/a/nodes/n", "/api/v1/namespaces/a/pods/p/log/more"}) {
    EXPECT_EQ(ParseApiPath(path).status().code(), StatusCode::kNotFound) << path;
  }
  for (const char* path : {"/api/v1/namespaces/../pods", "/api/v1/namespaces/a/pods/..",
                           "/api/v1/namespaces/A/pods", "/api/v1/namespaces/a/pods/x%2Fy"}) {
    EXPECT_EQ(ParseApiPath(path).status().code(), StatusCode::kInvalidArgument) << path;
  }
}

}  // namespace
}  // namespace trainyard::server
