#include "controller/sampler_cache.h"

#include <algorithm>

namespace trainyard::controller {

Result<std::shared_ptr<tune::Sampler>> SamplerCache::Get(const std::string& owner,
                                                         const std::string& recipe,
                                                         const Make& make) {
  {
    MutexLock lock(mu_);
    auto kept = entries_.find(owner);
    if (kept != entries_.end() && kept->second.recipe == recipe) {
      kept->second.used = ++uses_;
      return kept->second.sampler;
    }
  }
  // Made unlocked: another owner's reconcile need not wait for it.
  ASSIGN_OR_RETURN(std::unique_ptr<tune::Sampler> made, make());
  std::shared_ptr<tune::Sampler> sampler = std::move(made);
  MutexLock lock(mu_);
  if (!sampler->worth_keeping()) {
    entries_.erase(owner);  // what was kept was made from another recipe
    return sampler;
  }
  entries_[owner] = {recipe, sampler, ++uses_};
  if (entries_.size() > capacity_) {
    auto oldest = std::ranges::min_element(
        entries_, [](const auto& a, const auto& b) { return a.second.used < b.second.used; });
    entries_.erase(oldest);
  }
  return sampler;
}

size_t SamplerCache::size() const {
  MutexLock lock(mu_);
  return entries_.size();
}

}  // namespace trainyard::controller
