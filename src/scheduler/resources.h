// Resource amounts as the scheduler counts them. Quantities are integer
// milli-units ("500m" cpu is 500, "1Gi" memory is 1073741824000); no
// floating point is involved anywhere.
//
// A pod's demand is what Kubernetes' scheduler counts: per resource, the
// sum over its containers of the request (the limit where no request is
// set), or the largest init container's, whichever is larger.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/pod.h"

namespace trainyard::scheduler {

inline constexpr std::string_view kGpuResource = "nvidia.com/gpu";
// Every pod takes one of a node's `pods` slots (110 on a default kubelet).
inline constexpr std::string_view kPodsResource = "pods";

using Amounts = std::map<std::string, int64_t>;  // resource -> milli-units

// What a pod asks for: the requests placement and queue quotas count, and
// the limits a namespace's ResourceQuota may cap as well.
struct PodResources {
  Amounts requests;
  Amounts limits;
};

PodResources PodResourcesOf(const api::PodSpec& spec);

// "2", "500m", "1.5Gi": a milli amount of `resource` written for people.
std::string FormatAmount(std::string_view resource, int64_t milli);

// Resource names interned as dense ids for one scheduling decision, so
// that node state is a flat array rather than a map of strings.
class ResourceTable {
 public:
  int Intern(const std::string& name);
  int Find(const std::string& name) const;  // -1 when unknown
  const std::string& Name(int id) const { return names_[id]; }
  int size() const { return static_cast<int>(names_.size()); }

 private:
  std::map<std::string, int, std::less<>> ids_;
  std::vector<std::string> names_;
};

// A sparse demand over interned ids, sorted by id.
using Demand = std::vector<std::pair<int, int64_t>>;

Demand ToDemand(const Amounts& amounts, ResourceTable& table);

}  // namespace trainyard::scheduler
