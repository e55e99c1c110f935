#include "common/subprocess.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace trainyard {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(SubprocessTest, LinesOfBothStreamsComeInOrderWithTheExitCode) {
  std::vector<std::string> lines;
  Result<ToolRun> run =
      RunTool({"sh", "-c", "echo one; echo two >&2; printf three; exit 3"},
              {.env = {}, .on_line = [&](std::string_view l) { lines.emplace_back(l); }});
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_EQ(run->exit_code, 3);
  EXPECT_THAT(lines, ElementsAre("one", "two", "three"));
  EXPECT_EQ(run->output, "one\ntwo\nthree");
}

TEST(SubprocessTest, TheEnvironmentIsTrainyardsWithTheGivenOnesSet) {
  Result<ToolRun> run = RunTool({"sh", "-c", "echo \"$TRAINYARD_TOOL_TEST\" \"${PATH:+path}\""},
                                {.env = {{"TRAINYARD_TOOL_TEST", "set"}}});
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->output, "set path\n");
}

TEST(SubprocessTest, AProgramThatIsNotThereIsAnErrorNamingIt) {
  Result<ToolRun> run = RunTool({"trainyard-no-such-program"});
  ASSERT_FALSE(run.ok());
  EXPECT_THAT(run.status().message(), HasSubstr("cannot run trainyard-no-such-program"));
}

TEST(SubprocessTest, ASignalIsReportedAsShellsDo) {
  Result<ToolRun> run = RunTool({"sh", "-c", "kill -TERM $$"});
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->exit_code, 128 + 15);
}

}  // namespace
}  // namespace trainyard
