#include "node/sandbox.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "api/pod_object.h"
#include "common/tests/test_dir.h"

namespace trainyard::node {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

class SandboxArgsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = FreshTestDir("trainyard-sandbox-test");
    fs::create_directories(dir_ / "existing");
    std::ofstream(dir_ / "file") << "x";
    fs::create_symlink("existing", dir_ / "link");
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The arguments for `mounts`, which must be accepted.
  std::vector<std::string> Args(Mounts mounts, std::string hosts_file = "") {
    Result<std::vector<std::string>> args = SandboxArgs(
        "/usr/bin/bwrap",
        {.hostname = "job-master-0", .mounts = std::move(mounts), .hosts_file = hosts_file});
    EXPECT_TRUE(args.ok()) << args.status().message();
    return args.ok() ? *args : std::vector<std::string>{};
  }
  std::string D(const char* relative) const { return (dir_ / relative).string(); }

  fs::path dir_;
};

// Consecutive elements of `args`, as one string: "--bind /a /b".
std::string Joined(const std::vector<std::string>& args) {
  std::string out;
  for (const std::string& a : args) out += (out.empty() ? "" : " ") + a;
  return out;
}

TEST_F(SandboxArgsTest, AMountOverWhatExistsBindsItThereOnTheMachinesRoot) {
  std::vector<std::string> args = Args({{.mount_path = D("existing"), .host_path = "/srv/v"}});
  EXPECT_THAT(
      args, ElementsAre("/usr/bin/bwrap", "--dev-bind", "/", "/", "--bind", "/srv/v", D("existing"),
                        "--unshare-uts", "--hostname", "job-master-0", "--die-with-parent"));
}

// readOnlyRootFilesystem on the machine's files: its "/" remounted
// read-only once the volumes are bound.
TEST_F(SandboxArgsTest, AReadOnlyRootRemountsTheMachinesRootAfterTheVolumes) {
  Result<std::vector<std::string>> args = SandboxArgs(
      "/usr/bin/bwrap", {.hostname = "job-master-0",
                         .mounts = {{.mount_path = D("existing"), .host_path = "/srv/v"}},
                         .read_only_root = true});
  ASSERT_TRUE(args.ok());
  EXPECT_THAT(*args, ElementsAre("/usr/bin/bwrap", "--dev-bind", "/", "/", "--bind", "/srv/v",
                                 D("existing"), "--remount-ro", "/", "--unshare-uts", "--hostname",
                                 "job-master-0", "--die-with-parent"));
}

// The mount point would otherwise be made on the machine's own disk.
TEST_F(SandboxArgsTest, ANewMountPointIsMadeInATmpfsOverItsParentWithItsEntriesBoundBack) {
  std::string args = Joined(Args({{.mount_path = D("new/data"), .host_path = "/srv/v"}}));
  EXPECT_THAT(args, HasSubstr("--dev-bind / / --perms "));
  EXPECT_THAT(args, HasSubstr(" --tmpfs " + dir_.string() + " "));
  EXPECT_THAT(args, HasSubstr("--dev-bind " + D("existing") + " " + D("existing")));
  EXPECT_THAT(args, HasSubstr("--dev-bind " + D("file") + " " + D("file")));
  EXPECT_THAT(args, HasSubstr("--symlink existing " + D("link")));
  // The volume last, over all of that, in a directory any user may pass.
  EXPECT_THAT(args, HasSubstr(D("link") + " --perms 0755 --dir " + D("new") + " --bind /srv/v " +
                              D("new/data") + " --unshare-uts"));
}

TEST_F(SandboxArgsTest, ANewTopLevelDirectoryShadowsTheRootItself) {
  std::string args =
      Joined(Args({{.mount_path = "/trainyard-test-no-such-dir/x", .host_path = "/srv/v"}}));
  EXPECT_THAT(args, Not(HasSubstr("--dev-bind / /")));
  EXPECT_THAT(args, HasSubstr("--dev-bind /usr /usr"));
  EXPECT_THAT(args, HasSubstr("--dev-bind /proc /proc"));
  EXPECT_THAT(args, HasSubstr("--bind /srv/v /trainyard-test-no-such-dir/x"));
}

// As a container runtime makes it: in the volume it is inside of.
TEST_F(SandboxArgsTest, AMountInsideAnotherIsMadeInThatVolumeAndShadowsNothing) {
  std::string args = Joined(Args({{.mount_path = D("existing/a/b"), .host_path = "/srv/inner"},
                                  {.mount_path = D("existing"), .host_path = "/srv/outer"}}));
  EXPECT_THAT(args, Not(HasSubstr("--tmpfs")));
  EXPECT_THAT(args, HasSubstr("--bind /srv/outer " + D("existing") + " --perms 0755 --dir " +
                              D("existing/a") + " --bind /srv/inner " + D("existing/a/b")));
  // Shadowed once, for the outer; not again for the inner.
  args = Joined(Args({{.mount_path = D("new/a/b"), .host_path = "/srv/inner"},
                      {.mount_path = D("new/a"), .host_path = "/srv/outer"}}));
  EXPECT_EQ(args.find("--tmpfs"), args.rfind("--tmpfs"));
}

