#include "node/container_env.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "store/sqlite_store.h"

namespace trainyard::node {
namespace {

class ContainerEnvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = std::move(*store::SqliteStore::Open({}));
    pod_.metadata.name = "mnist-worker-0";
    pod_.metadata.namespace_ = "ml";
    pod_.metadata.labels = {{"app", "mnist"}};
    container_.name = "pytorch";
  }
  api::EnvVar Literal(const std::string& name, const std::string& value) {
    api::EnvVar v;
    v.name = name;
    v.value = value;
    return v;
  }
  api::EnvVar From(const std::string& name, api::EnvVarSource source) {
    api::EnvVar v;
    v.name = name;
    v.value_from = std::move(source);
    return v;
  }
  Result<EnvList> Build() {
    return ContainerEnv(pod_, container_, {{"PATH", "/usr/bin"}}, {4, 8LL << 30}, *store_);
  }

  std::unique_ptr<store::SqliteStore> store_;
  api::Pod pod_;
  api::Container container_;
};

TEST_F(ContainerEnvTest, LiteralsExpandAgainstEarlierVariablesLaterNamesReplace) {
  container_.env = {Literal("A", "1"), Literal("B", "$(A)-$(C)"), Literal("C", "3"),
                    Literal("A", "x$(A)"), Literal("HOST", "$(HOSTNAME)")};
  EnvList expected = {{"PATH", "/usr/bin"}, {"HOSTNAME", "mnist-worker-0"},
                      {"A", "x1"},          {"B", "1-$(C)"},
                      {"C", "3"},           {"HOST", "mnist-worker-0"}};
  EXPECT_EQ(*Build(), expected);
}

TEST_F(ContainerEnvTest, FieldAndResourceRefs) {
  api::EnvVarSource name, ns, label, ip, cpu, mem_mi;
  name.field_ref = api::ObjectFieldSelector{.field_path = "metadata.name"};
  ns.field_ref = api::ObjectFieldSelector{.field_path = "metadata.namespace"};
  label.field_ref = api::ObjectFieldSelector{.field_path = "metadata.labels['app']"};
  ip.field_ref = api::ObjectFieldSelector{.field_path = "status.podIP"};
  cpu.resource_field_ref = api::ResourceFieldSelector{.resource = "limits.cpu"};
  mem_mi.resource_field_ref =
      api::ResourceFieldSelector{.resource = "requests.memory", .divisor = *Quantity::Parse("1Mi")};
  container_.resources.requests["memory"] = *Quantity::Parse("1500Ki");
  container_.env = {From("POD", name), From("NS", ns),    From("APP", label),
                    From("IP", ip),    From("CPUS", cpu), From("MEM_MI", mem_mi)};
  EnvList env = *Build();
  EXPECT_THAT(env, ::testing::IsSupersetOf(EnvList{{"POD", "mnist-worker-0"},
                                                   {"NS", "ml"},
                                                   {"APP", "mnist"},
                                                   {"IP", "127.0.0.1"},
                                                   {"CPUS", "4"},       // no limit: the node's CPUs
                                                   {"MEM_MI", "2"}}));  // 1500Ki rounded up
}

// A pod with no field trainyard does not model (its spec's `extra` is
// null) is given Kubernetes' default service account, as the kubelet
// gives it, rather than failing its start.
TEST_F(ContainerEnvTest, TheServiceAccountIsDefaultWhenThePodNamesNone) {
  api::EnvVarSource account;
  account.field_ref = api::ObjectFieldSelector{.field_path = "spec.serviceAccountName"};
  container_.env = {From("SA", account)};
  pod_.spec.extra = nullptr;
  Result<EnvList> env = Build();
  ASSERT_TRUE(env.ok()) << env.status().ToString();
  EXPECT_THAT(*env, ::testing::Contains(std::pair<std::string, std::string>{"SA", "default"}));
  pod_.spec.extra = {{"serviceAccountName", "trainer"}};
  EXPECT_THAT(*Build(), ::testing::Contains(std::pair<std::string, std::string>{"SA", "trainer"}));
}

