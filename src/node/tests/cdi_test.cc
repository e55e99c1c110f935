#include "node/cdi.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "common/tests/test_dir.h"

namespace trainyard::node {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

// A spec as `nvidia-ctk cdi generate` writes it, cut to two GPUs.
constexpr char kNvidia[] = R"(cdiVersion: 0.5.0
kind: nvidia.com/gpu
devices:
  - name: "0"
    containerEdits:
      deviceNodes: [{path: /dev/nvidia0}]
  - name: "1"
    containerEdits:
      deviceNodes: [{path: /dev/nvidia1}]
  - name: GPU-4f1a
    containerEdits:
      deviceNodes: [{path: /dev/nvidia1}]
containerEdits:
  env: [NVIDIA_VISIBLE_DEVICES=void]
  deviceNodes: [{path: /dev/nvidiactl}, {path: /dev/nvidia-uvm, hostPath: /dev/nvidia-uvm}]
  mounts:
    - {hostPath: /usr/lib/x86_64-linux-gnu/libcuda.so.535.104.05, containerPath: /usr/lib/x86_64-linux-gnu/libcuda.so.535.104.05, options: [ro, nosuid, nodev, bind]}
    - {hostPath: /run/nvidia-persistenced/socket, containerPath: /run/nvidia-persistenced/socket, options: [rw, bind]}
  hooks:
    - {hookName: createContainer, path: /usr/bin/nvidia-ctk, args: [nvidia-ctk, hook, create-symlinks, --link, libcuda.so.535.104.05::/usr/lib/x86_64-linux-gnu/libcuda.so.1]}
    - {hookName: createContainer, path: /usr/bin/nvidia-ctk, args: [nvidia-ctk, hook, update-ldcache, --folder, /usr/lib/x86_64-linux-gnu]}
)";

class CdiTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = FreshTestDir("trainyard-cdi"); }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Write(const std::string& sub, const std::string& name, const std::string& text) {
    fs::create_directories(dir_ / sub);
    std::ofstream(dir_ / sub / name) << text;
    return (dir_ / sub).string();
  }
  fs::path dir_;
};

TEST_F(CdiTest, AGpusEditsAreItsDevicesWithTheSpecsCommonEditsOnce) {
  std::string etc = Write("etc", "nvidia.yaml", kNvidia);
  Result<CdiEdits> edits =
      CdiEditsFor({etc, (dir_ / "run").string()}, "nvidia.com/gpu", {"0", "1"});
  ASSERT_TRUE(edits.ok()) << edits.status().ToString();
  EXPECT_THAT(edits->env, ElementsAre(Pair("NVIDIA_VISIBLE_DEVICES", "void")));
  std::vector<std::string> nodes;
  for (const CdiDeviceNode& n : edits->device_nodes) nodes.push_back(n.path);
  EXPECT_THAT(nodes,
              ElementsAre("/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia0", "/dev/nvidia1"));
  ASSERT_EQ(edits->mounts.size(), 2u);
  EXPECT_TRUE(edits->mounts[0].read_only);
  EXPECT_FALSE(edits->mounts[1].read_only);  // rw
  EXPECT_THAT(edits->symlinks,
              ElementsAre(Pair("libcuda.so.535.104.05", "/usr/lib/x86_64-linux-gnu/libcuda.so.1")));
  EXPECT_THAT(edits->library_dirs, ElementsAre("/usr/lib/x86_64-linux-gnu"));
  // Device nodes are bound with their device files working; mounts as the
  // spec says.
  Mounts mounts = CdiMounts(*edits);
  ASSERT_EQ(mounts.size(), 6u);
  EXPECT_TRUE(mounts[2].devices);
  EXPECT_EQ(mounts[2].host_path, "/dev/nvidia0");
  EXPECT_TRUE(mounts[4].read_only);
}

