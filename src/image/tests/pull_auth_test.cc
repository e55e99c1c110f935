#include "image/pull_auth.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "common/strings.h"
#include "common/tests/test_dir.h"

namespace trainyard::image {
namespace {

using ::testing::HasSubstr;

api::Json PullSecret(const std::string& name, const std::string& config) {
  return {{"kind", "Secret"},
          {"metadata", {{"name", name}}},
          {"type", "kubernetes.io/dockerconfigjson"},
          {"data", {{".dockerconfigjson", Base64Encode(config)}}}};
}

TEST(PullAuthTest, APullSecretGivesItsAuths) {
  Result<api::Json> auths =
      AuthsOfSecret(PullSecret("regcred", R"({"auths": {"r.example:5000": {"auth": "YTpi"}}})"));
  ASSERT_TRUE(auths.ok()) << auths.status().ToString();
  EXPECT_EQ(api::StringAt(*auths, {"r.example:5000", "auth"}), "YTpi");
  // The older type is the auths object alone, and stringData counts too.
  Result<api::Json> legacy = AuthsOfSecret({{"metadata", {{"name", "old"}}},
                                            {"type", "kubernetes.io/dockercfg"},
                                            {"stringData", {{".dockercfg", R"({"r": {}})"}}}});
  ASSERT_TRUE(legacy.ok()) << legacy.status().ToString();
  EXPECT_TRUE(legacy->contains("r"));
}

TEST(PullAuthTest, ASecretOfAnotherTypeOrBadDataIsRefusedByName) {
  Result<api::Json> opaque =
      AuthsOfSecret({{"metadata", {{"name", "tokens"}}}, {"type", "Opaque"}});
  ASSERT_FALSE(opaque.ok());
  EXPECT_THAT(opaque.status().message(), HasSubstr("Secret tokens is of type \"Opaque\""));
  Result<api::Json> bad = AuthsOfSecret(PullSecret("broken", "not json"));
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("Secret broken: .dockerconfigjson is not"));
}

TEST(PullAuthTest, ASecretsRegistryIsItsAndTheRestTheHosts) {
  std::filesystem::path dir = FreshTestDir("trainyard-pull-auth");
  std::string host = (dir / "config.json").string();
  std::ofstream(host)
      << R"({"auths": {"a.example": {"auth": "host-a"}, "b.example": {"auth": "host-b"}}})";
  Result<api::Json> merged = MergedAuths({api::Json{{"b.example", {{"auth", "secret-b"}}}}}, host);
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  EXPECT_EQ(api::StringAt(*merged, {"auths", "a.example", "auth"}), "host-a");
  EXPECT_EQ(api::StringAt(*merged, {"auths", "b.example", "auth"}), "secret-b");
  std::ofstream(host) << "[]";
  EXPECT_FALSE(MergedAuths({}, host).ok());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace trainyard::image