TEST_F(ContainerEnvTest, ConfigMapKeysAndOptionalOnes) {
  api::Json cm = {{"apiVersion", "v1"},
                  {"kind", "ConfigMap"},
                  {"metadata", {{"name", "settings"}, {"namespace", "ml"}}},
                  {"data", {{"lr", "0.1"}, {"raw", "$(A)"}}}};
  ASSERT_TRUE(store_->Create(cm).ok());
  api::EnvVarSource lr, raw, missing;
  lr.config_map_key_ref = api::KeySelector{.name = "settings", .key = "lr"};
  raw.config_map_key_ref = api::KeySelector{.name = "settings", .key = "raw"};
  missing.config_map_key_ref = api::KeySelector{.name = "other", .key = "x", .optional = true};
  container_.env = {Literal("A", "1"), From("LR", lr), From("RAW", raw), From("OPT", missing)};
  EnvList env = *Build();
  EXPECT_THAT(env, ::testing::Contains(std::pair<std::string, std::string>("LR", "0.1")));
  EXPECT_THAT(env, ::testing::Contains(
                       std::pair<std::string, std::string>("RAW", "$(A)")));  // not expanded
  for (const auto& [k, v] : env) EXPECT_NE(k, "OPT");
  missing.config_map_key_ref->optional = false;
  container_.env = {From("OPT", missing)};
  EXPECT_EQ(Build().status().message(), "ConfigMap other not found");
}

// A Secret keeps base64 as Kubernetes does: the container gets the bytes.
TEST_F(ContainerEnvTest, SecretKeysAreDecoded) {
  api::Json secret = {{"apiVersion", "v1"},
                      {"kind", "Secret"},
                      {"metadata", {{"name", "creds"}, {"namespace", "ml"}}},
                      {"data", {{"token", "aHVudGVyMg=="}}}};
  ASSERT_TRUE(store_->Create(secret).ok());
  api::EnvVarSource token;
  token.secret_key_ref = api::KeySelector{.name = "creds", .key = "token"};
  container_.env = {From("TOKEN", token)};
  EXPECT_THAT(*Build(),
              ::testing::Contains(std::pair<std::string, std::string>("TOKEN", "hunter2")));
}

// envFrom: every key, prefixed, before env (which wins); a Secret's
// decoded; a key that is no variable name skipped and said; a missing
// object an error unless optional.
TEST_F(ContainerEnvTest, EnvFromTakesEveryKeyBeforeEnvWhichWins) {
  ASSERT_TRUE(store_
                  ->Create({{"apiVersion", "v1"},
                            {"kind", "ConfigMap"},
                            {"metadata", {{"name", "settings"}, {"namespace", "ml"}}},
                            {"data", {{"LR", "0.1"}, {"EPOCHS", "$(A)"}, {"bad=key", "x"}}}})
                  .ok());
  ASSERT_TRUE(store_
                  ->Create({{"apiVersion", "v1"},
                            {"kind", "Secret"},
                            {"metadata", {{"name", "creds"}, {"namespace", "ml"}}},
                            {"data", {{"TOKEN", "aHVudGVyMg=="}}}})
                  .ok());
  api::EnvFromSource settings, creds, absent;
  settings.config_map_ref = api::EnvFromReference{.name = "settings"};
  creds.prefix = "S3_";
  creds.secret_ref = api::EnvFromReference{.name = "creds"};
  absent.secret_ref = api::EnvFromReference{.name = "absent", .optional = true};
  container_.env_from = {settings, creds, absent};
  container_.env = {Literal("LR", "0.5")};
  std::vector<std::string> skipped;
  Result<EnvList> env =
      ContainerEnv(pod_, container_, {{"PATH", "/usr/bin"}}, {4, 8LL << 30}, *store_, &skipped);
  ASSERT_TRUE(env.ok()) << env.status().ToString();
  EXPECT_THAT(*env, ::testing::IsSupersetOf(EnvList{{"LR", "0.5"},       // env wins
                                                    {"EPOCHS", "$(A)"},  // never expanded
                                                    {"S3_TOKEN", "hunter2"}}));
  for (const auto& [k, v] : *env) EXPECT_NE(k, "bad=key");
  EXPECT_THAT(skipped, ::testing::ElementsAre("keys [bad=key] of ConfigMap settings"));

  absent.secret_ref->optional = false;
  container_.env_from = {absent};
  EXPECT_EQ(Build().status().message(),
            "envFrom: Secret absent not found; create it or set optional: true");
}

