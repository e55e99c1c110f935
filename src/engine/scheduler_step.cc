#include "engine/scheduler_step.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "api/json.h"
#include "api/pod_object.h"
#include "api/scheduling.h"
#include "controller/events.h"
#include "scheduler/quota.h"

namespace trainyard::engine {
namespace {

using api::Json;

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
  api::Decode(api::ObjectAt(owner, "metadata"), FieldPath("metadata"), meta, ignored);
  controller::InvolvedObject involved{api::StringAt(owner, "apiVersion"),
                                      api::StringAt(owner, "kind"), &meta};
  return controller::RecordEvent(store, clock, involved, type, reason, message);
}

}  // namespace

Status SchedulerStep::Sync() {
  // A decision depends on the store and, through timeouts and backfill, on
  // the time: decide again when anything was written since the last
  // decision (other than by it), right after one that evicted (what the
  // victims held is free now), or each second while gangs wait. Most steps
  // do none of these.
  TimePoint now = options_.clock->Now();
  bool changed = options_.store->CurrentResourceVersion() != decided_at_version_;
  bool due = waiting_ && (evicted_ || now - decided_at_ >= std::chrono::seconds(1));
  if (decided_at_version_ >= 0 && !changed && !due) return OkStatus();
  ASSIGN_OR_RETURN(ClusterSnapshot cluster,
                   ReadClusterSnapshot(*options_.store, options_.nodes, now));
  // Gangs that cannot be considered (a missing PriorityClass or queue)
  // keep what they run and wait with their problem.
  for (scheduler::Gang& gang : cluster.snapshot.gangs) {
    if (!cluster.sources[gang.id].problem.empty()) gang.pending.clear();
  }
  scheduler::Decision decision =
      scheduler::Schedule(cluster.snapshot, {{.policy = options_.policy}});
  RETURN_IF_ERROR(Apply(cluster, decision));
  RETURN_IF_ERROR(WriteStatuses(cluster, decision));
  waiting_ = !decision.waiting.empty();
  evicted_ = !decision.evictions.empty();
  decided_at_ = now;
  decided_at_version_ = options_.store->CurrentResourceVersion();  // its own writes included
  return OkStatus();
}

Status SchedulerStep::Apply(ClusterSnapshot& cluster, const scheduler::Decision& decision) {
  std::map<std::string, const scheduler::Gang*> gangs;
  for (const scheduler::Gang& gang : cluster.snapshot.gangs) gangs[gang.id] = &gang;
  for (const scheduler::Placement& p : decision.placements) {
    std::vector<Json>& pending = cluster.sources[p.gang].pending;
    auto it = std::find_if(pending.begin(), pending.end(), [&](const Json& pod) {
      return api::StringAt(pod, {"metadata", "name"}) == p.pod;
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
      RETURN_IF_ERROR(MarkWaiting(source, scheduler::kReasonInadmissible, source.problem));
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
    auto it = std::find_if(conditions.begin(), conditions.end(), [](const Json& c) {
      return api::StringAt(c, "type") == "PodScheduled";
    });
    bool same = it != conditions.end() && api::StringAt(*it, "status") == "False";
    if (same && api::StringAt(*it, "message") == message) continue;
    reason_changed = reason_changed || !same || api::StringAt(*it, "reason") != reason;
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
  if (!reason_changed || api::IsPodObject(source.owner)) return OkStatus();
  return RecordOnOwner(*options_.store, *options_.clock, source.owner,
                       IsWarning(reason) ? "Warning" : "Normal", reason, message);
}

Status SchedulerStep::Evict(GangSource& source, const scheduler::Eviction& eviction) {
  for (const Json& pod : source.bound) {
    RETURN_IF_ERROR(IgnoreNotFound(options_.store->Delete(*store::KeyOf(pod)).status()));
  }
  if (api::IsPodObject(source.owner)) return OkStatus();
  return RecordOnOwner(*options_.store, *options_.clock, source.owner, "Warning", eviction.reason,
                       eviction.message);
}

}  // namespace trainyard::engine
