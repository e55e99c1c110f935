#include "engine/cluster_snapshot.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <sstream>

#include "api/object.h"
#include "api/pod_object.h"
#include "api/registry.h"
#include "api/scheduling.h"
#include "api/well_known.h"
#include "common/strings.h"
#include "scheduler/decision.h"

namespace trainyard::engine {
namespace {

using api::Json;

int64_t Ms(TimePoint t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

int64_t TimeMs(const std::string& rfc3339) {
  std::optional<TimePoint> t = ParseRfc3339(rfc3339);
  return t ? Ms(*t) : 0;
}

const Json& At(const Json& doc, std::initializer_list<const char*> path) {
  static const Json kNull;
  const Json* at = &doc;
  for (const char* key : path) {
    if (!at->is_object()) return kNull;
    auto it = at->find(key);
    if (it == at->end()) return kNull;
    at = &*it;
  }
  return *at;
}

std::string StringAt(const Json& doc, std::initializer_list<const char*> path) {
  const Json& j = At(doc, path);
  return j.is_string() ? j.get<std::string>() : "";
}

struct Priorities {
  struct Class {
    int32_t value = 0;
    bool never = false;
  };
  std::map<std::string, Class> classes;
  std::optional<Class> global_default;
};

Status ReadPriorities(const store::ObjectStore& store, Priorities& out) {
  return store.Scan("PriorityClass", "", [&](const Json& doc) {
    Priorities::Class c{static_cast<int32_t>(api::IntAt(doc, "value")),
                        api::StringAt(doc, "preemptionPolicy") == "Never"};
    out.classes[StringAt(doc, {"metadata", "name"})] = c;
    if (api::BoolAt(doc, "globalDefault")) out.global_default = c;
  });
}

scheduler::ClusterQueue QueueOf(const Json& doc) {
  scheduler::ClusterQueue q;
  q.name = StringAt(doc, {"metadata", "name"});
  api::DecodeResult decoded = api::DecodeObject(doc);
  if (!decoded.object) return q;
  const auto* policy = std::get_if<api::PolicyObject>(&*decoded.object);
  if (policy == nullptr) return q;
  api::ClusterQueueSpec spec = api::ClusterQueueSpecOf(*policy);
  q.cohort = spec.cohort;
  // Flavors are not placed apart yet: a resource's quota is the sum over
  // its flavors.
  for (const api::ResourceGroup& group : spec.resource_groups) {
    for (const api::FlavorQuotas& flavor : group.flavors) {
      for (const api::FlavorResourceQuota& r : flavor.resources) {
        scheduler::Quota& quota = q.quotas[r.name];
        quota.nominal += r.nominal_quota.milli();
        if (r.borrowing_limit)
          quota.borrowing_limit = quota.borrowing_limit.value_or(0) + r.borrowing_limit->milli();
        if (r.lending_limit)
          quota.lending_limit = quota.lending_limit.value_or(0) + r.lending_limit->milli();
      }
    }
  }
  if (spec.preemption) {
    const std::string& within = spec.preemption->within_cluster_queue;
    if (within == "LowerPriority")
      q.within_queue = scheduler::WithinQueuePreemption::kLowerPriority;
    if (within == "LowerOrNewerEqualPriority")
      q.within_queue = scheduler::WithinQueuePreemption::kLowerOrNewerEqualPriority;
    const std::string& reclaim = spec.preemption->reclaim_within_cohort;
    if (reclaim == "LowerPriority") q.reclaim = scheduler::ReclaimPreemption::kLowerPriority;
    if (reclaim == "Any") q.reclaim = scheduler::ReclaimPreemption::kAny;
  }
  if (spec.queueing_strategy == "StrictFIFO") q.strategy = scheduler::QueueingStrategy::kStrictFifo;
  if (spec.fair_sharing && spec.fair_sharing->weight)
    q.fair_weight_milli = spec.fair_sharing->weight->milli();
  q.stopped = spec.stop_policy == "Hold" || spec.stop_policy == "HoldAndDrain";
  return q;
}

const Json* ControllerOf(const Json& pod) {
  const Json& owners = At(pod, {"metadata", "ownerReferences"});
  if (!owners.is_array()) return nullptr;
  for (const Json& owner : owners) {
    if (api::BoolAt(owner, "controller")) return &owner;
  }
  return nullptr;
}

// The LocalQueue (or ClusterQueue) a job names; empty when none.
std::string QueueNameOf(const Json& owner) {
  std::string label =
      StringAt(owner, {"metadata", "labels", std::string(api::kQueueNameLabel).c_str()});
  if (!label.empty()) return label;
  return StringAt(owner, {"spec", "runPolicy", "schedulingPolicy", "queue"});
}

class Builder {
 public:
  Builder(const store::ObjectStore& store, ClusterSnapshot& out) : store_(store), out_(out) {}

  Status Read() {
    RETURN_IF_ERROR(ReadPriorities(store_, priorities_));
    RETURN_IF_ERROR(store_.Scan("ClusterQueue", "", [&](const Json& doc) {
      out_.cluster_queues[StringAt(doc, {"metadata", "name"})] = doc;
      out_.snapshot.cluster_queues.push_back(QueueOf(doc));
    }));
    RETURN_IF_ERROR(
        store_.Scan("LocalQueue", "", [&](const Json& doc) { out_.local_queues[Key(doc)] = doc; }));
    RETURN_IF_ERROR(store_.Scan("ResourceQuota", "", [&](const Json& doc) {
      out_.resource_quotas[Key(doc)] = doc;
      out_.snapshot.resource_quotas.push_back({StringAt(doc, {"metadata", "namespace"}),
                                               StringAt(doc, {"metadata", "name"}),
                                               AmountsOf(At(doc, {"spec", "hard"}))});
    }));
    // Finished pods hold nothing: skipped before they are copied, so that
    // a snapshot costs little more for a long history.
    std::vector<Json> pods;
    RETURN_IF_ERROR(store_.Scan("Pod", "", [&](const Json& doc) {
      std::string phase = StringAt(doc, {"status", "phase"});
      if (phase != "Succeeded" && phase != "Failed") pods.push_back(doc);
    }));
    for (Json& doc : pods) RETURN_IF_ERROR(AddPod(std::move(doc)));
    for (auto& [id, source] : out_.sources) Finish(out_.snapshot.gangs[index_[id]], source);
    return OkStatus();
  }

 private:
  static std::string Key(const Json& doc) {
    return StringAt(doc, {"metadata", "namespace"}) + "/" + StringAt(doc, {"metadata", "name"});
  }

  // A TrainJob's pods whose runtime asks for a gang (its podGroupPolicy
  // marks them with the TrainJob's name): one gang for all its Jobs'
  // pods, owned by the TrainJob; nullopt for any other pod. Only the pods
  // of the TrainJob's own JobSet join (the JobSet named as it and
  // controlled by it, the pod's Job controlled by that JobSet): a mark
  // alone gains no pod another job's place, nor holds its gang back.
  std::optional<Json> TrainJobGangOf(const Json& doc) {
    std::string jobset =
        StringAt(doc, {"metadata", "labels", std::string(api::kJobSetNameLabel).c_str()});
    std::string group = StringAt(doc, {"metadata", "labels", "scheduling.x-k8s.io/pod-group"});
    if (group.empty()) {
      group = StringAt(doc, {"metadata", "annotations", "scheduling.k8s.io/group-name"});
    }
    const Json* job = ControllerOf(doc);
    if (group.empty() || group != jobset || job == nullptr ||
        api::StringAt(*job, "kind") != "Job") {
      return std::nullopt;
    }
    std::string ns = StringAt(doc, {"metadata", "namespace"});
    auto [known, added] = train_job_of_jobset_.try_emplace(ns + "/" + group);
    if (added) known->second = TrainJobControlling(ns, group);
    if (!known->second ||
        ControllerUid("Job", ns, api::StringAt(*job, "name")) != known->second->second) {
      return std::nullopt;
    }
    return known->second->first;
  }

  // The TrainJob `name` whose JobSet `name` it controls, and that JobSet's
  // uid; nullopt if none.
  std::optional<std::pair<Json, std::string>> TrainJobControlling(const std::string& ns,
                                                                  const std::string& name) {
    Result<Json> job = store_.Get({"TrainJob", ns, name});
    Result<Json> jobset = store_.Get({"JobSet", ns, name});
    if (!job.ok() || !jobset.ok()) return std::nullopt;
    const Json* owner = ControllerOf(*jobset);
    if (owner == nullptr || api::StringAt(*owner, "uid") != StringAt(*job, {"metadata", "uid"})) {
      return std::nullopt;
    }
    return std::make_pair(std::move(*job), StringAt(*jobset, {"metadata", "uid"}));
  }

  // The uid of what controls the `kind` `name`; "" when none does.
  std::string ControllerUid(const std::string& kind, const std::string& ns,
                            const std::string& name) {
    auto [known, added] = controller_uid_.try_emplace(kind + "/" + ns + "/" + name);
    if (added) {
      Result<Json> object = store_.Get({kind, ns, name});
      const Json* owner = object.ok() ? ControllerOf(*object) : nullptr;
      known->second = owner != nullptr ? api::StringAt(*owner, "uid") : "";
    }
    return known->second;
  }

  Status AddPod(Json doc) {
    std::string phase = StringAt(doc, {"status", "phase"});
    if (phase == "Succeeded" || phase == "Failed") return OkStatus();
    if (std::optional<Json> train_job = TrainJobGangOf(doc))
      return AddToGang(std::move(doc), *train_job);
    Json owner = doc;
    const Json* ref = ControllerOf(doc);
    // A Deployment's pods are placed one by one, as Kubernetes' scheduler
    // places them: each is a gang of its own, never all or nothing.
    if (ref != nullptr && api::IsWorkloadKind(api::StringAt(*ref, "kind"))) ref = nullptr;
    if (ref != nullptr) {
      // A gang's pods name the same job: read it once.
      if (auto known = gang_of_owner_.find(api::StringAt(*ref, "uid"));
          known != gang_of_owner_.end()) {
        GangSource& source = out_.sources[known->second];
        (StringAt(doc, {"spec", "nodeName"}).empty() ? source.pending : source.bound)
            .push_back(std::move(doc));
        return OkStatus();
      }
      std::string ns = StringAt(doc, {"metadata", "namespace"});
      Result<Json> got = store_.Get({api::StringAt(*ref, "kind"), ns, api::StringAt(*ref, "name")});
      // A job already gone still groups its pods, which are going too.
      owner = got.ok() ? std::move(*got)
                       : Json{{"apiVersion", api::StringAt(*ref, "apiVersion")},
                              {"kind", api::StringAt(*ref, "kind")},
                              {"metadata",
                               {{"name", api::StringAt(*ref, "name")},
                                {"namespace", ns},
                                {"uid", api::StringAt(*ref, "uid")},
                                {"deletionTimestamp", FormatRfc3339(TimePoint())}}}};
    }
    if (ref != nullptr) gang_of_owner_[api::StringAt(*ref, "uid")] = GangId(owner);
    return AddToGang(std::move(doc), std::move(owner));
  }

  Status AddToGang(Json doc, Json owner) {
    std::string id = GangId(owner);
    auto [it, inserted] = index_.emplace(id, out_.snapshot.gangs.size());
    if (inserted) {
      out_.snapshot.gangs.emplace_back();
      out_.sources[id].owner = std::move(owner);
    }
    GangSource& source = out_.sources[id];
    bool bound = !StringAt(doc, {"spec", "nodeName"}).empty();
    (bound ? source.bound : source.pending).push_back(std::move(doc));
    return OkStatus();
  }

  void Finish(scheduler::Gang& gang, GangSource& source) {
    const Json& owner = source.owner;
    gang.id = GangId(owner);
    gang.namespace_ = StringAt(owner, {"metadata", "namespace"});
    gang.created = TimeMs(StringAt(owner, {"metadata", "creationTimestamp"}));
    gang.terminating = !StringAt(owner, {"metadata", "deletionTimestamp"}).empty();
    const Json& policy = At(owner, {"spec", "runPolicy", "schedulingPolicy"});
    if (At(policy, {"minAvailable"}).is_number_integer())
      gang.min_available = policy["minAvailable"].get<int32_t>();
    gang.min_resources = AmountsOf(At(policy, {"minResources"}));
    if (At(policy, {"scheduleTimeoutSeconds"}).is_number_integer())
      gang.schedule_timeout_ms = policy["scheduleTimeoutSeconds"].get<int64_t>() * 1000;
    const Json& deadline = At(owner, {"spec", "runPolicy", "activeDeadlineSeconds"}).is_null()
                               ? At(owner, {"spec", "activeDeadlineSeconds"})
                               : At(owner, {"spec", "runPolicy", "activeDeadlineSeconds"});
    if (deadline.is_number_integer()) gang.time_limit_ms = deadline.get<int64_t>() * 1000;
    std::string priority_class = StringAt(policy, {"priorityClass"});
    for (const Json& doc : source.pending) AddPending(gang, doc, priority_class);
    gang.started = std::numeric_limits<int64_t>::max();
    for (const Json& doc : source.bound) AddBound(gang, doc, priority_class);
    if (source.bound.empty()) gang.started = 0;
    SetPriority(gang, source, priority_class);
    SetQueue(gang, source);
  }

  void AddPending(scheduler::Gang& gang, const Json& doc, std::string& priority_class) {
    Result<api::Pod> pod = api::DecodePod(doc);
    if (!pod.ok()) return;
    if (priority_class.empty()) priority_class = pod->spec.priority_class_name;
    gang.pending.push_back(
        {pod->metadata.name, scheduler::PodResourcesOf(pod->spec), ConstraintsOf(pod->spec)});
    gang.waiting_since = std::max(gang.waiting_since, TimeMs(pod->metadata.creation_timestamp));
    // It preempted in an earlier step: what its victims free is its.
    for (const api::PodCondition& c : pod->status.conditions) {
      if (c.type == "PodScheduled" && c.reason == scheduler::kReasonPreempting)
        gang.nominated = true;
    }
  }

  void AddBound(scheduler::Gang& gang, const Json& doc, std::string& priority_class) {
    Result<api::Pod> pod = api::DecodePod(doc);
    if (!pod.ok()) return;
    if (priority_class.empty()) priority_class = pod->spec.priority_class_name;
    scheduler::BoundPod bound{
        pod->metadata.name, pod->spec.node_name, scheduler::PodResourcesOf(pod->spec), {}};
    auto gpus = pod->metadata.annotations.find(std::string(api::kGpusAnnotation));
    if (gpus != pod->metadata.annotations.end()) {
      bound.devices[std::string(scheduler::kGpuResource)] = SplitNonEmpty(gpus->second, ',');
    }
    gang.bound.push_back(std::move(bound));
    gang.started = std::min(gang.started, TimeMs(pod->metadata.creation_timestamp));
  }

  void SetPriority(scheduler::Gang& gang, GangSource& source, const std::string& name) {
    std::optional<Priorities::Class> c = priorities_.global_default;
    if (!name.empty()) {
      auto it = priorities_.classes.find(name);
      if (it == priorities_.classes.end()) {
        source.problem =
            fmt::format("PriorityClass {} does not exist: create it, or name one that does", name);
        return;
      }
      c = it->second;
    }
    if (!c) return;
    gang.priority = c->value;
    if (c->never) gang.preemption = scheduler::PreemptionPolicy::kNever;
  }

  void SetQueue(scheduler::Gang& gang, GangSource& source) {
    std::string name = QueueNameOf(source.owner);
    if (name.empty()) return;
    std::string local = gang.namespace_ + "/" + name;
    auto lq = out_.local_queues.find(local);
    if (lq != out_.local_queues.end()) {
      source.local_queue = local;
      gang.cluster_queue = StringAt(lq->second, {"spec", "clusterQueue"});
      if (gang.cluster_queue.empty()) gang.cluster_queue = name;
      return;
    }
    // schedulingPolicy.queue names Volcano's cluster-wide queues: a
    // ClusterQueue of that name serves too.
    if (out_.cluster_queues.contains(name)) {
      gang.cluster_queue = name;
      return;
    }
    source.problem = fmt::format(
        "LocalQueue {} does not exist: create it (kind: LocalQueue, "
        "spec.clusterQueue naming a ClusterQueue), or fix the job's {} label",
        local, api::kQueueNameLabel);
  }

  const store::ObjectStore& store_;
  ClusterSnapshot& out_;
  Priorities priorities_;
  std::map<std::string, size_t> index_;
  std::map<std::string, std::string> gang_of_owner_;  // controller uid -> gang id
  // "namespace/name" of a JobSet -> the TrainJob controlling it and the
  // JobSet's uid, if any
  std::map<std::string, std::optional<std::pair<Json, std::string>>> train_job_of_jobset_;
  std::map<std::string, std::string> controller_uid_;  // "kind/namespace/name" -> uid
};

}  // namespace

scheduler::Amounts AmountsOf(const Json& map) {
  scheduler::Amounts out;
  if (!map.is_object()) return out;
  for (const auto& [name, value] : map.items()) {
    Result<Quantity> q =
        Quantity::Parse(value.is_string() ? value.get<std::string>() : value.dump());
    if (q.ok()) out[name] = q->milli();
  }
  return out;
}

scheduler::PodConstraints ConstraintsOf(const api::PodSpec& spec) {
  scheduler::PodConstraints c;
  c.node_selector = spec.node_selector;
  if (spec.affinity && spec.affinity->node_affinity)
    c.required_affinity = spec.affinity->node_affinity->required;
  c.tolerations = spec.tolerations;
  return c;
}

std::string GangId(const api::Json& owner) {
  return fmt::format("{} {}/{}", StringAt(owner, {"kind"}),
                     StringAt(owner, {"metadata", "namespace"}),
                     StringAt(owner, {"metadata", "name"}));
}

Result<ClusterSnapshot> ReadClusterSnapshot(const store::ObjectStore& store,
                                            const std::vector<scheduler::Node>& nodes,
                                            TimePoint now) {
  ClusterSnapshot out;
  out.snapshot.nodes = nodes;
  out.snapshot.now = Ms(now);
  RETURN_IF_ERROR(Builder(store, out).Read());
  return out;
}

}  // namespace trainyard::engine
