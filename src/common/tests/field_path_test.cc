#include "common/field_path.h"

#include <gtest/gtest.h>

namespace trainyard {
namespace {

TEST(FieldPathTest, RendersLikeKubernetes) {
  FieldPath p = FieldPath("spec").Child("pytorchReplicaSpecs").Key("Master").Child("template");
  EXPECT_EQ(p.ToString(), "spec.pytorchReplicaSpecs[Master].template");
  EXPECT_EQ(p.Child("spec").Child("containers").Index(0).Child("image").ToString(),
            "spec.pytorchReplicaSpecs[Master].template.spec.containers[0].image");
  EXPECT_EQ(FieldPath().ToString(), "");
  EXPECT_EQ(FieldPath().Child("metadata").ToString(), "metadata");
}

TEST(FieldPathTest, IsWithin) {
  FieldPath spec("spec");
  FieldPath deep = spec.Child("runPolicy").Child("backoffLimit");
  EXPECT_TRUE(deep.IsWithin(spec));
  EXPECT_TRUE(spec.IsWithin(spec));
  EXPECT_FALSE(spec.IsWithin(deep));
  EXPECT_FALSE(FieldPath("status").IsWithin(spec));
  EXPECT_FALSE(spec.Key("a").IsWithin(spec.Child("a")));
}

TEST(FieldErrorTest, EachTypeRendersItsBody) {
  FieldPath master = FieldPath("spec").Child("pytorchReplicaSpecs").Key("Master");
  EXPECT_EQ(FieldError::Forbidden(master.Child("replicas"), "must be 1").ToString(),
            "spec.pytorchReplicaSpecs[Master].replicas: Forbidden: must be 1");
  EXPECT_EQ(FieldError::Required(FieldPath("spec").Child("x"), "must be required").ToString(),
            "spec.x: Required value: must be required");
  EXPECT_EQ(FieldError::Required(FieldPath("a")).ToString(), "a: Required value");
  EXPECT_EQ(FieldError::Invalid(FieldPath("metadata").Child("name"), "Foo", "bad").ToString(),
            "metadata.name: Invalid value: \"Foo\": bad");
  EXPECT_EQ(FieldError::Invalid(FieldPath("n"), -2, "must be positive").ToString(),
            "n: Invalid value: -2: must be positive");
  EXPECT_EQ(FieldError::NotSupported(FieldPath("t"), "Boss", {"Master", "Worker"}).ToString(),
            "t: Unsupported value: \"Boss\": supported values: \"Master\", \"Worker\"");
  EXPECT_EQ(FieldError::Duplicate(FieldPath("env").Index(2).Child("name"), "A").ToString(),
            "env[2].name: Duplicate value: \"A\"");
  EXPECT_EQ(FieldError::NotFound(FieldPath("m"), "data").ToString(), "m: Not found: \"data\"");
  EXPECT_EQ(FieldError::TooLong(FieldPath("n"), 63).ToString(),
            "n: Too long: must have at most 63 characters");
  EXPECT_EQ(FieldError::UnknownField(FieldPath("spec").Child("foo"), "x").ToString(),
            "spec.foo: Unknown field: x");
}

TEST(QuoteTest, EscapesLikeGo) { EXPECT_EQ(Quote("a\"b\\c\n\x01"), "\"a\\\"b\\\\c\\n\\x01\""); }

}  // namespace
}  // namespace trainyard
