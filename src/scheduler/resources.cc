#include "scheduler/resources.h"

#include <fmt/format.h>

#include <algorithm>

namespace trainyard::scheduler {
namespace {

// Requests win over limits; a limit alone stands for the request, as in
// Kubernetes' defaulting.
void AddContainer(const api::Container& c, Amounts& requests, Amounts& limits) {
  Amounts mine;
  for (const auto& [name, q] : c.resources.limits) {
    mine[name] = q.milli();
    limits[name] += q.milli();
  }
  for (const auto& [name, q] : c.resources.requests) mine[name] = q.milli();
  for (const auto& [name, milli] : mine) requests[name] += milli;
}

void MaxInitContainer(const api::Container& c, Amounts& requests, Amounts& limits) {
  Amounts mine_requests, mine_limits;
  AddContainer(c, mine_requests, mine_limits);
  for (const auto& [name, milli] : mine_requests) requests[name] = std::max(requests[name], milli);
  for (const auto& [name, milli] : mine_limits) limits[name] = std::max(limits[name], milli);
}

}  // namespace

PodResources PodResourcesOf(const api::PodSpec& spec) {
  PodResources out;
  for (const api::Container& c : spec.containers) AddContainer(c, out.requests, out.limits);
  for (const api::Container& c : spec.init_containers)
    MaxInitContainer(c, out.requests, out.limits);
  std::erase_if(out.requests, [](const auto& entry) { return entry.second == 0; });
  std::erase_if(out.limits, [](const auto& entry) { return entry.second == 0; });
  return out;
}

std::string FormatAmount(std::string_view resource, int64_t milli) {
  if (resource == "memory" || resource.ends_with(".memory") || resource == "ephemeral-storage") {
    static constexpr std::pair<const char*, int64_t> kUnits[] = {
        {"Ti", 1LL << 40}, {"Gi", 1LL << 30}, {"Mi", 1LL << 20}, {"Ki", 1LL << 10}};
    int64_t bytes = milli / 1000;
    for (const auto& [suffix, size] : kUnits) {
      if (bytes < size) continue;
      if (bytes % size == 0) return fmt::format("{}{}", bytes / size, suffix);
      return fmt::format("{:.1f}{}", static_cast<double>(bytes) / size, suffix);
    }
    return std::to_string(bytes);
  }
  if (milli % 1000 != 0) return fmt::format("{}m", milli);
  return std::to_string(milli / 1000);
}

int ResourceTable::Intern(const std::string& name) {
  auto [it, inserted] = ids_.emplace(name, static_cast<int>(names_.size()));
  if (inserted) names_.push_back(name);
  return it->second;
}

int ResourceTable::Find(const std::string& name) const {
  auto it = ids_.find(name);
  return it == ids_.end() ? -1 : it->second;
}

Demand ToDemand(const Amounts& amounts, ResourceTable& table) {
  Demand out;
  for (const auto& [name, milli] : amounts) {
    if (milli != 0) out.emplace_back(table.Intern(name), milli);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace trainyard::scheduler
