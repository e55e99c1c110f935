#include "scheduler/fit.h"

#include <fmt/format.h>

#include <algorithm>

namespace trainyard::scheduler {
namespace {

Amounts ContainerDemand(const api::Container& c) {
  Amounts out;
  for (const auto& [name, q] : c.resources.limits) out[name] = q.milli();
  for (const auto& [name, q] : c.resources.requests) out[name] = q.milli();  // requests win
  return out;
}

int64_t Whole(int64_t milli) { return (milli + 999) / 1000; }

}  // namespace

Amounts PodDemandOf(const api::PodSpec& spec) {
  Amounts sum;
  for (const api::Container& c : spec.containers) {
    for (const auto& [name, milli] : ContainerDemand(c)) sum[name] += milli;
  }
  for (const api::Container& c : spec.init_containers) {
    for (const auto& [name, milli] : ContainerDemand(c)) sum[name] = std::max(sum[name], milli);
  }
  std::erase_if(sum, [](const auto& entry) { return entry.second == 0; });
  return sum;
}

GangFit FitGang(const Machine& machine, const InUse& in_use, const std::vector<PodDemand>& gang) {
  GangFit fit;
  Amounts total;
  for (const PodDemand& pod : gang) {
    for (const auto& [name, milli] : pod.amounts) total[name] += milli;
  }
  // First what could never fit, then what does not fit now: the first is
  // the more useful thing to say.
  for (const auto& [name, milli] : total) {
    auto cap = machine.capacity.find(name);
    int64_t capacity = cap == machine.capacity.end() ? 0 : cap->second;
    if (milli > capacity) {
      fit.ever_fits = false;
      fit.reason = fmt::format("needs {} {}, this machine has {}", FormatAmount(name, milli), name,
                               FormatAmount(name, capacity));
      return fit;
    }
  }
  for (const auto& [name, milli] : total) {
    int64_t capacity = machine.capacity.at(name);
    auto used = in_use.amounts.find(name);
    int64_t free = capacity - (used == in_use.amounts.end() ? 0 : used->second);
    if (milli > free) {
      fit.reason =
          fmt::format("insufficient {}: needs {}, {} of {} free", name, FormatAmount(name, milli),
                      FormatAmount(name, std::max<int64_t>(0, free)), FormatAmount(name, capacity));
      return fit;
    }
  }
  // Whole GPUs, lowest free indices first, pod by pod.
  std::vector<std::string> free_gpus;
  for (const std::string& id : machine.gpus) {
    if (!in_use.gpus.contains(id)) free_gpus.push_back(id);
  }
  size_t next = 0;
  for (const PodDemand& pod : gang) {
    auto it = pod.amounts.find(std::string(kGpuResource));
    int64_t count = it == pod.amounts.end() ? 0 : Whole(it->second);
    std::vector<std::string>& mine = fit.gpus[pod.name];
    for (int64_t i = 0; i < count && next < free_gpus.size(); ++i)
      mine.push_back(free_gpus[next++]);
  }
  fit.fits = true;
  return fit;
}

}  // namespace trainyard::scheduler
