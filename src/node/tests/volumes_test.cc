// Volumes on this machine: what each kind becomes, and path translation.
#include "node/volumes.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "api/object.h"
#include "api/tests/test_util.h"
#include "common/tests/test_dir.h"
#include "store/sqlite_store.h"

namespace trainyard::node {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class VolumesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = FreshTestDir("trainyard-volumes-test");
    store_ = std::move(*store::SqliteStore::Open({.clock = &clock_}));
    dirs_ = {.disk = (dir_ / "pod").string(),
             .memory = (dir_ / "shm").string(),
             .claims = (dir_ / "claims").string()};
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A pod whose one container mounts every volume of `volumes_yaml`.
  api::Pod PodWith(const std::string& spec_yaml) {
    api::Json doc = api::testing::ParseOne(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p, "
        "namespace: default, uid: u1}\nspec:\n" +
        spec_yaml);
    Result<api::Pod> pod = api::DecodePod(doc);
    EXPECT_TRUE(pod.ok()) << pod.status().ToString();
    return *pod;
  }
  void AddConfigMap(const std::string& yaml) {
    api::Json doc = api::testing::ParseOne(yaml);
    doc["metadata"]["namespace"] = "default";
    ASSERT_TRUE(store_->Create(doc).ok());
  }
  Result<Mounts> Prepare(const api::Pod& pod) {
    return PrepareVolumes(pod, pod.spec.containers.at(0), dirs_, owner_, *store_);
  }
  static std::string Read(const fs::path& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  static int ModeOf(const fs::path& path) {
    struct stat st {};
    stat(path.c_str(), &st);
    return st.st_mode & 0777;
  }

  fs::path dir_;
  FakeClock clock_;
  std::unique_ptr<store::SqliteStore> store_;
  PodVolumeDirs dirs_;
  std::optional<FileOwner> owner_;  // the replica's user, when not ours
};

TEST_F(VolumesTest, EmptyDirsArePerPodAndMemoryOnesLiveApart) {
  api::Pod pod = PodWith(R"(
  containers:
    - name: c
      volumeMounts: [{name: scratch, mountPath: /scratch}, {name: shm, mountPath: /dev/shm/}]
  volumes: [{name: scratch, emptyDir: {}}, {name: shm, emptyDir: {medium: Memory}}]
)");
  Result<Mounts> mounts = Prepare(pod);
  ASSERT_TRUE(mounts.ok()) << mounts.status().ToString();
  ASSERT_EQ(mounts->size(), 2u);
  // Longest mount path first; a trailing slash does not count.
  EXPECT_EQ((*mounts)[0].mount_path, "/scratch");
  EXPECT_EQ((*mounts)[0].host_path, (dir_ / "pod" / "scratch").string());
  EXPECT_EQ((*mounts)[1].mount_path, "/dev/shm");
  EXPECT_EQ((*mounts)[1].host_path, (dir_ / "shm" / "shm").string());
  EXPECT_TRUE(fs::is_directory(dir_ / "pod" / "scratch"));
  EXPECT_TRUE(fs::is_directory(dir_ / "shm" / "shm"));
  RemoveVolumes(dirs_);
  EXPECT_FALSE(fs::exists(dir_ / "pod"));
  EXPECT_FALSE(fs::exists(dir_ / "shm"));
}

TEST_F(VolumesTest, ConfigMapBecomesFilesWithTheirModes) {
  AddConfigMap(R"(
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {hostfile: "w-0 slots=1\n", run.sh: "#!/bin/sh\n"}
binaryData: {blob: AP8=}
)");
  api::Pod all = PodWith(R"(
  containers: [{name: c, volumeMounts: [{name: cfg, mountPath: /etc/cfg}]}]
  volumes: [{name: cfg, configMap: {name: settings, defaultMode: 0440}}]
)");
  ASSERT_TRUE(Prepare(all).ok());
  fs::path dir = dir_ / "pod" / "cfg";
  EXPECT_EQ(Read(dir / "hostfile"), "w-0 slots=1\n");
  EXPECT_EQ(Read(dir / "blob"), std::string("\x00\xff", 2));
  EXPECT_EQ(ModeOf(dir / "run.sh"), 0440);

  api::Pod items = PodWith(R"(
  containers: [{name: c, volumeMounts: [{name: cfg, mountPath: /etc/cfg}]}]
  volumes:
    - name: cfg
      configMap: {name: settings, items: [{key: run.sh, path: bin/run, mode: 0555}]}
)");
  ASSERT_TRUE(Prepare(items).ok());
  EXPECT_EQ(Read(dir / "bin" / "run"), "#!/bin/sh\n");
  EXPECT_EQ(ModeOf(dir / "bin" / "run"), 0555);
  EXPECT_FALSE(fs::exists(dir / "hostfile")) << "only the items listed";
}

// What validation refuses, the agent refuses too when a pod bypassed it:
// nothing is ever written outside the volume's directory.
TEST_F(VolumesTest, ConfigMapItemsNeverWriteOutsideTheVolume) {
  AddConfigMap(R"(
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {evil: "pwned\n"}
)");
  fs::path outside = dir_ / "outside";
  fs::create_directories(outside);
  auto prepare = [&](const std::string& path) {
    return Prepare(PodWith(R"(
  containers: [{name: c, volumeMounts: [{name: cfg, mountPath: /etc/cfg}]}]
  volumes: [{name: cfg, configMap: {name: settings, items: [{key: evil, path: ")" +
                           path + R"("}]}}]
)"));
  };
  Result<Mounts> absolute = prepare((outside / "abs").string());
  ASSERT_FALSE(absolute.ok());
  EXPECT_THAT(absolute.status().message(),
              HasSubstr("volume cfg: items[].path \"" + (outside / "abs").string() +
                        "\" must be a relative path; refusing to use a path outside the volume"));
  Result<Mounts> up = prepare("../../outside/up");
  ASSERT_FALSE(up.ok());
  EXPECT_THAT(up.status().message(), HasSubstr("must not contain '..'"));
  EXPECT_FALSE(prepare("a/../../../outside/mid").ok());
  EXPECT_FALSE(prepare("").ok());
  EXPECT_TRUE(fs::is_empty(outside)) << "nothing written outside";
  ASSERT_TRUE(prepare("a/..b/ok").ok());  // ".." only as a whole element
  EXPECT_EQ(Read(dir_ / "pod" / "cfg" / "a" / "..b" / "ok"), "pwned\n");
}

TEST_F(VolumesTest, SubPathAndVolumeNamesNeverLeadOutside) {
  fs::path outside = dir_ / "outside";
  fs::create_directories(outside);
  auto prepare = [&](const std::string& volume, const std::string& sub_path) {
    return Prepare(PodWith(R"(
  containers: [{name: c, volumeMounts: [{name: ")" +
                           volume + R"(", mountPath: /d, subPath: ")" + sub_path + R"("}]}]
  volumes: [{name: ")" + volume +
                           R"(", emptyDir: {}}]
)"));
  };
  Result<Mounts> up = prepare("scratch", "../../outside/made");
  ASSERT_FALSE(up.ok());
  EXPECT_THAT(up.status().message(),
              HasSubstr("volumeMount scratch: subPath \"../../outside/made\" "
                        "must not contain '..'"));
  EXPECT_FALSE(prepare("scratch", (outside / "abs").string()).ok());
  // A symlink the replica left in its emptyDir does not lead out either.
  ASSERT_TRUE(prepare("scratch", "fine").ok());
  fs::create_directory_symlink(outside, dir_ / "pod" / "scratch" / "link");
  Result<Mounts> linked = prepare("scratch", "link/made");
  ASSERT_FALSE(linked.ok());
  EXPECT_THAT(linked.status().message(), HasSubstr("must stay inside the volume"));
  // A volume's directory is named after it: a name that is no label is refused.
  Result<Mounts> named = prepare("../../outside/vol", "x");
  ASSERT_FALSE(named.ok());
  EXPECT_THAT(named.status().message(), HasSubstr("must be a lowercase RFC 1123 label"));
  EXPECT_TRUE(fs::is_empty(outside)) << "nothing made outside";
}

TEST_F(VolumesTest, AMissingConfigMapIsAnErrorUnlessOptional) {
  api::Pod pod = PodWith(R"(
  containers: [{name: c, volumeMounts: [{name: cfg, mountPath: /etc/cfg}]}]
  volumes: [{name: cfg, configMap: {name: absent}}]
)");
  Result<Mounts> mounts = Prepare(pod);
  ASSERT_FALSE(mounts.ok());
  EXPECT_THAT(mounts.status().message(), HasSubstr("volume cfg: configmap \"absent\" not found"));
  api::Pod optional = PodWith(R"(
  containers: [{name: c, volumeMounts: [{name: cfg, mountPath: /etc/cfg}]}]
  volumes: [{name: cfg, configMap: {name: absent, optional: true}}]
)");
  EXPECT_TRUE(Prepare(optional).ok());
}

TEST_F(VolumesTest, HostPathIsUsedAsItIsAndItsTypeIsChecked) {
  std::string host = (dir_ / "data").string();
  api::Pod must_exist = PodWith(R"(
  containers: [{name: c, volumeMounts: [{name: d, mountPath: /data, subPath: train}]}]
  volumes: [{name: d, hostPath: {path: )" +
                                host + R"(, type: Directory}}]
)");
  Result<Mounts> missing = Prepare(must_exist);
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("is not a directory"));

  api::Pod create = PodWith(R"(
  containers: [{name: c, volumeMounts: [{name: d, mountPath: /data, subPath: train}]}]
  volumes: [{name: d, hostPath: {path: )" +
                            host + R"(, type: DirectoryOrCreate}}]
)");
  Result<Mounts> mounts = Prepare(create);
  ASSERT_TRUE(mounts.ok()) << mounts.status().ToString();
  EXPECT_EQ(mounts->at(0).host_path, host + "/train");
  EXPECT_TRUE(fs::is_directory(host + "/train"));
  RemoveVolumes(dirs_);
  EXPECT_TRUE(fs::is_directory(host)) << "a hostPath is never removed";
}

// A secret volume as the kubelet keeps it: its files in memory (tmpfs),
// in a folder only trainyard's user (or the pod's) may enter.
TEST_F(VolumesTest, SecretBecomesFilesInAPrivateMemoryFolder) {
  AddConfigMap(R"(
apiVersion: v1
kind: Secret
metadata: {name: creds}
data: {token: aHVudGVyMg==, ca.crt: Y2E=}
)");
  api::Pod pod = PodWith(R"(
  containers: [{name: c, volumeMounts: [{name: creds, mountPath: /var/run/creds}]}]
  volumes: [{name: creds, secret: {secretName: creds, items: [{key: token, path: t/token, mode: 0400}]}}]
)");
  Result<Mounts> mounts = Prepare(pod);
  ASSERT_TRUE(mounts.ok()) << mounts.status().ToString();
  fs::path dir = dir_ / "shm" / "creds";
  EXPECT_EQ(mounts->at(0).host_path, dir.string());
  EXPECT_EQ(Read(dir / "t" / "token"), "hunter2");
  EXPECT_EQ(ModeOf(dir / "t" / "token"), 0400);
  EXPECT_FALSE(fs::exists(dir / "ca.crt")) << "only the items listed";
  // The pod's memory folder is trainyard's; the secret's own, private.
  EXPECT_EQ(ModeOf(dir_ / "shm"), 0711);
  EXPECT_EQ(ModeOf(dir), 0700);
  EXPECT_FALSE(fs::exists(dir_ / "pod" / "creds")) << "never on disk";

  api::Pod absent = PodWith(R"(
  containers: [{name: c, volumeMounts: [{name: s, mountPath: /s}]}]
  volumes: [{name: s, secret: {secretName: absent}}]
)");
  EXPECT_THAT(Prepare(absent).status().message(),
              HasSubstr("volume s: secret \"absent\" not found"));
}

// A claim's folder is the claim's, by namespace and name, and outlives the
// pod; a claim that does not exist, or is being deleted, is no volume.
TEST_F(VolumesTest, AClaimIsAFolderOfItsOwnThatOutlivesThePod) {
  api::Pod pod = PodWith(R"(
  containers: [{name: c, volumeMounts: [{name: ckpt, mountPath: /ckpt, subPath: run1}]}]
  volumes: [{name: ckpt, persistentVolumeClaim: {claimName: checkpoints}}]
)");
  EXPECT_THAT(Prepare(pod).status().message(),
              HasSubstr("volume ckpt: persistentvolumeclaim \"checkpoints\" not found"));
  AddConfigMap(R"(
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: checkpoints}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
)");
  Result<Mounts> mounts = Prepare(pod);
  ASSERT_TRUE(mounts.ok()) << mounts.status().ToString();
  fs::path claim = dir_ / "claims" / "default" / "checkpoints";
  EXPECT_EQ(mounts->at(0).host_path, (claim / "run1").string());
  std::ofstream(claim / "run1" / "step-1.pt") << "w";
  RemoveVolumes(dirs_);
  EXPECT_TRUE(fs::exists(claim / "run1" / "step-1.pt")) << "a claim's data outlives its pods";

  api::Json deleting = *store_->Get({"PersistentVolumeClaim", "default", "checkpoints"});
  deleting["metadata"]["deletionTimestamp"] = "2026-11-26T00:00:00Z";
  ASSERT_TRUE(store_->Update(deleting).ok());
  EXPECT_THAT(Prepare(pod).status().message(), HasSubstr("is being deleted"));
}

TEST_F(VolumesTest, UnsupportedSourcesAndUnknownVolumesSayWhatToUse) {
  api::Pod nfs = PodWith(R"(
  containers: [{name: c, volumeMounts: [{name: d, mountPath: /data}]}]
  volumes: [{name: d, nfs: {server: s, path: /x}}]
)");
  EXPECT_THAT(Prepare(nfs).status().message(), HasSubstr("volume d: nfs volumes"));
  api::Pod unknown = PodWith(R"(
  containers: [{name: c, volumeMounts: [{name: nope, mountPath: /data}]}]
)");
  EXPECT_THAT(Prepare(unknown).status().message(),
              HasSubstr("volumeMount nope: the pod has no volume of that name"));
}

TEST(TranslatePathsTest, ReplacesMountPathsOnlyWhereTheyStartAPath) {
  Mounts mounts = {{"/data/cache", "/srv/cache"}, {"/data", "/srv/data"}, {"/etc/mpi", "/r/mpi"}};
  EXPECT_EQ(TranslatePaths("/data", mounts), "/srv/data");
  EXPECT_EQ(TranslatePaths("/data/train.csv", mounts), "/srv/data/train.csv");
  EXPECT_EQ(TranslatePaths("/data/cache/x", mounts), "/srv/cache/x");
  EXPECT_EQ(TranslatePaths("--out=/data/model.pt", mounts), "--out=/srv/data/model.pt");
  EXPECT_EQ(TranslatePaths("a:/data,/etc/mpi/hostfile", mounts), "a:/srv/data,/r/mpi/hostfile");
  EXPECT_EQ(TranslatePaths("cat '/data/x' \"/data\"", mounts), "cat '/srv/data/x' \"/srv/data\"");
  // Not a path that starts with a mount path.
  EXPECT_EQ(TranslatePaths("/database", mounts), "/database");
  EXPECT_EQ(TranslatePaths("/x/data", mounts), "/x/data");
  EXPECT_EQ(TranslatePaths("s3://bucket/data", mounts), "s3://bucket/data");
  EXPECT_EQ(TranslatePaths("no paths here", mounts), "no paths here");
}

// Each character that may start a path token in a shell script, an option
// or a path list, before a mount path, and each one that may end it after.
TEST(TranslatePathsTest, EveryShellBoundaryStartsAndEndsAPath) {
  Mounts mounts = {{"/data", "/srv/data"}};
  for (char before : std::string(" \t\n\r\"'`;|&<>(){}=:,")) {
    std::string text = std::string("x") + before + "/data/f";
    EXPECT_EQ(TranslatePaths(text, mounts), std::string("x") + before + "/srv/data/f")
        << "after " << static_cast<int>(before);
  }
  for (char after : std::string(" \t\n\r\"'`;|&<>(){}:,/")) {
    std::string text = std::string("/data") + after + "y";
    EXPECT_EQ(TranslatePaths(text, mounts), std::string("/srv/data") + after + "y")
        << "before " << static_cast<int>(after);
  }
}

TEST(TranslatePathsTest, NoBoundaryNoTranslation) {
  Mounts mounts = {{"/data", "/srv/data"}};
  // A longer name, or a mount path inside another path or word.
  for (const char* text : {"/data2", "/data.bak", "/data-old", "/data_x", "/dataset/f", "/x/data",
                           "$HOME/data", "x/data", "a.b/data", "~/data", "@/data", "/data*",
                           "/data$X", "/data=1", "-/data", "+/data"}) {
    EXPECT_EQ(TranslatePaths(text, mounts), text) << text;
  }
}

TEST(TranslatePathsTest, StopsAtTheBoundWithoutGoingPastIt) {
  Mounts mounts = {{"/d", "/a/long/host/path"}};  // 17 bytes for 2
  EXPECT_EQ(TranslatePaths("/d /d", mounts, 35), "/a/long/host/path /a/long/host/path");
  EXPECT_EQ(TranslatePaths("/d /d", mounts, 34), std::nullopt);
  EXPECT_EQ(TranslatePaths("/dd", mounts, 3), "/dd");
  EXPECT_EQ(TranslatePaths("/dd", mounts, 2), std::nullopt);
}

TEST(TranslatePathsTest, MultiLineScriptsAreTranslatedThroughout) {
  Mounts mounts = {{"/data", "/srv/data"}, {"/ckpt", "/srv/ckpt"}};
  std::string script =
      "set -e\n"
      "mkdir -p /ckpt\n"
      "for f in $(ls /data); do echo $f; done\n"
      "(cd /data && python train.py --out /ckpt)\n"
      "python eval.py >/ckpt/eval.txt 2>&1;cat /ckpt/eval.txt|head\n"
      "[ -d /data2 ] || echo `ls /data`\n";
  EXPECT_EQ(TranslatePaths(script, mounts),
            "set -e\n"
            "mkdir -p /srv/ckpt\n"
            "for f in $(ls /srv/data); do echo $f; done\n"
            "(cd /srv/data && python train.py --out /srv/ckpt)\n"
            "python eval.py >/srv/ckpt/eval.txt 2>&1;cat /srv/ckpt/eval.txt|head\n"
            "[ -d /data2 ] || echo `ls /srv/data`\n");
}

}  // namespace
}  // namespace trainyard::node
