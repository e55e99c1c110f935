#include "common/tests/needs.h"

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>
#include <stdlib.h>

namespace trainyard {
namespace {

void NeedsWhatIsMissing() { TRAINYARD_NEEDS(false, "python3-nothing"); }

// The test command's runs: a missing dependency fails the test, naming it.
TEST(NeedsTest, AMissingDependencyFailsWhenDependenciesAreRequired) {
  const char* before = std::getenv("TRAINYARD_REQUIRE_DEPS");
  setenv("TRAINYARD_REQUIRE_DEPS", "1", 1);
  EXPECT_FATAL_FAILURE(NeedsWhatIsMissing(),
                       "missing python3-nothing, which scripts/install-deps.sh installs");
  setenv("TRAINYARD_REQUIRE_DEPS", "0", 1);
  EXPECT_FALSE(DependenciesRequired());
  if (before != nullptr) {
    setenv("TRAINYARD_REQUIRE_DEPS", before, 1);
  } else {
    unsetenv("TRAINYARD_REQUIRE_DEPS");
  }
}

}  // namespace
}  // namespace trainyard
