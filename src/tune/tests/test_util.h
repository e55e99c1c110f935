// What the tune tests build their spaces from.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "tune/space.h"

namespace trainyard::tune {

inline Parameter Double(std::string name, double min, double max,
                        Distribution distribution = Distribution::kUniform) {
  return {.name = std::move(name),
          .type = ParameterType::kDouble,
          .distribution = distribution,
          .min = min,
          .max = max};
}

// The space, failing the test when the parameters do not make one.
inline Space MakeSpace(std::vector<Parameter> parameters) {
  Result<Space> space = Space::Make(std::move(parameters));
  EXPECT_TRUE(space.ok()) << space.status().ToString();
  return std::move(*space);
}

}  // namespace trainyard::tune
