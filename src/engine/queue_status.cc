// The status the scheduling step writes on ClusterQueues, LocalQueues and
// ResourceQuotas after each decision, as Kueue and Kubernetes write them:
// pendingWorkloads, admittedWorkloads and flavorsUsage (total, borrowed)
// on queues; hard and used on ResourceQuotas.
#include <fmt/format.h>

#include <set>

#include "api/json.h"
#include "engine/scheduler_step.h"
#include "scheduler/quota.h"

namespace trainyard::engine {
namespace {

using api::Json;

struct QueueUse {
  int64_t pending = 0;
  int64_t admitted = 0;
  scheduler::Amounts used;
};

// The first flavor a ClusterQueue lists: usage is reported under it.
std::string FirstFlavor(const Json& cq) {
  const Json& groups = api::ArrayRefAt(cq, {"spec", "resourceGroups"});
  for (const Json& group : groups) {
    for (const Json& flavor : api::ArrayRefAt(group, "flavors"))
      return api::StringAt(flavor, "name", "default");
  }
  return "default";
}

int64_t Nominal(const scheduler::ClusterQueue& cq, const std::string& resource) {
  auto it = cq.quotas.find(resource);
  return it == cq.quotas.end() ? 0 : it->second.nominal;
}

// The resources a ClusterQueue covers, in the order its spec lists them.
std::vector<std::string> Covered(const Json& cq) {
  std::vector<std::string> names;
  for (const Json& group : api::ArrayRefAt(cq, {"spec", "resourceGroups"})) {
    for (const Json& name : api::ArrayRefAt(group, "coveredResources")) {
      if (name.is_string()) names.push_back(name);
    }
  }
  return names;
}

// Every covered resource, in use or not, then any other in use.
// `cq` and `cq_use`: the ClusterQueue whose borrowing to report (beyond
// its nominal quota); a LocalQueue reports its ClusterQueue's.
Json Usage(const std::string& flavor, const QueueUse& use, const scheduler::ClusterQueue* cq,
           const QueueUse* cq_use, const std::vector<std::string>& covered) {
  std::vector<std::pair<std::string, int64_t>> rows;
  for (const std::string& name : covered) {
    auto it = use.used.find(name);
    rows.emplace_back(name, it == use.used.end() ? 0 : it->second);
  }
  for (const auto& [name, milli] : use.used) {
    if (std::find(covered.begin(), covered.end(), name) == covered.end())
      rows.emplace_back(name, milli);
  }
  Json resources = Json::array();
  for (const auto& [name, milli] : rows) {
    Json r = {{"name", name}, {"total", scheduler::FormatAmount(name, milli)}};
    if (cq != nullptr) {
      auto total = cq_use->used.find(name);
      int64_t in_use = total == cq_use->used.end() ? 0 : total->second;
      r["borrowed"] =
          scheduler::FormatAmount(name, std::max<int64_t>(0, in_use - Nominal(*cq, name)));
    }
    resources.push_back(std::move(r));
  }
  return Json::array({{{"name", flavor}, {"resources", std::move(resources)}}});
}

}  // namespace

Status SchedulerStep::WriteStatusIfChanged(Json doc, Json status) {
  if (api::ObjectAt(doc, "status") == status) return OkStatus();
  doc["status"] = std::move(status);
  Result<Json> written = options_.store->UpdateStatus(std::move(doc));
  return written.ok() || written.status().code() == StatusCode::kNotFound ? OkStatus()
                                                                          : written.status();
}

Status SchedulerStep::WriteStatuses(const ClusterSnapshot& cluster,
                                    const scheduler::Decision& decision) {
  std::map<std::string, const scheduler::Gang*> gangs;
  for (const scheduler::Gang& g : cluster.snapshot.gangs) gangs[g.id] = &g;
  std::map<std::string, scheduler::GangTotals> placed;  // by gang
  for (const scheduler::Placement& p : decision.placements) {
    for (const scheduler::PendingPod& pod : gangs.at(p.gang)->pending) {
      if (pod.name == p.pod) scheduler::Add(placed[p.gang], pod.resources);
    }
  }
  std::set<std::string> waiting;
  for (const scheduler::Waiting& w : decision.waiting) waiting.insert(w.gang);
  std::set<std::string> evicted;
  for (const scheduler::Eviction& e : decision.evictions) evicted.insert(e.gang);
  std::map<std::string, QueueUse> cluster_queues, local_queues;
  std::map<std::string, scheduler::GangTotals> namespaces;
  for (const scheduler::Gang& g : cluster.snapshot.gangs) {
    scheduler::GangTotals totals = placed[g.id];
    if (!evicted.contains(g.id)) {
      for (const scheduler::BoundPod& pod : g.bound) scheduler::Add(totals, pod.resources);
    }
    scheduler::Add(namespaces[g.namespace_], totals);
    std::string local = cluster.sources.at(g.id).local_queue;
    for (QueueUse* use : {g.cluster_queue.empty() ? nullptr : &cluster_queues[g.cluster_queue],
                          local.empty() ? nullptr : &local_queues[local]}) {
      if (use == nullptr) continue;
      use->pending += waiting.contains(g.id);
      use->admitted += totals.pods > 0;
      for (const auto& [r, m] : totals.requests) use->used[r] += m;
    }
  }
  std::map<std::string, const scheduler::ClusterQueue*> quotas;
  for (const scheduler::ClusterQueue& q : cluster.snapshot.cluster_queues) quotas[q.name] = &q;
  for (const auto& [name, doc] : cluster.cluster_queues) {
    const QueueUse& use = cluster_queues[name];
    RETURN_IF_ERROR(WriteStatusIfChanged(
        doc,
        {{"pendingWorkloads", use.pending},
         {"admittedWorkloads", use.admitted},
         {"flavorsUsage", Usage(FirstFlavor(doc), use, quotas.at(name), &use, Covered(doc))}}));
  }
  for (const auto& [key, doc] : cluster.local_queues) {
    const QueueUse& use = local_queues[key];
    auto cq = cluster.cluster_queues.find(api::StringAt(doc, {"spec", "clusterQueue"}));
    bool known = cq != cluster.cluster_queues.end();
    std::string flavor = known ? FirstFlavor(cq->second) : "default";
    std::vector<std::string> covered = known ? Covered(cq->second) : std::vector<std::string>();
    RETURN_IF_ERROR(WriteStatusIfChanged(
        doc, {{"pendingWorkloads", use.pending},
              {"admittedWorkloads", use.admitted},
              {"flavorUsage", Usage(flavor, use, known ? quotas.at(cq->first) : nullptr,
                                    known ? &cluster_queues[cq->first] : nullptr, covered)}}));
  }
  for (const auto& [key, doc] : cluster.resource_quotas) {
    const Json& hard = api::ObjectAt(doc, {"spec", "hard"});
    Json used = Json::object();
    const scheduler::GangTotals& totals = namespaces[api::StringAt(doc, {"metadata", "namespace"})];
    for (const auto& [name, value] : hard.items()) {
      std::optional<int64_t> use = scheduler::QuotaUse(name, totals);
      used[name] = scheduler::FormatAmount(name, use.value_or(0));
    }
    RETURN_IF_ERROR(WriteStatusIfChanged(doc, {{"hard", hard}, {"used", std::move(used)}}));
  }
  return OkStatus();
}

}  // namespace trainyard::engine
