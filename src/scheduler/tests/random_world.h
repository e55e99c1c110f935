// Random clusters for the scheduler's property test: nodes, queues, quotas
// and gangs drawn from a seed, and what a decision turns them into (pods
// placed run, evicted gangs stop, some gangs end or lose a pod).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <random>
#include <string>

#include "scheduler/scheduler.h"

namespace trainyard::scheduler::testing {

inline constexpr int64_t kMi = int64_t{1} << 20;  // bytes
inline constexpr int64_t kGi = int64_t{1} << 30;
inline const std::string kGpu(kGpuResource);
inline const std::string kPods(kPodsResource);
inline const std::string kFpga = "example.com/fpga";

class Random {
 public:
  explicit Random(uint64_t seed) : rng_(seed) {}
  int64_t Between(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }
  bool Chance(int percent) { return Between(0, 99) < percent; }
  template <class T>
  T Pick(std::initializer_list<T> values) {
    return values.begin()[Between(0, static_cast<int64_t>(values.size()) - 1)];
  }

 private:
  std::mt19937_64 rng_;
};

int64_t Get(const Amounts& amounts, const std::string& key);
void Add(Amounts& to, const Amounts& amounts);

// Everything the rounds need beyond the snapshot: each pod's spec, to queue
// pods again when they stop.
struct World {
  Snapshot snapshot;
  std::map<std::string, PendingPod> specs;  // "gang/pod"
  int next_gang = 0;
};

World RandomWorld(Random& r);
// The next round's world: what decision `d` made of `before`.
World Advance(Random& r, const World& before, const Decision& d);
ScheduleOptions RandomOptions(Random& r);

}  // namespace trainyard::scheduler::testing
