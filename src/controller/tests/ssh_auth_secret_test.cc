// An MPI runtime's SSH key Secret: upstream's shape, and a key pair that
// OpenSSH itself reads back to the public key the Secret gives.
#include "controller/ssh_auth_secret.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <sys/stat.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "common/tests/needs.h"
#include "common/tests/test_dir.h"

namespace trainyard::controller {
namespace {

namespace fs = std::filesystem;
using ::testing::StartsWith;

std::string Unbase64(const std::string& text) {
  std::string out(text.size(), '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(text.data()),
                          static_cast<int>(text.size()));
  out.resize(n < 0 ? 0
                   : static_cast<size_t>(n) - (text.ends_with("==")  ? 2
                                               : text.ends_with('=') ? 1
                                                                     : 0));
  return out;
}

TrainJobSource Job() {
  TrainJobSource job;
  job.meta.name = "ds";
  job.meta.namespace_ = "team-a";
  job.meta.uid = "u-1";
  return job;
}

TEST(SshAuthSecretTest, IsUpstreamsImmutableSshAuthSecretOwnedByTheJob) {
  Result<api::Json> secret = BuildSshAuthSecret(Job());
  ASSERT_TRUE(secret.ok()) << secret.status().ToString();
  EXPECT_EQ(api::StringAt(*secret, {"metadata", "name"}), "ds-mpi-ssh-auth");
  EXPECT_EQ(api::StringAt(*secret, {"metadata", "namespace"}), "team-a");
  EXPECT_EQ((*secret)["type"], "kubernetes.io/ssh-auth");
  EXPECT_EQ((*secret)["immutable"], true);
  EXPECT_EQ((*secret)["metadata"]["ownerReferences"][0]["uid"], "u-1");
  EXPECT_THAT(Unbase64((*secret)["data"]["ssh-privatekey"]),
              StartsWith("-----BEGIN EC PRIVATE KEY-----\n"));
  EXPECT_THAT(Unbase64((*secret)["data"]["ssh-publickey"]), StartsWith("ecdsa-sha2-nistp521 "));
  Result<api::Json> another = BuildSshAuthSecret(Job());
  ASSERT_TRUE(another.ok());
  EXPECT_NE((*another)["data"]["ssh-privatekey"], (*secret)["data"]["ssh-privatekey"])
      << "each job gets a key of its own";
}

TEST(SshAuthSecretTest, OpenSshDerivesTheGivenPublicKeyFromThePrivateOne) {
  TRAINYARD_NEEDS(system("command -v ssh-keygen >/dev/null") == 0, "openssh-client");
  Result<api::Json> secret = BuildSshAuthSecret(Job());
  ASSERT_TRUE(secret.ok());
  fs::path dir = FreshTestDir("trainyard-ssh-auth-test");
  fs::path key = dir / "id";
  std::ofstream(key) << Unbase64((*secret)["data"]["ssh-privatekey"]);
  chmod(key.c_str(), 0600);
  std::string derived;
  FILE* out = popen(("ssh-keygen -y -f " + key.string()).c_str(), "r");
  ASSERT_NE(out, nullptr);
  std::array<char, 512> buffer{};
  while (fgets(buffer.data(), buffer.size(), out) != nullptr) derived += buffer.data();
  EXPECT_EQ(pclose(out), 0);
  fs::remove_all(dir);
  EXPECT_EQ(derived, Unbase64((*secret)["data"]["ssh-publickey"]));
}

}  // namespace
}  // namespace trainyard::controller