TEST_F(ContainerEnvTest, ArgvExpandsAndNeedsACommand) {
  container_.command = {"python3", "train.py"};
  container_.args = {"--rank=$(RANK)", "$$(KEEP)"};
  EXPECT_THAT(*ContainerArgv(container_, {{"RANK", "2"}}),
              ::testing::ElementsAre("python3", "train.py", "--rank=2", "$(KEEP)"));
  container_.command.clear();
  Result<std::vector<std::string>> none = ContainerArgv(container_, {});
  EXPECT_EQ(none.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(none.status().message(), ::testing::HasSubstr("has no command"));
}

TEST_F(ContainerEnvTest, HostnameIsCutTo63AsTheKubeletCutsIt) {
  auto hostname = [&]() {
    Result<EnvList> env = Build();
    for (const auto& [k, v] : *env) {
      if (k == "HOSTNAME") return v;
    }
    return std::string("(none)");
  };
  EXPECT_EQ(hostname(), "mnist-worker-0");
  pod_.metadata.name = std::string(63, 'a');
  EXPECT_EQ(hostname(), std::string(63, 'a'));
  pod_.metadata.name = std::string(70, 'b');
  EXPECT_EQ(hostname(), std::string(63, 'b'));
  // Cut at a '-' or '.': those are trimmed too, as no label ends in them.
  pod_.metadata.name = std::string(61, 'c') + "-.-worker-0";
  EXPECT_EQ(hostname(), std::string(61, 'c'));
  pod_.spec.extra = {{"hostname", "chosen"}};
  EXPECT_EQ(hostname(), "chosen");
}

TEST_F(ContainerEnvTest, ExponentialExpansionFailsNamingTheVariable) {
  // The 40-line manifest: A=xx, B=$(A)$(A), ... would be 2^40 bytes.
  container_.env = {Literal("V0", "xx")};
  for (int i = 1; i < 40; ++i) {
    container_.env.push_back(Literal(fmt::format("V{}", i), fmt::format("$(V{0})$(V{0})", i - 1)));
  }
  Result<EnvList> env = Build();
  ASSERT_FALSE(env.ok());
  EXPECT_EQ(env.status().code(), StatusCode::kInvalidArgument);
  // Vn holds 2^(n+1) bytes: V16 is just the bound, V17 over it.
  EXPECT_THAT(env.status().message(), ::testing::StartsWith("env V17: the expanded value is longer "
                                                            "than 128 KiB"));
}

TEST_F(ContainerEnvTest, ManyLargeValuesFailAtTheWholeBound) {
  std::string big(100 * 1024, 'x');
  container_.env = {Literal("BIG", big)};
  for (int i = 0; i < 40; ++i) container_.env.push_back(Literal(fmt::format("C{}", i), "$(BIG)"));
  Result<EnvList> env = Build();
  ASSERT_FALSE(env.ok());
  EXPECT_THAT(env.status().message(),
              ::testing::HasSubstr("over the 2 MiB a program may be given"));
}

TEST_F(ContainerEnvTest, ArgvExpansionIsBoundedAndNamesTheArgument) {
  std::string big(100 * 1024, 'x');
  container_.command = {"echo"};
  container_.args = {"ok", "$(BIG)$(BIG)"};
  Result<std::vector<std::string>> argv = ContainerArgv(container_, {{"BIG", big}});
  ASSERT_FALSE(argv.ok());
  EXPECT_THAT(argv.status().message(), ::testing::StartsWith("args[1]: the expanded value"));
  container_.args = std::vector<std::string>(30, "$(BIG)");
  argv = ContainerArgv(container_, {{"BIG", big}});
  ASSERT_FALSE(argv.ok());
  EXPECT_THAT(argv.status().message(), ::testing::HasSubstr("over the 2 MiB"));
  container_.args = std::vector<std::string>(10, "$(BIG)");
  EXPECT_TRUE(ContainerArgv(container_, {{"BIG", big}}).ok());
}

}  // namespace
}  // namespace trainyard::node
