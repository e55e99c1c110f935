// A torchrun command on a host whose torchrun is torch 1.x under Python
// 3.11 (Debian 12): what is renamed and set, and what is left alone.
#include "node/host_torchrun.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "common/tests/test_dir.h"

namespace trainyard::node {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Pair;

// The first lines of Debian 12's /usr/bin/torchrun.
constexpr const char* kDebianTorchrun =
    "#!/usr/bin/python3.11\n"
    "# EASY-INSTALL-ENTRY-SCRIPT: 'torch==1.13.0a0+gitunknown','console_scripts','torchrun'\n"
    "import re\n";
// pip's entry script for torch 2 names no version.
constexpr const char* kPipTorchrun =
    "#!/usr/bin/python3.11\n"
    "import re\nimport sys\nfrom torch.distributed.run import main\n";

class HostTorchrunTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = FreshTestDir("trainyard-host-torchrun-test"); }
  void TearDown() override { fs::remove_all(dir_); }

  // A PATH whose torchrun begins with `text`.
  std::string PathWithTorchrun(const std::string& text) {
    std::ofstream(dir_ / "torchrun") << text;
    chmod((dir_ / "torchrun").c_str(), 0755);
    return dir_.string();
  }

  fs::path dir_;
};

TEST_F(HostTorchrunTest, DebiansTorchrunIsTorch1UnderPython311AndPipsTorch2IsNot) {
  std::string path = PathWithTorchrun(kDebianTorchrun);
  EXPECT_TRUE(IsTorch1UnderPython311(path + "/torchrun"));
  PathWithTorchrun(kPipTorchrun);
  EXPECT_FALSE(IsTorch1UnderPython311(path + "/torchrun"));
  PathWithTorchrun(
      "#!/usr/bin/python3.10\n# EASY-INSTALL-ENTRY-SCRIPT: 'torch==1.13.1','console_scripts'\n");
  EXPECT_FALSE(IsTorch1UnderPython311(path + "/torchrun")) << "3.10 parses the default";
  EXPECT_FALSE(IsTorch1UnderPython311(path + "/missing"));
  PathWithTorchrun("#!/x/python3.99999999999999999999\n# 'torch==1.13'\n");
  EXPECT_TRUE(IsTorch1UnderPython311(path + "/torchrun")) << "a long version is read, not thrown";
  PathWithTorchrun("#!/x/python3.x\n# 'torch==1.13'\n" + std::string(100000, '#'));
  EXPECT_FALSE(IsTorch1UnderPython311(path + "/torchrun"));
}

TEST_F(HostTorchrunTest, OnlyTorchrunsOwnOptionsAreRenamedNeverTheScripts) {
  std::vector<std::string> argv = {
      "torchrun",    "--nproc-per-node", "2",       "--master-port=29400",
      "--no-python", "--standalone",     "python3", "--no-python",
      "--log-dir"};
  std::vector<std::string> renamed = RenameTorch2Flags(argv);
  EXPECT_THAT(argv,
              ElementsAre("torchrun", "--nproc_per_node", "2", "--master_port=29400", "--no_python",
                          "--standalone", "python3", "--no-python", "--log-dir"));
  EXPECT_THAT(renamed, ElementsAre("--nproc-per-node as --nproc_per_node",
                                   "--master-port as --master_port", "--no-python as --no_python"));
}

TEST_F(HostTorchrunTest, AValueThatLooksLikeAFlagIsNotRenamedAndTorch2OnlyFlagsStay) {
  std::vector<std::string> argv = {"torchrun", "--rdzv-conf", "--x-y", "--local-ranks-filter",
                                   "0",        "train.py"};
  RenameTorch2Flags(argv);
  EXPECT_EQ(argv[1], "--rdzv_conf");
  EXPECT_EQ(argv[2], "--x-y") << "the value of --rdzv-conf";
  EXPECT_EQ(argv[3], "--local-ranks-filter") << "torch 1 has none: it says so itself";
  EXPECT_EQ(OptionsEnd({"torchrun", "-m", "pkg.mod", "--nnodes", "2"}), 2u);
}

TEST_F(HostTorchrunTest, UpstreamsCommandIsAdaptedAndTheStreamsGetAParsableDefault) {
  std::string path = PathWithTorchrun(kDebianTorchrun);
  std::vector<std::string> argv = {"torchrun", "--no-python", "python3", "-c", "print(1)"};
  EnvList env = {{"PATH", path}, {"PET_NNODES", "3"}};
  std::string said = AdaptTorchrunToHost(argv, env);
  EXPECT_THAT(argv, ElementsAre("torchrun", "--no_python", "python3", "-c", "print(1)"));
  EXPECT_THAT(env, ElementsAre(Pair("PATH", path), Pair("PET_NNODES", "3"),
                               Pair("PET_REDIRECTS", "9:1"), Pair("PET_TEE", "9:1")));
  EXPECT_THAT(said, HasSubstr("--no-python as --no_python, PET_REDIRECTS=9:1, PET_TEE=9:1"));
  EXPECT_THAT(said, HasSubstr(path + "/torchrun"));
}

// Kubeflow's SDK runs torchrun from a bash script: its flags are the
// script's, but the streams' default would break it all the same.
TEST_F(HostTorchrunTest, AScriptThatRunsTorchrunGetsTheStreamsVariablesOnly) {
  std::string path = PathWithTorchrun(kDebianTorchrun);
  std::vector<std::string> argv = {"bash", "-c", "pip list; torchrun --no-python train.py"};
  EnvList env = {{"PATH", path}};
  EXPECT_THAT(AdaptTorchrunToHost(argv, env), HasSubstr("adapted to it: PET_REDIRECTS=9:1"));
  EXPECT_EQ(argv[2], "pip list; torchrun --no-python train.py");
  EXPECT_THAT(
      env, ElementsAre(Pair("PATH", path), Pair("PET_REDIRECTS", "9:1"), Pair("PET_TEE", "9:1")));
}

TEST_F(HostTorchrunTest, WhatTheManifestSetsItselfIsLeftAlone) {
  std::string path = PathWithTorchrun(kDebianTorchrun);
  std::vector<std::string> argv = {"torchrun", "--tee", "3", "train.py", "--redirects"};
  EnvList env = {{"PATH", path}, {"PET_REDIRECTS", "0:3"}};
  EXPECT_THAT(AdaptTorchrunToHost(argv, env), IsEmpty());
  EXPECT_EQ(env.size(), 2u);
}

TEST_F(HostTorchrunTest, Torch2AndOtherProgramsAreNeverTouched) {
  std::string path = PathWithTorchrun(kPipTorchrun);
  std::vector<std::string> argv = {"torchrun", "--no-python", "true"};
  EnvList env = {{"PATH", path}};
  EXPECT_THAT(AdaptTorchrunToHost(argv, env), IsEmpty());
  EXPECT_EQ(argv[1], "--no-python");
  PathWithTorchrun(kDebianTorchrun);
  std::vector<std::string> python = {"python3", "--no-python"};
  EXPECT_THAT(AdaptTorchrunToHost(python, env), IsEmpty());
  EXPECT_EQ(env.size(), 1u);
}

}  // namespace
}  // namespace trainyard::node
