// Samplers kept between reconciles, one per experiment (or optimization
// job), where keeping one saves time and changes no answer
// (tune::Sampler::worth_keeping: a GP's fit at 1,000 trials takes 0.1 s
// made anew, 20-30 ms kept). Bounded: the least recently used goes first.
// The cache is thread-safe; a sampler it gives is not: one owner's
// reconciles must not overlap (a reconciler's queue runs one at a time).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "common/mutex.h"
#include "common/status.h"
#include "tune/sampler.h"

namespace trainyard::controller {

class SamplerCache {
 public:
  using Make = std::function<Result<std::unique_ptr<tune::Sampler>>()>;
  explicit SamplerCache(size_t capacity = 32) : capacity_(capacity) {}

  // The sampler kept for `owner` (a uid) when it was made from the same
  // `recipe` (what the sampler is made from: its space and settings, as
  // text), else one `make` makes, kept when it is worth keeping.
  Result<std::shared_ptr<tune::Sampler>> Get(const std::string& owner, const std::string& recipe,
                                             const Make& make);
  size_t size() const;

 private:
  struct Entry {
    std::string recipe;
    std::shared_ptr<tune::Sampler> sampler;
    uint64_t used = 0;
  };
  const size_t capacity_;
  mutable Mutex mu_;
  std::map<std::string, Entry> entries_ TRAINYARD_GUARDED_BY(mu_);
  uint64_t uses_ TRAINYARD_GUARDED_BY(mu_) = 0;
};

}  // namespace trainyard::controller
