#include "controller/trainjob_pod_group.h"

#include <map>
#include <set>
#include <string>

#include "api/well_known.h"
#include "common/quantity.h"
#include "controller/pod_groups.h"

namespace trainyard::controller {
namespace {

using api::Json;

// What one pod asks for: its containers' requests summed, each at least
// what any one init container asks (Kubernetes' effective request).
std::map<std::string, Quantity> PodRequests(const Json& pod_spec, std::set<std::string>& binary) {
  auto asked = [&](const Json& container) {
    std::map<std::string, Quantity> out;
    const Json& resources = api::ObjectAt(container, {"resources"});
    const Json& requests = api::ObjectAt(resources, {"requests"});
    const Json& list = requests.empty() ? api::ObjectAt(resources, {"limits"}) : requests;
    for (const auto& [name, value] : list.items()) {
      if (!value.is_string()) continue;
      Result<Quantity> q = Quantity::Parse(value.get<std::string>());
      if (!q.ok()) continue;  // refused by validation already
      out[name] = *q;
      if (q->text().ends_with('i')) binary.insert(name);
    }
    return out;
  };
  std::map<std::string, Quantity> sum;
  for (const Json& c : api::ArrayRefAt(pod_spec, {"containers"})) {
    for (const auto& [name, q] : asked(c)) {
      sum[name] = Quantity::FromMilli(sum[name].milli() + q.milli());
    }
  }
  for (const Json& c : api::ArrayRefAt(pod_spec, {"initContainers"})) {
    for (const auto& [name, q] : asked(c)) {
      if (q.milli() > sum[name].milli()) sum[name] = q;
    }
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
    for (const auto& [name, q] : PodRequests(pod, binary)) {
      int64_t total = 0;
      overflow = overflow || __builtin_mul_overflow(q.milli(), pods, &total) ||
                 __builtin_add_overflow(milli[name], total, &milli[name]);
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
