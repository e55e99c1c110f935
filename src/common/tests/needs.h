// A test's dependency on a program or package that scripts/install-deps.sh
// installs (torch, kubectl, promtool, ...).
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

namespace trainyard {

// Set by the test command once it has installed every dependency: a
// missing one is then a failure, so that CI never passes having run none
// of what needs it.
inline bool DependenciesRequired() {
  const char* required = std::getenv("TRAINYARD_REQUIRE_DEPS");
  return required != nullptr && std::strcmp(required, "1") == 0;
}

}  // namespace trainyard

// Skips the test (or, with TRAINYARD_REQUIRE_DEPS=1, fails it) unless
// `have`; `what` names the Debian packages. In a test body or SetUp.
#define TRAINYARD_NEEDS(have, what)                                                 \
  do {                                                                              \
    if (!(have)) {                                                                  \
      if (::trainyard::DependenciesRequired()) {                                    \
        FAIL() << "missing " << what << ", which scripts/install-deps.sh installs"; \
      }                                                                             \
      GTEST_SKIP() << "needs " << what;                                             \
    }                                                                               \
  } while (false)
