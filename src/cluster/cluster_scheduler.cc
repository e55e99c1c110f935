#include "cluster/cluster_scheduler.h"

#include <fmt/format.h>

#include <limits>
#include <map>

#include "api/json.h"
#include "api/pod_object.h"
#include "api/registry.h"
#include "controller/events.h"
#include "controller/pod_groups.h"
#include "engine/cluster_snapshot.h"
#include "engine/inventory.h"
#include "scheduler/scheduler.h"

namespace trainyard::cluster {
namespace {

using api::Json;

constexpr char kPodGroupKind[] = "PodGroup.scheduling.x-k8s.io";

int64_t EpochMs(TimePoint t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

int64_t EpochMsOf(const std::string& rfc3339) {
  std::optional<TimePoint> t = ParseRfc3339(rfc3339);
  return t ? EpochMs(*t) : 0;
}

bool Finished(const api::Pod& pod) {
  return pod.status.phase == "Succeeded" || pod.status.phase == "Failed";
}

// A gang as the cluster has it, and the pods behind it.
struct GangPods {
  scheduler::Gang gang;
  std::map<std::string, api::Pod> pending;  // by name
  std::string problem;  // set: it cannot be considered (its PodGroup is missing)
};

// Reads the cluster into the scheduler's snapshot.
class SnapshotReader {
 public:
  SnapshotReader(const store::ObjectStore& store, const std::string& scheduler_name)
      : store_(store), scheduler_name_(scheduler_name) {}

  Status Read(scheduler::Snapshot& snapshot, std::map<std::string, GangPods>& gangs) {
    RETURN_IF_ERROR(ReadNodes(snapshot));
    RETURN_IF_ERROR(store_.Scan(kPodGroupKind, "", [&](const Json& group) {
      groups_[Key(api::StringAt(group, {"metadata", "namespace"}),
                  api::StringAt(group, {"metadata", "name"}))] = group;
    }));
    std::vector<std::pair<api::Pod, int32_t>> pods;  // with spec.priority, which admission sets
    RETURN_IF_ERROR(store_.Scan("Pod", "", [&](const Json& doc) {
      Result<api::Pod> pod = api::DecodePod(doc);
      if (!pod.ok() || Finished(*pod)) return;
      pods.emplace_back(std::move(*pod),
                        static_cast<int32_t>(api::IntAt(doc, {"spec", "priority"}, 0)));
    }));
    for (auto& [pod, priority] : pods) Add(std::move(pod), priority, gangs);
    for (auto& [id, g] : gangs) {
      // Pods appear one by one on a cluster: a gang is placed only once
      // minMember of them exist, never a part of it before the rest.
      size_t members = g.gang.pending.size() + g.gang.bound.size();
      if (g.problem.empty() && g.gang.min_available &&
          members < static_cast<size_t>(*g.gang.min_available)) {
        g.problem = fmt::format("{} has {} of the {} pods it needs at once", id, members,
                                *g.gang.min_available);
      }
      scheduler::Gang gang = g.gang;
      // One that cannot be placed still holds what its bound pods use.
      if (!g.problem.empty()) gang.pending.clear();
      if (!gang.pending.empty() || !gang.bound.empty()) snapshot.gangs.push_back(std::move(gang));
    }
    return OkStatus();
  }

  static std::string Key(const std::string& ns, const std::string& name) { return ns + "/" + name; }

  // Why nodes were not read (they are not placed on), by name.
  std::map<std::string, std::string> unreadable;

 private:
  Status ReadNodes(scheduler::Snapshot& snapshot) {
    return store_.Scan("Node", "", [&](const Json& doc) {
      Result<scheduler::Node> node = engine::NodeFromDocument(doc, "node");
      if (!node.ok()) {
        unreadable[api::StringAt(doc, {"metadata", "name"})] = node.status().message();
        return;
      }
      // The kubelet's device plugin picks the devices: only counts are placed.
      node->devices.clear();
      snapshot.nodes.push_back(std::move(*node));
    });
  }

  // The pod's gang: its PodGroup's, or its own.
  GangPods& GangOf(const api::Pod& pod, int32_t priority, std::map<std::string, GangPods>& gangs) {
    const std::string& ns = pod.metadata.namespace_;
    auto label = pod.metadata.labels.find(std::string(controller::kPodGroupLabel));
    bool own = pod.spec.scheduler_name == scheduler_name_;
    std::string id = own && label != pod.metadata.labels.end()
                         ? "PodGroup " + Key(ns, label->second)
                         : "Pod " + Key(ns, pod.metadata.name);
    auto [it, added] = gangs.try_emplace(id);
    GangPods& g = it->second;
    if (!added) return g;
    g.gang.id = id;
    g.gang.namespace_ = ns;
    g.gang.priority = priority;
    // Nothing is preempted or evicted on a cluster: no pod is deleted here.
    g.gang.preemption = scheduler::PreemptionPolicy::kNever;
    g.gang.schedule_timeout_ms = std::numeric_limits<int64_t>::max();
    g.gang.created = EpochMsOf(pod.metadata.creation_timestamp);
    if (id.starts_with("PodGroup ")) ReadGroup(Key(ns, label->second), g);
    return g;
  }

  void ReadGroup(const std::string& key, GangPods& g) {
    auto group = groups_.find(key);
    if (group == groups_.end()) {
      g.problem = fmt::format("PodGroup {} does not exist yet", key);
      return;
    }
    const Json& spec = api::ObjectAt(group->second, "spec");
    if (spec.contains("minMember") && spec["minMember"].is_number_integer()) {
      g.gang.min_available = spec["minMember"].get<int32_t>();
    }
    g.gang.min_resources = engine::AmountsOf(api::ObjectAt(spec, "minResources"));
    g.gang.created = EpochMsOf(api::StringAt(group->second, {"metadata", "creationTimestamp"}));
  }

  void Add(api::Pod pod, int32_t priority, std::map<std::string, GangPods>& gangs) {
    bool deleting = !pod.metadata.deletion_timestamp.empty();
    if (pod.spec.node_name.empty() && (pod.spec.scheduler_name != scheduler_name_ || deleting)) {
      return;  // another scheduler's to place, or going
    }
    GangPods& g = GangOf(pod, priority, gangs);
    if (!pod.spec.node_name.empty()) {
      g.gang.bound.push_back(
          {pod.metadata.name, pod.spec.node_name, scheduler::PodResourcesOf(pod.spec), {}});
      return;
    }
    g.gang.pending.push_back(
        {pod.metadata.name, scheduler::PodResourcesOf(pod.spec), engine::ConstraintsOf(pod.spec)});
    g.pending.emplace(pod.metadata.name, std::move(pod));
  }

  const store::ObjectStore& store_;
  const std::string& scheduler_name_;
  std::map<std::string, Json> groups_;  // by "namespace/name"
};

// Writes PodScheduled=False with `message` on a pod that waits, and a
// FailedScheduling event, unless the pod says so already.
Status MarkWaiting(store::ObjectStore& store, const Clock& clock, const api::Pod& pod,
                   const std::string& message) {
  for (const api::PodCondition& c : pod.status.conditions) {
    if (c.type == "PodScheduled" && c.status == "False" && c.reason == "Unschedulable" &&
        c.message == message) {
      return OkStatus();
    }
  }
  ASSIGN_OR_RETURN(Json doc, store.Get({"Pod", pod.metadata.namespace_, pod.metadata.name}));
  Json conditions = Json::array();
  if (const Json* held = api::FindAt(doc, {"status", "conditions"}); held && held->is_array()) {
    for (const Json& c : *held) {
      if (api::StringAt(c, "type") != "PodScheduled") conditions.push_back(c);
    }
  }
  conditions.push_back({{"type", "PodScheduled"},
                        {"status", "False"},
                        {"reason", "Unschedulable"},
                        {"message", message},
                        {"lastProbeTime", nullptr},
                        {"lastTransitionTime", FormatRfc3339(clock.Now())}});
  doc["status"]["conditions"] = std::move(conditions);
  RETURN_IF_ERROR(store.UpdateStatus(std::move(doc)).status());
  return controller::RecordEvent(store, clock, {"v1", "Pod", &pod.metadata}, "Warning",
                                 "FailedScheduling", message);
}

}  // namespace

ClusterScheduler::ClusterScheduler(ClusterSchedulerOptions options)
    : options_(std::move(options)) {}

ClusterScheduler::~ClusterScheduler() {
  if (watch_ != 0) options_.store->StopWatch(watch_);
}

Result<SchedulingPass> ClusterScheduler::Pass() {
  scheduler::Snapshot snapshot;
  snapshot.now = EpochMs(options_.clock->Now());
  std::map<std::string, GangPods> gangs;
  SnapshotReader reader(*options_.store, options_.scheduler_name);
  RETURN_IF_ERROR(reader.Read(snapshot, gangs));
  for (const auto& [node, why] : reader.unreadable) {
    if (said_unreadable_.insert(node).second) {
      options_.log->Warning("trainyard scheduler: node {} is not placed on: {}", node, why);
    }
  }
  scheduler::Decision decision = scheduler::Schedule(snapshot);
  SchedulingPass pass;
  Status first_error = OkStatus();
  auto keep = [&](Status s) {
    if (!s.ok() && first_error.ok()) first_error = std::move(s);
  };
  for (const scheduler::Placement& p : decision.placements) {
    const api::Pod& pod = gangs.at(p.gang).pending.at(p.pod);
    Status bound = options_.bind(pod.metadata.namespace_, p.pod, p.node);
    keep(bound);
    if (!bound.ok()) continue;
    ++pass.bound;
    keep(controller::RecordEvent(
        *options_.store, *options_.clock, {"v1", "Pod", &pod.metadata}, "Normal", "Scheduled",
        fmt::format("Successfully assigned {}/{} to {}", pod.metadata.namespace_, p.pod, p.node)));
  }
  for (const scheduler::Waiting& w : decision.waiting) {
    for (const auto& [name, pod] : gangs.at(w.gang).pending) {
      ++pass.waiting;
      keep(MarkWaiting(*options_.store, *options_.clock, pod, w.message));
    }
  }
  for (const auto& [id, g] : gangs) {
    if (g.problem.empty()) continue;
    for (const auto& [name, pod] : g.pending) {
      ++pass.waiting;
      keep(MarkWaiting(*options_.store, *options_.clock, pod, g.problem));
    }
  }
  RETURN_IF_ERROR(first_error);
  return pass;
}

void ClusterScheduler::RequestStop() {
  {
    MutexLock lock(mu_);
    stop_ = true;
  }
  wake_.NotifyAll();
}

Status ClusterScheduler::Run() {
  ASSIGN_OR_RETURN(watch_, options_.store->Watch(0, [this](const store::WatchEvent& e) {
    bool read = api::IsPodObject(e.object) || engine::IsNodeDocument(e.object) ||
                api::StoreKindOf(e.object) == kPodGroupKind;
    if (!read) return;
    {
      MutexLock lock(mu_);
      changed_ = true;
    }
    wake_.NotifyAll();
  }));
  MutexLock lock(mu_);
  while (!stop_) {
    if (!changed_) {
      wake_.Wait(mu_, [&]() TRAINYARD_REQUIRES(mu_) { return stop_ || changed_; });
      continue;
    }
    changed_ = false;
    lock.Unlock();
    Result<SchedulingPass> pass = Pass();
    lock.Lock();
    if (!pass.ok()) {
      options_.log->Warning("trainyard scheduler: {} (tried again in 1s)", pass.status().message());
      // What failed (a binding refused, a write raced) is tried again.
      auto stopped = [&]() TRAINYARD_REQUIRES(mu_) { return stop_; };
      if (wake_.WaitFor(mu_, std::chrono::seconds(1), stopped)) break;
      changed_ = true;
    }
  }
  return OkStatus();
}

}  // namespace trainyard::cluster
