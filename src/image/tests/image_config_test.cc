#include "image/image_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace trainyard::image {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Env = std::vector<std::pair<std::string, std::string>>;

ImageConfig Config() {
  Result<ImageConfig> config = ParseImageConfig(api::Json::parse(R"({
    "architecture": "amd64", "os": "linux",
    "config": {"Entrypoint": ["/bin/sh"], "Cmd": ["/app/run.sh", "--fast"],
               "Env": ["PATH=/usr/bin:/bin", "GREETING=hi", "BARE"],
               "WorkingDir": "/app", "User": "1000:1000"}})"));
  EXPECT_TRUE(config.ok()) << config.status().ToString();
  return *config;
}

TEST(ImageConfigTest, TheConfigsProcessFieldsAreRead) {
  ImageConfig config = Config();
  EXPECT_THAT(config.entrypoint, ElementsAre("/bin/sh"));
  EXPECT_THAT(config.cmd, ElementsAre("/app/run.sh", "--fast"));
  EXPECT_EQ(config.env, (Env{{"PATH", "/usr/bin:/bin"}, {"GREETING", "hi"}, {"BARE", ""}}));
  EXPECT_EQ(config.working_dir, "/app");
  EXPECT_EQ(config.user, "1000:1000");
  EXPECT_EQ(config.architecture, "amd64");
}

TEST(ImageConfigTest, AWronglyTypedFieldIsRefused) {
  Result<ImageConfig> config =
      ParseImageConfig(api::Json::parse(R"({"config": {"Cmd": "/app/run.sh"}})"));
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(config.status().message(), HasSubstr("Cmd is not a list of strings"));
}

TEST(ImageConfigTest, CommandAndArgsFollowKubernetesRules) {
  ImageConfig image = Config();
  EXPECT_THAT(*ContainerArgv(image, {}, {}), ElementsAre("/bin/sh", "/app/run.sh", "--fast"));
  EXPECT_THAT(*ContainerArgv(image, {"python3"}, {}), ElementsAre("python3"));
  EXPECT_THAT(*ContainerArgv(image, {}, {"/other.sh"}), ElementsAre("/bin/sh", "/other.sh"));
  EXPECT_THAT(*ContainerArgv(image, {"python3"}, {"train.py"}), ElementsAre("python3", "train.py"));
  Result<std::vector<std::string>> nothing = ContainerArgv(ImageConfig{}, {}, {});
  ASSERT_FALSE(nothing.ok());
  EXPECT_THAT(nothing.status().message(), HasSubstr("no Entrypoint or Cmd"));
}

TEST(ImageConfigTest, TheContainersEnvIsOverTheImages) {
  EXPECT_EQ(MergedEnv(Config(), {{"EXTRA", "1"}, {"GREETING", "hello"}, {"GREETING", "last"}}),
            (Env{{"PATH", "/usr/bin:/bin"}, {"GREETING", "last"}, {"BARE", ""}, {"EXTRA", "1"}}));
}

TEST(ImageConfigTest, TheWorkingDirectoryIsTheContainersThenTheImagesThenRoot) {
  EXPECT_EQ(WorkingDirOf(Config(), "/work"), "/work");
  EXPECT_EQ(WorkingDirOf(Config(), ""), "/app");
  EXPECT_EQ(WorkingDirOf(ImageConfig{}, ""), "/");
}

}  // namespace
}  // namespace trainyard::image
