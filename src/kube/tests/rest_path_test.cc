#include "kube/rest_path.h"

#include <gtest/gtest.h>

namespace trainyard::kube {
namespace {

std::string Or(const Result<std::string>& r) {
  return r.ok() ? *r : "error: " + r.status().message();
}

TEST(RestPathTest, CoreAndGroupKindsAsTheApiServerServesThem) {
  EXPECT_EQ(Or(ObjectPath("Pod", "ns", "p")), "/api/v1/namespaces/ns/pods/p");
  EXPECT_EQ(Or(ObjectPath("PyTorchJob", "ns", "j", "status")),
            "/apis/kubeflow.org/v1/namespaces/ns/pytorchjobs/j/status");
  EXPECT_EQ(Or(CollectionPath("Job", "ns")), "/apis/batch/v1/namespaces/ns/jobs");
  EXPECT_EQ(Or(CollectionPath("Pod", "")), "/api/v1/pods");
  EXPECT_EQ(Or(ObjectPath("Namespace", "", "ns")), "/api/v1/namespaces/ns");
  EXPECT_EQ(Or(CollectionPath("Experiment", "a")),
            "/apis/kubeflow.org/v1beta1/namespaces/a/experiments");
}

TEST(RestPathTest, RefusesWhatHasNoPath) {
  EXPECT_EQ(ObjectPath("Gadget", "ns", "x").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(ObjectPath("Pod", "", "x").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ObjectPath("Pod", "ns", "").status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace trainyard::kube
