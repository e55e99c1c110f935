// The service account's token and address as pods are given them
// (`trainyard run --kubeconfig`): who gets the token, and the files.
#include "node/service_account.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "api/tests/test_util.h"
#include "common/tests/test_dir.h"

namespace trainyard::node {
namespace {

namespace fs = std::filesystem;

api::Pod PodWith(const std::string& spec_yaml) {
  return *api::DecodePod(api::testing::ParseOne(
      "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: team, uid: u1}\nspec:\n" +
      spec_yaml));
}

std::string Read(const fs::path& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

TEST(ServiceAccountTest, OnlyAPodNamingAnAccountGetsTheToken) {
  auto mounts = [](const std::string& yaml) {
    api::Pod pod = PodWith(yaml);
    return MountsServiceAccount(pod, pod.spec.containers[0]);
  };
  EXPECT_FALSE(mounts("  containers: [{name: c, image: i}]\n"));
  EXPECT_TRUE(mounts("  serviceAccountName: op\n  containers: [{name: c, image: i}]\n"));
  EXPECT_FALSE(
      mounts("  serviceAccountName: op\n  automountServiceAccountToken: false\n"
             "  containers: [{name: c, image: i}]\n"));
  // A container that mounts its own volume there keeps it, as the kubelet leaves it.
  EXPECT_FALSE(
      mounts("  serviceAccountName: op\n  volumes: [{name: t, emptyDir: {}}]\n"
             "  containers: [{name: c, image: i, volumeMounts: [{name: t, mountPath: "
             "/var/run/secrets/kubernetes.io/serviceaccount/}]}]\n"));
}

TEST(ServiceAccountTest, TheEnvironmentNamesTheServerAsTheKubernetesService) {
  EnvList env;
  AddApiAccessEnv({.host = "::1", .port = "6443"}, env);
  EXPECT_THAT(env, ::testing::Contains(
                       std::pair<std::string, std::string>("KUBERNETES_SERVICE_HOST", "::1")));
  EXPECT_THAT(env, ::testing::Contains(
                       std::pair<std::string, std::string>("KUBERNETES_PORT", "tcp://[::1]:6443")));
}

// Each container's files are its own: a second container's start leaves
// the first's, mounted in it, as they are.
TEST(ServiceAccountTest, EachContainerHasItsOwnFiles) {
  fs::path dir = FreshTestDir("trainyard-service-account");
  PodVolumeDirs dirs{.disk = (dir / "pod").string(), .memory = (dir / "shm").string()};
  api::Pod pod = PodWith(
      "  serviceAccountName: op\n  containers: [{name: a, image: i}, {name: b, image: i}]\n");
  ApiAccess access{.host = "127.0.0.1", .port = "6443", .token = "t0k", .ca_pem = "CA"};
  Result<Mount> a = PrepareServiceAccount(pod, pod.spec.containers[0], access, dirs, std::nullopt);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  Result<Mount> b = PrepareServiceAccount(pod, pod.spec.containers[1], access, dirs, std::nullopt);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_NE(a->host_path, b->host_path);
  EXPECT_EQ(a->mount_path, "/var/run/secrets/kubernetes.io/serviceaccount");
  EXPECT_TRUE(a->read_only);
  EXPECT_EQ(Read(fs::path(a->host_path) / "token"), "t0k");
  EXPECT_EQ(Read(fs::path(a->host_path) / "ca.crt"), "CA");
  EXPECT_EQ(Read(fs::path(a->host_path) / "namespace"), "team");
  struct stat token {};
  ASSERT_EQ(stat((fs::path(a->host_path) / "token").c_str(), &token), 0);
  EXPECT_EQ(token.st_mode & 0777, 0600u);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace trainyard::node
