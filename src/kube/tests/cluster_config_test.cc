#include "kube/cluster_config.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "common/strings.h"
#include "common/tests/test_dir.h"

namespace trainyard::kube {
namespace {

namespace fs = std::filesystem;

class ClusterConfigTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = FreshTestDir("kubeconfig"); }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }
  EnvLookup Env(std::map<std::string, std::string> vars) {
    return [vars](const std::string& name) -> std::optional<std::string> {
      auto it = vars.find(name);
      if (it == vars.end()) return std::nullopt;
      return it->second;
    };
  }
  fs::path dir_;
};

const char* kTwoContexts = R"(apiVersion: v1
kind: Config
current-context: prod
clusters:
- name: prod-cluster
  cluster:
    server: https://10.0.0.1:6443
    certificate-authority-data: Q0EgUEVN
- name: dev-cluster
  cluster:
    server: https://dev.example:443
    certificate-authority: ca.crt
    insecure-skip-tls-verify: true
contexts:
- name: prod
  context: {cluster: prod-cluster, user: admin, namespace: team-a}
- name: dev
  context: {cluster: dev-cluster, user: dev}
users:
- name: admin
  user:
    client-certificate-data: Q0VSVA==
    client-key-data: S0VZ
- name: dev
  user:
    tokenFile: token
)";

TEST_F(ClusterConfigTest, ReadsTheCurrentContextsClusterUserAndNamespace) {
  std::string path = Write("config", kTwoContexts);
  Result<ClusterConfig> config = LoadKubeconfig(path);
  ASSERT_TRUE(config.ok()) << config.status().message();
  EXPECT_EQ(config->server, "https://10.0.0.1:6443");
  EXPECT_EQ(config->ca_pem, "CA PEM");
  EXPECT_EQ(config->client_cert_pem, "CERT");
  EXPECT_EQ(config->client_key_pem, "KEY");
  EXPECT_EQ(config->namespace_, "team-a");
  EXPECT_FALSE(config->insecure_skip_tls_verify);
  EXPECT_TRUE(config->token.empty());
}

TEST_F(ClusterConfigTest, ANamedContextReadsFilesBesideTheKubeconfig) {
  std::string path = Write("config", kTwoContexts);
  Write("ca.crt", "DEV CA");
  Write("token", "s3cret\n");
  Result<ClusterConfig> config = LoadKubeconfig(path, "dev");
  ASSERT_TRUE(config.ok()) << config.status().message();
  EXPECT_EQ(config->server, "https://dev.example:443");
  EXPECT_EQ(config->ca_pem, "DEV CA");
  EXPECT_TRUE(config->insecure_skip_tls_verify);
  EXPECT_EQ(config->token, "s3cret");  // the file's newline is not part of it
  EXPECT_EQ(config->namespace_, "default");
}

TEST_F(ClusterConfigTest, SaysWhatIsWrongAndWhere) {
  std::string path = Write("config", kTwoContexts);
  Result<ClusterConfig> missing = LoadKubeconfig(path, "staging");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("no context \"staging\""), std::string::npos);
  // dev's CA file is not there.
  Result<ClusterConfig> no_ca = LoadKubeconfig(path, "dev");
  EXPECT_NE(no_ca.status().message().find("certificate-authority"), std::string::npos)
      << no_ca.status().message();
  std::string exec = Write("exec", R"(current-context: c
clusters: [{name: k, cluster: {server: "https://k:6443"}}]
contexts: [{name: c, context: {cluster: k, user: u}}]
users: [{name: u, user: {exec: {command: aws}}}]
)");
  Result<ClusterConfig> plugin = LoadKubeconfig(exec);
  EXPECT_EQ(plugin.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(plugin.status().message().find("exec plugin"), std::string::npos);
  std::string half = Write("half", R"(current-context: c
clusters: [{name: k, cluster: {server: "https://k:6443"}}]
contexts: [{name: c, context: {cluster: k, user: u}}]
users: [{name: u, user: {client-certificate-data: Q0VSVA==}}]
)");
  EXPECT_EQ(LoadKubeconfig(half).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(ClusterConfigTest, InAPodTheServiceAccountIsUsed) {
  Write("token", "pod-token\n");
  Write("ca.crt", "POD CA");
  Write("namespace", "kubeflow");
  Result<ClusterConfig> config = LoadInCluster(
      Env({{"KUBERNETES_SERVICE_HOST", "fd00::1"}, {"KUBERNETES_SERVICE_PORT", "443"}}),
      dir_.string());
  ASSERT_TRUE(config.ok()) << config.status().message();
  EXPECT_EQ(config->server, "https://[fd00::1]:443");
  EXPECT_EQ(config->token, "pod-token");
  EXPECT_EQ(config->ca_pem, "POD CA");
  EXPECT_EQ(config->namespace_, "kubeflow");
  EXPECT_EQ(LoadInCluster(Env({}), dir_.string()).status().code(), StatusCode::kNotFound);
}

TEST_F(ClusterConfigTest, TheFlagThenKubeconfigThenThePodThenHome) {
  std::string path = Write("config", kTwoContexts);
  fs::create_directories(dir_ / "home/.kube");
  Write("home/.kube/config", R"(current-context: c
clusters: [{name: k, cluster: {server: "http://home:8080"}}]
contexts: [{name: c, context: {cluster: k}}]
)");
  std::string home = (dir_ / "home").string();
  auto server = [](const Result<ClusterConfig>& c) {
    return c.ok() ? c->server : c.status().message();
  };
  EXPECT_EQ(server(LoadClusterConfig(path, "", Env({{"HOME", home}}))), "https://10.0.0.1:6443");
  EXPECT_EQ(server(LoadClusterConfig(
                "", "", Env({{"KUBECONFIG", "/nonexistent:" + path}, {"HOME", home}}))),
            "https://10.0.0.1:6443");
  EXPECT_EQ(server(LoadClusterConfig("", "", Env({{"HOME", home}}))), "http://home:8080");
  EXPECT_EQ(LoadClusterConfig("", "", Env({{"HOME", "/nonexistent"}})).status().code(),
            StatusCode::kNotFound);
}

TEST(TrimTest, DropsSurroundingWhiteSpaceOnly) {
  EXPECT_EQ(Trim("  a b \n"), "a b");
  EXPECT_EQ(Trim(" \t\n"), "");
  EXPECT_EQ(Trim("x"), "x");
}

}  // namespace
}  // namespace trainyard::kube
