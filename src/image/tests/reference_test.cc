#include "image/reference.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace trainyard::image {
namespace {

using ::testing::HasSubstr;

std::string Normalized(std::string_view text) {
  Result<ImageReference> ref = ParseImageReference(text);
  return ref.ok() ? ref->String() : "error: " + ref.status().message();
}

TEST(ImageReferenceTest, DockerHubsDefaultsApply) {
  EXPECT_EQ(Normalized("busybox"), "docker.io/library/busybox:latest");
  EXPECT_EQ(Normalized("kubeflowkatib/pytorch-mnist:v1beta1-45c5727"),
            "docker.io/kubeflowkatib/pytorch-mnist:v1beta1-45c5727");
  EXPECT_EQ(Normalized("index.docker.io/library/python:3.11"), "docker.io/library/python:3.11");
}

TEST(ImageReferenceTest, ARegistryIsAFirstPartThatLooksLikeAHost) {
  EXPECT_EQ(Normalized("localhost:5000/team/train:v42"), "localhost:5000/team/train:v42");
  EXPECT_EQ(Normalized("127.0.0.1:5000/train"), "127.0.0.1:5000/train:latest");
  EXPECT_EQ(Normalized("ghcr.io/kubeflow/trainer/torch"), "ghcr.io/kubeflow/trainer/torch:latest");
  EXPECT_EQ(Normalized("localhost/train"), "localhost/train:latest");
  // Not a host: a Docker Hub user.
  EXPECT_EQ(Normalized("team/train"), "docker.io/team/train:latest");
}

TEST(ImageReferenceTest, ADigestPinsTheImageAndATagMayStayBesideIt) {
  std::string digest = "sha256:" + std::string(64, 'a');
  Result<ImageReference> pinned = ParseImageReference("busybox@" + digest);
  ASSERT_TRUE(pinned.ok());
  EXPECT_EQ(pinned->tag, "");
  EXPECT_EQ(pinned->digest, digest);
  EXPECT_EQ(pinned->String(), "docker.io/library/busybox@" + digest);
  EXPECT_EQ(Normalized("host:5000/a:v1@" + digest), "host:5000/a:v1@" + digest);
}

TEST(ImageReferenceTest, BadReferencesSayWhatIsWrong) {
  EXPECT_THAT(Normalized(""), HasSubstr("it is empty"));
  EXPECT_THAT(Normalized("Busybox"), HasSubstr("must be lowercase"));
  EXPECT_THAT(Normalized("busybox:"), HasSubstr("a tag is"));
  EXPECT_THAT(Normalized("busybox:-x"), HasSubstr("a tag is"));
  EXPECT_THAT(Normalized("busybox@sha256:abc"), HasSubstr("a digest is"));
  EXPECT_THAT(Normalized("host:5000/"), HasSubstr("names no repository"));
  EXPECT_THAT(Normalized("a//b"), HasSubstr("empty part"));
  EXPECT_THAT(Normalized(" busybox"), HasSubstr("white space"));
  EXPECT_THAT(Normalized("bad_host!:5000/x"), HasSubstr("not a host"));
}

TEST(ImageReferenceTest, ThePullPolicyDefaultIsKubernetes) {
  auto policy = [](std::string_view text) { return DefaultPullPolicy(*ParseImageReference(text)); };
  EXPECT_EQ(policy("busybox"), "Always");
  EXPECT_EQ(policy("busybox:latest"), "Always");
  EXPECT_EQ(policy("busybox:1.36"), "IfNotPresent");
  EXPECT_EQ(policy("busybox@sha256:" + std::string(64, 'b')), "IfNotPresent");
  EXPECT_EQ(policy("busybox:latest@sha256:" + std::string(64, 'b')), "Always");
}

}  // namespace
}  // namespace trainyard::image