TEST_F(SandboxArgsTest, ReadOnlyMountsAreReadOnlyAndHostPathsKeepTheirDevices) {
  std::vector<std::string> args =
      Args({{.mount_path = D("existing"), .host_path = "/srv/cfg", .read_only = true},
            {.mount_path = D("file"), .host_path = "/dev/fuse", .devices = true}});
  std::string joined = Joined(args);
  EXPECT_THAT(joined, HasSubstr("--ro-bind /srv/cfg " + D("existing")));
  EXPECT_THAT(joined, HasSubstr("--dev-bind /dev/fuse " + D("file")));
}

// A symlink on the way is followed as the bind follows it.
TEST_F(SandboxArgsTest, AMountPathThroughASymlinkLandsWhereItLeads) {
  std::string args = Joined(Args({{.mount_path = D("link/data"), .host_path = "/srv/v"}}));
  EXPECT_THAT(args, HasSubstr("--tmpfs " + D("existing")));
  EXPECT_THAT(args, HasSubstr("--bind /srv/v " + D("existing/data")));
}

// A replica may leave a symlink in its volume; a mount point inside that
// volume is never made through it (bwrap would make it on the machine).
TEST_F(SandboxArgsTest, ASymlinkInAVolumeOnTheWayToAMountPointIsRefused) {
  fs::create_directories(dir_ / "volume");
  fs::create_symlink("/etc", dir_ / "volume" / "escape");
  Result<std::vector<std::string>> args = SandboxArgs(
      "/usr/bin/bwrap",
      {.hostname = "h",
       .mounts = {{.mount_path = "/trainyard-test/outer", .host_path = D("volume")},
                  {.mount_path = "/trainyard-test/outer/escape/x", .host_path = "/srv/v"}}});
  ASSERT_FALSE(args.ok());
  EXPECT_THAT(args.status().message(),
              HasSubstr("/trainyard-test/outer/escape in the volume mounted at "
                        "/trainyard-test/outer is a symbolic link"));
}

TEST_F(SandboxArgsTest, MountPathsBwrapCannotMakeAreRefusedWithTheReason) {
  for (const char* path : {"data", "/", "/proc/driver/x", "/sys/fs/x"}) {
    Result<std::vector<std::string>> args = SandboxArgs(
        "/usr/bin/bwrap", {.hostname = "h", .mounts = {{.mount_path = path, .host_path = "/srv"}}});
    ASSERT_FALSE(args.ok()) << path;
    EXPECT_THAT(args.status().message(), HasSubstr(std::string("mountPath ") + path + ": "));
  }
}

TEST_F(SandboxArgsTest, TheHostsFileIsBoundUnlessTheManifestMountsItsOwn) {
  EXPECT_THAT(Joined(Args({}, "/pods/x/etc-hosts")),
              HasSubstr("--ro-bind /pods/x/etc-hosts /etc/hosts"));
  std::string own =
      Joined(Args({{.mount_path = "/etc/hosts", .host_path = "/srv/hosts"}}, "/pods/x/etc-hosts"));
  EXPECT_THAT(own, Not(HasSubstr("etc-hosts")));
  EXPECT_THAT(own, HasSubstr("--bind /srv/hosts /etc/hosts"));
}

TEST_F(SandboxArgsTest, ADirectoryTooFullToShadowIsAnErrorNamingTheMountPath) {
  fs::create_directories(dir_ / "full");
  for (size_t i = 0; i <= kMaxShadowedEntries; ++i) {
    std::ofstream(dir_ / "full" / std::to_string(i));
  }
  Result<std::vector<std::string>> args = SandboxArgs(
      "/usr/bin/bwrap",
      {.hostname = "h", .mounts = {{.mount_path = D("full/new"), .host_path = "/srv/v"}}});
  ASSERT_FALSE(args.ok());
  EXPECT_THAT(args.status().message(), HasSubstr("mountPath " + D("full/new")));
  EXPECT_THAT(args.status().message(), HasSubstr("more than 1024"));
}

TEST(HostsFileTest, NamesThePodItsFqdnAndItsHostAliases) {
  api::Pod pod;
  pod.metadata.name = "job-worker-0";
  pod.metadata.namespace_ = "team";
  pod.spec.extra = api::Json::parse(R"({
    "subdomain": "job-worker",
    "hostAliases": [{"ip": "10.0.0.7", "hostnames": ["db", "db.local", "x\n1.2.3.4 evil"]},
                    {"ip": "10.0.0.8\n1.2.3.4", "hostnames": ["other"]}]})");
  std::string hosts = HostsFileOf(pod, "127.0.0.1");
  EXPECT_THAT(hosts, HasSubstr("127.0.0.1\tlocalhost\n"));
  EXPECT_THAT(
      hosts, HasSubstr("127.0.0.1\tjob-worker-0.job-worker.team.svc.cluster.local job-worker-0\n"));
  EXPECT_THAT(hosts, HasSubstr("10.0.0.7\tdb\tdb.local\n"));
  // A name or address that would add a line of its own is left out.
  EXPECT_THAT(hosts, Not(HasSubstr("evil")));
  EXPECT_THAT(hosts, Not(HasSubstr("other")));
}

}  // namespace
}  // namespace trainyard::node
