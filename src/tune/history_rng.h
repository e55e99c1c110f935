// The generator a sampler draws from: a function of the seed and how many
// trials exist, so asking again after a crash gives the same answer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>

namespace trainyard::tune {

inline std::mt19937_64 HistoryRng(uint64_t seed, size_t trials, uint64_t stream = 0) {
  std::seed_seq sequence{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32),
                         static_cast<uint32_t>(trials), static_cast<uint32_t>(stream)};
  return std::mt19937_64(sequence);
}

}  // namespace trainyard::tune
