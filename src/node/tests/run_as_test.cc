// A namespace's replicas and the machine's files: what baseline refuses,
// and what a replica's own user is given.
#include "node/run_as.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "api/pod_security.h"
#include "api/tests/test_util.h"
#include "common/tests/test_dir.h"
#include "store/sqlite_store.h"

namespace trainyard::node {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class RunAsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = FreshTestDir("trainyard-run-as-test");
    store_ = std::move(*store::SqliteStore::Open({.clock = &clock_}));
    access_ = {.baseline_namespaces = true, .own_dirs = {(dir_ / "state/trials").string()}};
    for (const char* ns : {"team-a", "lab"}) {
      api::Json doc = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns}}}};
      if (std::string(ns) == "lab")
        doc["metadata"]["labels"] = {{api::kPodSecurityEnforceLabel, "privileged"}};
      ASSERT_TRUE(store_->Create(doc).ok());
    }
  }
  void TearDown() override { fs::remove_all(dir_); }

  api::Pod PodWithHostPath(const std::string& ns, const std::string& path) {
    api::Json doc = api::testing::ParseOne(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: " + ns +
        ", uid: u1}\nspec:\n  containers: [{name: c, image: x, command: [sh]}]\n"
        "  volumes: [{name: data, hostPath: {path: '" +
        path + "'}}]\n");
    return *api::DecodePod(doc);
  }

  fs::path dir_;
  FakeClock clock_;
  std::unique_ptr<store::SqliteStore> store_;
  HostAccess access_;
};

TEST_F(RunAsTest, ABaselineNamespaceMountsNoHostPathButTrainyardsOwnOfItsNamespace) {
  Status refused = CheckHostPaths(PodWithHostPath("team-a", "/etc"), access_, *store_);
  EXPECT_EQ(refused.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.message(), HasSubstr("volume data: hostPath /etc is forbidden in namespace "
                                           "team-a (Pod Security baseline)"));
  std::string own = (dir_ / "state/trials/team-a/exp/t1").string();
  EXPECT_TRUE(CheckHostPaths(PodWithHostPath("team-a", own), access_, *store_).ok());
  // Not another namespace's, nor a way out of its own.
  for (const std::string& path :
       {(dir_ / "state/trials/lab/exp/t1").string(), (dir_ / "state/trials/team-a").string(),
        (dir_ / "state/trials/team-a/../lab/x").string(), (dir_ / "state/trials").string()}) {
    EXPECT_FALSE(CheckHostPaths(PodWithHostPath("team-a", path), access_, *store_).ok()) << path;
  }
  // An administrator's privileged namespace, or a server without tokens.
  EXPECT_TRUE(CheckHostPaths(PodWithHostPath("lab", "/etc"), access_, *store_).ok());
  EXPECT_TRUE(CheckHostPaths(PodWithHostPath("team-a", "/etc"), {}, *store_).ok());
}

TEST_F(RunAsTest, AReplicasUserIsGivenAWayToItsPodsFilesAndItsOwnFoldersOnly) {
  if (geteuid() != 0) GTEST_SKIP() << "changing owners needs root";
  fs::path state = dir_ / "state";
  fs::path pod_dir = state / "pods/team-a/p";
  fs::path trial = state / "trials/team-a/exp/t1";
  fs::create_directories(pod_dir / "volumes/scratch");
  fs::create_directories(trial);
  fs::create_directories(state / "logs");
  for (const fs::path& d : {state, state / "pods", state / "pods/team-a", state / "logs"}) {
    fs::permissions(d, fs::perms::owner_all);
  }
  runtime::Credentials user = *runtime::LookupUser("4000123:4000456");
  api::Pod pod = PodWithHostPath("team-a", trial.string());
  PodVolumeDirs dirs{.disk = (pod_dir / "volumes").string(), .memory = (dir_ / "shm").string()};
  ASSERT_TRUE(GivePodFiles(pod, dirs, (state / "pods").string(), access_, user).ok());
  auto stat_of = [](const fs::path& p) {
    struct stat st {};
    lstat(p.c_str(), &st);
    return st;
  };
  // The pod's folder stays trainyard's: what in it is the user's was
  // handed over as it was made (VolumesTest), never by a walk at start.
  EXPECT_EQ(stat_of(pod_dir).st_uid, 0u);
  EXPECT_EQ(stat_of(pod_dir / "volumes/scratch").st_uid, 0u);
  EXPECT_EQ(stat_of(trial).st_uid, 4000123u);
  // The way there is passable and not listable; the logs stay closed.
  for (const fs::path& d :
       {state, state / "pods", state / "pods/team-a", state / "trials/team-a/exp"}) {
    EXPECT_EQ(stat_of(d).st_mode & 0777, 0711u) << d;
    EXPECT_EQ(stat_of(d).st_uid, 0u) << d;
  }
  EXPECT_EQ(stat_of(state / "logs").st_mode & 0777, 0700u);
}

TEST(UseHomeOfTest, HomeIsTheUsersUnlessTheContainerSetsIt) {
  runtime::Credentials user{.name = "nobody", .home = "/nonexistent"};
  api::Container plain;
  EnvList env = {{"PATH", "/bin"}, {"HOME", "/root"}};
  UseHomeOf(user, plain, env);
  EXPECT_EQ(env, (EnvList{{"PATH", "/bin"}, {"HOME", "/nonexistent"}}));
  api::Container own;
  own.env.push_back({.name = "HOME", .value = "/work"});
  env = {{"HOME", "/work"}};
  UseHomeOf(user, own, env);
  EXPECT_EQ(env, (EnvList{{"HOME", "/work"}}));
}

}  // namespace
}  // namespace trainyard::node
