#include "controller/trainjob_pod_group.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "api/well_known.h"
#include "common/quantity.h"
#include "controller/pod_groups.h"

namespace trainyard::controller {
namespace {

using api::Json;

// What one pod asks for: its containers' requests summed (a resource's
// limit where it requests none of it, as Kubernetes defaults it), each at
// least what any one init container asks (Kubernetes' effective request).
// Sums past what int64 milli-units hold set `overflow`.
std::map<std::string, int64_t> PodRequests(const Json& pod_spec, std::set<std::string>& binary,
                                           bool& overflow) {
  auto asked = [&](const Json& container) {
    std::map<std::string, int64_t> out;
    const Json& resources = api::ObjectAt(container, {"resources"});
    for (const char* section : {"limits", "requests"}) {  // requests win
      for (const auto& [name, value] : api::ObjectAt(resources, {section}).items()) {
        if (!value.is_string()) continue;
        Result<Quantity> q = Quantity::Parse(value.get<std::string>());
        if (!q.ok()) continue;  // refused by validation already
        out[name] = q->milli();
        if (q->text().ends_with('i')) binary.insert(name);
      }
    }
    return out;
  };
  std::map<std::string, int64_t> sum;
  for (const Json& c : api::ArrayRefAt(pod_spec, {"containers"})) {
    for (const auto& [name, milli] : asked(c)) {
      overflow = __builtin_add_overflow(sum[name], milli, &sum[name]) || overflow;
    }
  }
  for (const Json& c : api::ArrayRefAt(pod_spec, {"initContainers"})) {
    for (const auto& [name, milli] : asked(c)) sum[name] = std::max(sum[name], milli);
  }
  return sum;
}

}  // namespace

std::optional<Json> BuildTrainJobPodGroup(const TrainJobSource& job,
                                          const api::TrainingRuntimeSpec& runtime,
                                          const Json& jobset) {
  if (!runtime.pod_group_policy) return std::nullopt;
  const api::PodGroupPolicy& policy = *runtime.pod_group_policy;
  if (!policy.coscheduling && !policy.volcano) return std::nullopt;
  int64_t members = 0;
  std::map<std::string, int64_t> milli;
  std::set<std::string> binary;
  bool overflow = false;
  for (const Json& rjob : api::ArrayRefAt(jobset, {"spec", "replicatedJobs"})) {
    int64_t pods = api::IntAt(rjob, {"replicas"}, 1) *
                   api::IntAt(rjob, {"template", "spec", "parallelism"}, 1);  // each ≤ 100000
    members += pods;
    const Json& pod = api::ObjectAt(rjob, {"template", "spec", "template", "spec"});
    for (const auto& [name, each] : PodRequests(pod, binary, overflow)) {
      int64_t total = 0;
      overflow = __builtin_mul_overflow(each, pods, &total) ||
                 __builtin_add_overflow(milli[name], total, &milli[name]) || overflow;
    }
  }
  Json spec = {{"minMember", members}};
  // Too much to write as a quantity: left out rather than wrapped around.
  if (!overflow) {
    for (const auto& [name, m] : milli)
      spec["minResources"][name] = FormatSum(m, binary.contains(name));
  }
  Json group = {{"kind", "PodGroup"},
                {"metadata",
                 {{"name", job.meta.name},
                  {"namespace", job.meta.namespace_},
                  {"ownerReferences", Json::array({OwnerReferenceTo(job)})}}}};
  if (policy.coscheduling) {
    group["apiVersion"] = "scheduling.x-k8s.io/v1alpha1";
    spec["scheduleTimeoutSeconds"] = policy.coscheduling->schedule_timeout_seconds.value_or(60);
  } else {
    group["apiVersion"] = "scheduling.volcano.sh/v1beta1";
    if (!policy.volcano->network_topology.is_null()) {
      spec["networkTopology"] = policy.volcano->network_topology;
    }
  }
  group["spec"] = std::move(spec);
  return group;
}

}  // namespace trainyard::controller
