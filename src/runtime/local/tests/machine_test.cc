// Machine discovery, with a stand-in nvidia-smi on PATH: the real one needs
// a GPU, and CI machines have none.
#include "runtime/local/machine.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "common/tests/test_dir.h"

namespace trainyard::runtime {
namespace {

namespace fs = std::filesystem;

class MachineTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = FreshTestDir("trainyard-machine-test"); }
  void TearDown() override { fs::remove_all(dir_); }
  void FakeNvidiaSmi(const std::string& script) {
    fs::path smi = dir_ / "nvidia-smi";
    std::ofstream(smi) << "#!/bin/sh\n" << script;
    fs::permissions(smi, fs::perms::owner_all);
  }
  std::string Path() const { return dir_.string() + ":/usr/bin:/bin"; }
  fs::path dir_;
};

TEST_F(MachineTest, ReadsGpusFromNvidiaSmi) {
  FakeNvidiaSmi(
      "echo '0, GPU-aaa, NVIDIA H100 80GB HBM3'\n"
      "echo '1, GPU-bbb, NVIDIA H100 80GB HBM3'\n");
  MachineFacts facts = DiscoverMachine(Path());
  ASSERT_EQ(facts.gpus.size(), 2u);
  EXPECT_EQ(facts.gpus[1].index, "1");
  EXPECT_EQ(facts.gpus[1].uuid, "GPU-bbb");
  EXPECT_EQ(facts.gpus[1].name, "NVIDIA H100 80GB HBM3");
  EXPECT_GE(facts.cpus, 1);
  EXPECT_GT(facts.memory_bytes, 0);
}

TEST_F(MachineTest, AFailingNvidiaSmiMeansNoGpusAndSaysWhy) {
  FakeNvidiaSmi(
      "echo 'NVIDIA-SMI has failed because it could not communicate with the driver'\n"
      "exit 9\n");
  MachineFacts facts = DiscoverMachine(Path());
  EXPECT_TRUE(facts.gpus.empty());
  EXPECT_THAT(facts.gpu_note, ::testing::HasSubstr("could not communicate with the driver"));
}

TEST_F(MachineTest, NoNvidiaSmiMeansNoGpus) {
  MachineFacts facts = DiscoverMachine(dir_.string());
  EXPECT_TRUE(facts.gpus.empty());
  EXPECT_TRUE(facts.gpu_note.empty());
}

TEST(ParseNvidiaSmiTest, SkipsWhatIsNotAGpuLine) {
  std::vector<Gpu> gpus = ParseNvidiaSmi("WARNING: something\n\n3, GPU-x, A100\n");
  ASSERT_EQ(gpus.size(), 1u);
  EXPECT_EQ(gpus[0].index, "3");
}

}  // namespace
}  // namespace trainyard::runtime
