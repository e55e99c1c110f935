#include "runtime/local/log_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "common/tests/test_dir.h"

namespace trainyard::runtime {
namespace {

TEST(LogFileTest, EachRunIsItsOwnSpanOfTheOneFile) {
  std::filesystem::path dir = FreshTestDir("trainyard-log-file-test");
  std::string log = (dir / "p_c.log").string();
  std::ofstream(log) << "first run\n";
  EXPECT_EQ(RunSpan(log, false)->begin, 0);
  EXPECT_EQ(RunSpan(log, false)->end, -1);
  EXPECT_EQ(RunSpan(log, true).status().code(), StatusCode::kNotFound);
  // No index until a restart: a container that never restarts costs one file.
  EXPECT_FALSE(std::filesystem::exists(log + ".runs"));

  ASSERT_TRUE(MarkNewRun(log).ok());
  std::ofstream(log, std::ios::app) << "second\n";
  ASSERT_TRUE(MarkNewRun(log).ok());
  std::ofstream(log, std::ios::app) << "third\n";
  LogSpan current = *RunSpan(log, false);
  LogSpan previous = *RunSpan(log, true);
  EXPECT_EQ(current.begin, 17);  // "first run\nsecond\n"
  EXPECT_EQ(current.end, -1);
  EXPECT_EQ(previous.begin, 10);
  EXPECT_EQ(previous.end, 17);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace trainyard::runtime
