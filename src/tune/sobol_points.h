// The Sobol' sequence in the unit cube (Boost.Random's, Joe and Kuo's
// direction numbers), from a given index on: the `sobol` algorithm's points,
// and bayesianoptimization's initial design. Internal to tune/.
#pragma once

#include <boost/random/sobol.hpp>
#include <cstddef>
#include <cstdint>

#include "tune/space.h"

namespace trainyard::tune {

// Boost's table of direction numbers ends at this many dimensions.
inline constexpr size_t kMaxSobolDimensions = 3667;

class SobolPoints {
 public:
  // `dimensions` in [1, kMaxSobolDimensions]; the first point is the
  // sequence's `first` (Boost's sequence starts after the origin).
  SobolPoints(size_t dimensions, uint64_t first) : engine_(dimensions), dimensions_(dimensions) {
    engine_.discard(first * dimensions);
  }

  Point Next() {
    Point unit(dimensions_);
    // The engine gives integers in [0, 2^64); 2^-64 maps them into [0, 1).
    for (double& u : unit) u = static_cast<double>(engine_()) * 0x1p-64;
    return unit;
  }

 private:
  boost::random::sobol engine_;
  size_t dimensions_;
};

}  // namespace trainyard::tune