TEST_F(CdiTest, ALaterFolderReplacesADeviceAndOtherKindsAreNotRead) {
  std::string etc = Write("etc", "nvidia.yaml", kNvidia);
  std::string run =
      Write("run", "nvidia.json",
            R"({"cdiVersion": "0.6.0", "kind": "nvidia.com/gpu", "devices": [)"
            R"({"name": "0", "containerEdits": {"deviceNodes": [{"path": "/dev/other0"}]}}]})");
  Write("run", "vendor.yaml",
        "cdiVersion: 0.6.0\nkind: vendor.com/nic\ndevices: [{name: \"0\"}]\n");
  Write("run", "notes.txt", "not a spec");
  Result<CdiEdits> edits = CdiEditsFor({etc, run}, "nvidia.com/gpu", {"0"});
  ASSERT_TRUE(edits.ok()) << edits.status().ToString();
  ASSERT_FALSE(edits->device_nodes.empty());
  EXPECT_EQ(edits->device_nodes.back().path, "/dev/other0");
  EXPECT_TRUE(edits->env.empty());  // the later spec has no common edits
}

TEST_F(CdiTest, NoSpecAMissingDeviceAndAnUnknownHookAreSaid) {
  Result<CdiEdits> none = CdiEditsFor({(dir_ / "etc").string()}, "nvidia.com/gpu", {"0"});
  EXPECT_EQ(none.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(none.status().message(), HasSubstr("nvidia-ctk cdi generate"));
  std::string etc = Write("etc", "nvidia.yaml", kNvidia);
  Result<CdiEdits> missing = CdiEditsFor({etc}, "nvidia.com/gpu", {"7"});
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("CDI device nvidia.com/gpu=7 is in no spec"));
  Write("etc", "nvidia.yaml",
        "cdiVersion: 0.5.0\nkind: nvidia.com/gpu\ndevices: [{name: \"0\"}]\n"
        "containerEdits:\n  hooks: [{hookName: createContainer, path: /usr/bin/nvidia-ctk, "
        "args: [nvidia-ctk, hook, chmod, --mode, \"755\"]}]\n");
  Result<CdiEdits> hook = CdiEditsFor({etc}, "nvidia.com/gpu", {"0"});
  EXPECT_EQ(hook.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(hook.status().message(),
              HasSubstr("asks for a hook trainyard does not run: /usr/bin/nvidia-ctk nvidia-ctk "
                        "hook chmod --mode 755"));
  Write("etc", "nvidia.yaml", "kind: [unclosed");
  EXPECT_EQ(CdiEditsFor({etc}, "nvidia.com/gpu", {"0"}).status().code(),
            StatusCode::kInvalidArgument);
}

TEST_F(CdiTest, TheEnvIsSetAndTheLibraryFoldersComeFirst) {
  CdiEdits edits{.env = {{"NVIDIA_VISIBLE_DEVICES", "void"}}, .library_dirs = {"/usr/lib/nv"}};
  std::vector<std::pair<std::string, std::string>> env = {{"NVIDIA_VISIBLE_DEVICES", "all"},
                                                          {"LD_LIBRARY_PATH", "/opt/lib"}};
  ApplyCdiEnv(edits, env);
  EXPECT_THAT(env, ElementsAre(Pair("NVIDIA_VISIBLE_DEVICES", "void"),
                               Pair("LD_LIBRARY_PATH", "/usr/lib/nv:/opt/lib")));
}

TEST_F(CdiTest, SymlinksAreMadeInTheWritableLayerWithPassableFolders) {
  ImageRoot root{.layers = {(dir_ / "layer").string()}, .upper = (dir_ / "upper").string()};
  fs::create_directories(dir_ / "layer");
  fs::create_directories(dir_ / "upper");
  CdiEdits edits{.symlinks = {{"libcuda.so.535", "/usr/lib/x86_64-linux-gnu/libcuda.so.1"}}};
  ASSERT_TRUE(MakeCdiSymlinks(edits, root).ok());
  fs::path link = dir_ / "upper/usr/lib/x86_64-linux-gnu/libcuda.so.1";
  EXPECT_EQ(fs::read_symlink(link), "libcuda.so.535");
  EXPECT_EQ(fs::status(dir_ / "upper/usr/lib").permissions(), fs::perms(0755));
  CdiEdits bad{.symlinks = {{"x", "../escape"}}};
  EXPECT_EQ(MakeCdiSymlinks(bad, root).code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace trainyard::node
