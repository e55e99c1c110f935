// A fresh, empty directory for the running test, under the system's temp
// directory and named by `prefix`, this process and the test, so that test
// binaries run side by side (ctest -j) never share one. The fixture
// removes it in TearDown. Anyone may write in it (sticky, as /tmp is):
// the replicas of a root trainyard run as nobody.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace trainyard {

inline std::filesystem::path FreshTestDir(const std::string& prefix) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() /
                              (prefix + "-" + std::to_string(getpid()) + "-" +
                               ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::filesystem::permissions(dir,
                               std::filesystem::perms::all | std::filesystem::perms::sticky_bit);
  return dir;
}

}  // namespace trainyard
