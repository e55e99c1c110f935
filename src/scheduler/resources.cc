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

void Max(const Amounts& other, Amounts& into) {
  for (const auto& [name, milli] : other) into[name] = std::max(into[name], milli);
}

}  // namespace

PodResources PodResourcesOf(const api::PodSpec& spec) {
  // As Kubernetes counts a pod: the most of what runs at once, while each
  // init container runs (with the sidecars started before it) and after
  // (the containers and every sidecar).
  PodResources out, sidecars;
  Amounts init_requests, init_limits;
  for (const api::Container& c : spec.init_containers) {
    PodResources running = sidecars;
    AddContainer(c, running.requests, running.limits);
    if (c.restart_policy == "Always") sidecars = running;
    Max(running.requests, init_requests);
    Max(running.limits, init_limits);
  }
  out = sidecars;
  for (const api::Container& c : spec.containers) AddContainer(c, out.requests, out.limits);
  Max(init_requests, out.requests);
  Max(init_limits, out.limits);
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
