// Who replicas run as: users looked up as the kubelet's runAsUser takes
// them, the server's policy, and real processes switched to them.
#include "runtime/local/credentials.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/held_dir.h"
#include "common/tests/test_dir.h"
#include "runtime/local/namespace_users.h"
#include "runtime/local/process.h"

namespace trainyard::runtime {
namespace {

namespace fs = std::filesystem;

TEST(CredentialsTest, UsersAreFoundByNameOrNumber) {
  Result<Credentials> root = LookupUser("root");
  ASSERT_TRUE(root.ok());
  EXPECT_EQ(root->uid, 0u);
  EXPECT_EQ(root->home, "/root");
  Result<Credentials> by_number = LookupUser("0");
  ASSERT_TRUE(by_number.ok());
  EXPECT_EQ(by_number->uid, 0u);
  // A number with no entry, as a container's runAsUser may be.
  Result<Credentials> bare = LookupUser("4000123:4000456");
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(bare->uid, 4000123u);
  EXPECT_EQ(bare->gid, 4000456u);
  EXPECT_EQ(bare->groups, std::vector<gid_t>{4000456u});
  EXPECT_EQ(bare->home, "/");
  Result<Credentials> missing = LookupUser("no-such-user-here");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), ::testing::HasSubstr("no-such-user-here"));
}

// Each namespace a user of its own, the same one after a restart.
TEST(NamespaceUsersTest, EachNamespaceGetsAUidOfItsOwnAndKeepsIt) {
  std::string file = (std::filesystem::temp_directory_path() /
                      ("trainyard-namespace-users-" + std::to_string(getpid())))
                         .string();
  std::filesystem::remove(file);
  {
    Result<std::shared_ptr<NamespaceUsers>> users = NamespaceUsers::Open(file);
    ASSERT_TRUE(users.ok()) << users.status().ToString();
    RunAsPolicy policy{.own_users = *users};
    Result<std::optional<Credentials>> a = policy.For("team-a");
    Result<std::optional<Credentials>> b = policy.For("team-b");
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ((*a)->uid, kFirstNamespaceUid);
    EXPECT_EQ((*b)->uid, kFirstNamespaceUid + 1);
    EXPECT_EQ((*b)->gid, kFirstNamespaceUid + 1);
    EXPECT_FALSE((*a)->listed);
    EXPECT_EQ((*policy.For("team-a"))->uid, kFirstNamespaceUid);
  }
  Result<std::shared_ptr<NamespaceUsers>> again = NamespaceUsers::Open(file);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)->For("team-b")->uid, kFirstNamespaceUid + 1);
  EXPECT_EQ((*again)->For("team-c")->uid, kFirstNamespaceUid + 2);
  std::filesystem::remove(file);
}

TEST(CredentialsTest, ARootServerRunsReplicasAsNobodyUnlessToldOtherwise) {
  if (geteuid() != 0) GTEST_SKIP() << "as root only: a user's policy cannot switch users";
  Result<RunAsPolicy> policy = MakeRunAsPolicy("", {"team-a=4000123"});
  ASSERT_TRUE(policy.ok()) << policy.status().ToString();
  ASSERT_TRUE(policy->For("default")->has_value());
  EXPECT_EQ((*policy->For("default"))->uid, LookupUser("nobody")->uid);
  EXPECT_EQ((*policy->For("team-a"))->uid, 4000123u);
  // Root only when asked by name.
  Result<RunAsPolicy> as_root = MakeRunAsPolicy("root", {});
  ASSERT_TRUE(as_root.ok());
  EXPECT_FALSE(as_root->For("default")->has_value());
  for (const char* bad : {"team-a", "=nobody", "team-a=", "team-a=no-such-user-here"}) {
    EXPECT_EQ(MakeRunAsPolicy("", {bad}).status().code(), StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_EQ(MakeRunAsPolicy("no-such-user-here", {}).status().code(), StatusCode::kInvalidArgument);
}

class SwitchedProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "switching users needs root";
    dir_ = FreshTestDir("trainyard-credentials-test");
    // The replica's own folder, where it may write; the rest is root's.
    fs::create_directories(dir_ / "work");
    fs::permissions(dir_, fs::perms::owner_all | fs::perms::others_exec);
    user_ = *LookupUser("4000123:4000456");
    ASSERT_TRUE(GiveTree((dir_ / "work").string(), {user_.uid, user_.gid}).ok());
    std::ofstream(dir_ / "secret") << "root's";
    fs::permissions(dir_ / "secret", fs::perms::owner_read | fs::perms::owner_write);
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  std::string RunAs(const std::string& shim) {
    ProcessSpec spec{.argv = {"sh", "-c",
                              "id -u; id -g; umask; cat ../secret || echo cannot read; "
                              "touch mine && stat -c %u mine"},
                     .env = {{"PATH", "/usr/bin:/bin"}},
                     .working_dir = (dir_ / "work").string(),
                     .log_path = (dir_ / "log").string(),
                     .shim = shim,
                     .exit_path = (dir_ / "exit").string(),
                     .user = user_};
    fs::remove(dir_ / "log");
    Result<Process> p = Process::Start(spec);
    EXPECT_TRUE(p.ok()) << p.status().ToString();
    if (!p.ok()) return "";
    EXPECT_TRUE(p->WaitFor(std::chrono::seconds(20)).has_value());
    std::ifstream in(dir_ / "log");
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  fs::path dir_;
  Credentials user_;
};

TEST_F(SwitchedProcessTest, AReplicaRunsAsItsUserAndCannotReadRootsFiles) {
  std::string out = RunAs("");
  EXPECT_EQ(out.substr(0, out.find("cannot read") + 11),
            "4000123\n4000456\n0022\ncat: ../secret: Permission denied\ncannot read");
  EXPECT_THAT(out, ::testing::EndsWith("4000123\n"));
}

TEST_F(SwitchedProcessTest, UnderAShimTheReplicaSwitchesAndTheShimStaysRoot) {
  std::string out = RunAs(TRAINYARD_SHIM);
  EXPECT_THAT(out, ::testing::StartsWith("4000123\n4000456\n0022\n"));
  EXPECT_THAT(out, ::testing::HasSubstr("cannot read"));
  // The shim, still root, wrote how the replica ended where it could not.
  EXPECT_TRUE(fs::exists(dir_ / "exit"));
  EXPECT_EQ(ReadExitFile((dir_ / "exit").string()), (ExitStatus{0, 0}));
}

}  // namespace
}  // namespace trainyard::runtime
