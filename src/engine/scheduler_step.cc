#include "engine/scheduler_step.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "api/pod_object.h"
#include "api/scheduling.h"
#include "controller/events.h"
#include "scheduler/quota.h"

namespace trainyard::engine {
namespace {

using api::Json;

bool IsTerminal(const Json& pod) {
  auto status = pod.find("status");
  if (status == pod.end() || !status->is_object()) return false;
  auto phase = status->find("phase");
  return phase != status->end() && (*phase == "Succeeded" || *phase == "Failed");
}

bool IsBound(const Json& pod) {
  auto spec = pod.find("spec");
  if (spec == pod.end() || !spec->is_object()) return false;
  auto node = spec->find("nodeName");
  return node != spec->end() && node->is_string() && !node->get_ref<const std::string&>().empty();
}

Status IgnoreNotFound(const Status& status) {
  return status.code() == StatusCode::kNotFound ? OkStatus() : status;
}

std::string Where(const scheduler::Gang& gang) {
  return gang.cluster_queue.empty() ? "the queue" : "ClusterQueue " + gang.cluster_queue;
}

// Whether the reason is one a person has to act on.
bool IsWarning(const std::string& reason) {
  return reason == scheduler::kReasonExceedsCapacity || reason == scheduler::kReasonInadmissible;
}

Status RecordOnOwner(store::ObjectStore& store, const Clock& clock, const Json& owner,
                     const std::string& type, const std::string& reason,
                     const std::string& message) {
  api::ObjectMeta meta;
  FieldErrors ignored;
  api::Decode(owner.value("metadata", Json::object()), FieldPath("metadata"), meta, ignored);
  controller::InvolvedObject involved{owner.value("apiVersion", ""), owner.value("kind", ""),
                                      &meta};
  return controller::RecordEvent(store, clock, involved, type, reason, message);
}

}  // namespace

Status SchedulerStep::Sync() {
  // Most steps have nothing to decide: find that out before reading more.
  bool any_pending = false;
  size_t bound = 0;
  RETURN_IF_ERROR(options_.store->Scan("Pod", "", [&](const Json& pod) {
    if (IsTerminal(pod)) return;
    if (IsBound(pod)) {
      ++bound;
    } else {
      any_pending = true;
    }
  }));
  if (!any_pending && synced_once_ && bound == last_bound_) return OkStatus();
  synced_once_ = true;
  ASSIGN_OR_RETURN(ClusterSnapshot cluster,
                   ReadClusterSnapshot(*options_.store, options_.nodes, options_.clock->Now()));
  // Gangs that cannot be considered (a missing PriorityClass or queue)
  // keep what they run and wait with their problem.
  for (scheduler::Gang& gang : cluster.snapshot.gangs) {
    if (!cluster.sources[gang.id].problem.empty()) gang.pending.clear();
  }
  scheduler::Decision decision =
      scheduler::Schedule(cluster.snapshot, {{.policy = options_.policy}});
  RETURN_IF_ERROR(Apply(cluster, decision));
  RETURN_IF_ERROR(WriteStatuses(cluster, decision));
  last_bound_ = bound + decision.placements.size();
  return OkStatus();
}

Status SchedulerStep::Apply(ClusterSnapshot& cluster, const scheduler::Decision& decision) {
  std::map<std::string, const scheduler::Gang*> gangs;
  for (const scheduler::Gang& gang : cluster.snapshot.gangs) gangs[gang.id] = &gang;
  for (const scheduler::Placement& p : decision.placements) {
    std::vector<Json>& pending = cluster.sources[p.gang].pending;
    auto it = std::find_if(pending.begin(), pending.end(), [&](const Json& pod) {
      return pod["metadata"].value("name", "") == p.pod;
    });
    if (it == pending.end()) continue;
    RETURN_IF_ERROR(Bind(*it, p));
    pending.erase(it);  // what still waits is what is left
  }
  for (const scheduler::Eviction& e : decision.evictions)
    RETURN_IF_ERROR(Evict(cluster.sources[e.gang], e));
  for (const scheduler::Waiting& w : decision.waiting) {
    std::string message = w.message;
    if (w.position > 1 && !IsWarning(w.reason))
      message += fmt::format(" (position {} in {})", w.position, Where(*gangs[w.gang]));
    RETURN_IF_ERROR(MarkWaiting(cluster.sources[w.gang], w.reason, message));
  }
  for (auto& [id, source] : cluster.sources) {
    if (!source.problem.empty())
      RETURN_IF_ERROR(MarkWaiting(source, source.problem_reason, source.problem));
  }
  return OkStatus();
}

Status SchedulerStep::Bind(Json pod, const scheduler::Placement& placement) {
  pod["spec"]["nodeName"] = placement.node;
  auto gpus = placement.devices.find(std::string(scheduler::kGpuResource));
  if (gpus != placement.devices.end() && !gpus->second.empty()) {
    pod["metadata"]["annotations"][std::string(api::kGpusAnnotation)] =
        fmt::format("{}", fmt::join(gpus->second, ","));
  }
  return IgnoreNotFound(options_.store->Update(std::move(pod)).status());
}

// PodScheduled False on every pending pod (written only when the message
// changes), and an event on the job when the reason does.
Status SchedulerStep::MarkWaiting(GangSource& source, const std::string& reason,
                                  const std::string& message) {
  bool reason_changed = false;
  for (Json& doc : source.pending) {
    Json& status = doc["status"];
    if (!status.is_object()) status = Json::object();
    Json& conditions = status["conditions"];
    if (!conditions.is_array()) conditions = Json::array();
    auto it = std::find_if(conditions.begin(), conditions.end(),
                           [](const Json& c) { return c.value("type", "") == "PodScheduled"; });
    bool same = it != conditions.end() && it->value("status", "") == "False";
    if (same && it->value("message", "") == message) continue;
    reason_changed = reason_changed || !same || it->value("reason", "") != reason;
    Json condition = {{"type", "PodScheduled"},
                      {"status", "False"},
                      {"reason", reason},
                      {"message", message},
                      {"lastTransitionTime", FormatRfc3339(options_.clock->Now())}};
    if (it != conditions.end()) {
      *it = std::move(condition);
    } else {
      conditions.push_back(std::move(condition));
    }
    status["phase"] = "Pending";
    RETURN_IF_ERROR(IgnoreNotFound(options_.store->UpdateStatus(doc).status()));
  }
  if (!reason_changed || source.owner.value("kind", "") == "Pod") return OkStatus();
  return RecordOnOwner(*options_.store, *options_.clock, source.owner,
                       IsWarning(reason) ? "Warning" : "Normal", reason, message);
}

Status SchedulerStep::Evict(GangSource& source, const scheduler::Eviction& eviction) {
  for (const Json& pod : source.bound) {
    RETURN_IF_ERROR(IgnoreNotFound(options_.store->Delete(*store::KeyOf(pod)).status()));
  }
  if (source.owner.value("kind", "") == "Pod") return OkStatus();
  return RecordOnOwner(*options_.store, *options_.clock, source.owner, "Warning", eviction.reason,
                       eviction.message);
}

}  // namespace trainyard::engine
