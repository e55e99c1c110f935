#include "controller/pod_groups.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "api/json.h"
#include "api/object.h"
#include "api/reflect.h"
#include "common/strings.h"
#include "controller/owned.h"
#include "controller/replica_pod.h"

namespace trainyard::controller {
namespace {

// The value of the PriorityClass a replica's pods name; 0 for none.
int64_t PriorityOf(const store::ObjectReader& store, const api::ReplicaSpec& spec) {
  const std::string& name = spec.template_.spec.priority_class_name;
  if (name.empty()) return 0;
  Result<api::Json> pc = store.Get({"PriorityClass", "", name});
  return pc.ok() ? api::IntAt(*pc, {"value"}, 0) : 0;
}

}  // namespace

std::string FormatSum(int64_t milli, bool binary) {
  if (binary && milli % 1000 == 0 && milli > 0) {
    int64_t units = milli / 1000;
    const char* suffixes[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
    int i = 0;
    while (i < 6 && units % 1024 == 0) {
      units /= 1024;
      ++i;
    }
    return fmt::format("{}{}", units, suffixes[i]);
  }
  return Quantity::FromMilli(milli).text();
}

namespace {

// What the first `members` pods ask for, as upstream's CalcPGMinResources
// counts it.
api::Json MinResources(const api::TrainingJob& job, const store::ObjectReader& store,
                       int32_t members) {
  std::vector<std::pair<int64_t, std::string>> order;  // (-priority, type): highest first
  for (const std::string& type : job.info().replica_types) {
    const api::ReplicaSpec* spec = job.FindReplica(type);
    if (spec != nullptr) order.push_back({-PriorityOf(store, *spec), type});
  }
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::map<std::string, int64_t> milli;
  std::set<std::string> binary;  // resources written with Ki, Mi, Gi, ...
  int32_t counted = 0;
  for (const auto& [priority, type] : order) {
    for (int32_t i = 0; i < job.Replicas(type) && counted < members; ++i, ++counted) {
      for (const api::Container& c : job.FindReplica(type)->template_.spec.containers) {
        const api::ResourceList& asked =
            c.resources.requests.empty() ? c.resources.limits : c.resources.requests;
        for (const auto& [name, q] : asked) {
          milli[name] += q.milli();
          if (q.text().ends_with('i')) binary.insert(name);
        }
      }
    }
  }
  api::Json out = api::Json::object();
  for (const auto& [name, m] : milli) out[name] = FormatSum(m, binary.contains(name));
  return out;
}

}  // namespace

std::string PodGroupKind(std::string_view scheduler) {
  return scheduler == kVolcano ? "PodGroup" : "PodGroup.scheduling.x-k8s.io";
}

api::Json BuildPodGroup(const api::TrainingJob& job, const store::ObjectReader& store,
                        const api::Json* existing, std::string_view scheduler) {
  const api::SchedulingPolicy policy =
      job.spec.run_policy->scheduling_policy.value_or(api::SchedulingPolicy{});
  int32_t members = policy.min_available.value_or(job.TotalReplicas());
  api::Json min_resources = api::Json::object();
  if (policy.min_resources) {
    for (const auto& [name, q] : *policy.min_resources) min_resources[name] = q.text();
  } else {
    min_resources = MinResources(job, store, members);
  }
  api::Json group = {{"kind", "PodGroup"},
                     {"metadata",
                      {{"name", job.metadata.name},
                       {"namespace", job.metadata.namespace_},
                       {"ownerReferences", api::Json::array({api::Encode(OwnerOf(job))})}}},
                     {"spec", {{"minMember", members}, {"minResources", min_resources}}}};
  if (!job.metadata.annotations.empty())
    group["metadata"]["annotations"] = job.metadata.annotations;
  if (scheduler != kVolcano) {
    group["apiVersion"] = "scheduling.x-k8s.io/v1alpha1";
    if (policy.schedule_timeout_seconds) {
      group["spec"]["scheduleTimeoutSeconds"] = *policy.schedule_timeout_seconds;
    }
    return group;
  }
  group["apiVersion"] = "scheduling.volcano.sh/v1beta1";
  std::string queue = policy.queue;
  if (queue.empty() && existing != nullptr) queue = api::StringAt(*existing, {"spec", "queue"});
  group["spec"]["queue"] = queue.empty() ? "default" : queue;
  if (!policy.priority_class.empty()) group["spec"]["priorityClassName"] = policy.priority_class;
  return group;
}

Result<bool> ReconcilePodGroup(store::ObjectStore& store, const api::TrainingJob& job,
                               std::string_view scheduler) {
  // Only Volcano's pods wait for their group to be let in; a coscheduling
  // scheduler holds pods that exist.
  bool delayed = scheduler == kVolcano;
  Result<api::Json> have =
      store.Get({PodGroupKind(scheduler), job.metadata.namespace_, job.metadata.name});
  if (have.status().code() == StatusCode::kNotFound) {
    Result<api::Json> created = store.Create(BuildPodGroup(job, store, nullptr, scheduler));
    if (!created.ok() && created.status().code() != StatusCode::kAlreadyExists) {
      return created.status();
    }
    return !delayed;
  }
  RETURN_IF_ERROR(have.status());
  api::Json want = BuildPodGroup(job, store, &*have, scheduler);
  if (api::ObjectAt(*have, "spec") != want["spec"]) {
    (*have)["spec"] = want["spec"];
    RETURN_IF_ERROR(store.Update(*have).status());
  }
  std::string phase = api::StringAt(*have, {"status", "phase"});
  return !delayed || (!phase.empty() && phase != "Pending");
}

std::optional<std::string> DecorateGangPod(const api::TrainingJob& job,
                                           const frameworks::ReplicaRef& replica, api::Pod& pod,
                                           std::string_view scheduler) {
  std::optional<std::string> warning;
  if (pod.spec.scheduler_name.empty()) {
    pod.spec.scheduler_name = std::string(scheduler);
  } else if (pod.spec.scheduler_name != scheduler) {
    warning = fmt::format(
        "{} {}'s {} pods name the scheduler {:?}, not the gang scheduler {:?}: kept, and they are "
        "not scheduled as a gang",
        job.info().name, job.metadata.name, replica.type, pod.spec.scheduler_name, scheduler);
  }
  if (scheduler != kVolcano) {
    pod.metadata.labels[std::string(kPodGroupLabel)] = job.metadata.name;
    return warning;
  }
  pod.metadata.annotations["scheduling.k8s.io/group-name"] = job.metadata.name;
  pod.metadata.annotations["volcano.sh/task-spec"] = AsciiLower(replica.type);
  return warning;
}

Status DeletePodGroup(store::ObjectStore& store, const api::TrainingJob& job,
                      std::string_view scheduler) {
  return DeleteIfPresent(store,
                         {PodGroupKind(scheduler), job.metadata.namespace_, job.metadata.name});
}

}  // namespace trainyard::controller
