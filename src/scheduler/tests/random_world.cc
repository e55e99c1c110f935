#include "scheduler/tests/random_world.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "scheduler/node_match.h"

namespace trainyard::scheduler::testing {

int64_t Get(const Amounts& amounts, const std::string& key) {
  auto it = amounts.find(key);
  return it == amounts.end() ? 0 : it->second;
}

void Add(Amounts& to, const Amounts& amounts) {
  for (const auto& [name, milli] : amounts) to[name] += milli;
}

// ---------------------------------------------------------------------------
// Random clusters.

namespace {

Node RandomNode(Random& r, int index) {
  Node node;
  node.name = fmt::format("n{:02}", index);
  node.allocatable["cpu"] = r.Pick<int64_t>({4, 8, 16, 32, 64}) * 1000;
  node.allocatable["memory"] = r.Pick<int64_t>({16, 32, 64, 256}) * kGi * 1000;
  int64_t gpus = r.Pick<int64_t>({0, 0, 4, 8});
  if (gpus > 0) {
    node.allocatable[kGpu] = gpus * 1000;
    for (int64_t i = 0; i < gpus; ++i) node.devices[kGpu].push_back(std::to_string(i));
  }
  if (r.Chance(40)) node.allocatable[kPods] = r.Between(2, 16) * 1000;
  if (r.Chance(10)) node.allocatable[kFpga] = r.Between(1, 4) * 1000;
  node.labels["zone"] = r.Pick<std::string>({"a", "b", "c"});
  if (r.Chance(80)) node.labels["tier"] = gpus > 0 ? "gpu" : "cpu";
  if (r.Chance(20)) node.taints.push_back({"dedicated", "ml", "NoSchedule"});
  if (r.Chance(10)) node.taints.push_back({"spot", "", "PreferNoSchedule"});
  if (r.Chance(5)) node.taints.push_back({"maintenance", "", "NoExecute"});
  node.unschedulable = r.Chance(5);
  return node;
}

Quota RandomQuota(Random& r, int64_t unit, int64_t most) {
  Quota q;
  q.nominal = r.Between(most / 8, most) * unit;
  if (r.Chance(50)) q.borrowing_limit = r.Between(0, most) * unit;
  if (r.Chance(30)) q.lending_limit = r.Between(0, q.nominal / unit) * unit;
  return q;
}

ClusterQueue RandomQueue(Random& r, int index) {
  ClusterQueue q;
  q.name = fmt::format("cq{}", index);
  if (r.Chance(70)) q.cohort = "co";
  q.quotas["cpu"] = RandomQuota(r, 1000, 48);
  q.quotas["memory"] = RandomQuota(r, 8 * kGi * 1000, 32);
  if (r.Chance(90)) q.quotas[kGpu] = RandomQuota(r, 1000, 24);
  if (r.Chance(20)) q.quotas[kFpga] = RandomQuota(r, 1000, 4);
  q.within_queue = static_cast<WithinQueuePreemption>(r.Between(0, 2));
  q.reclaim = static_cast<ReclaimPreemption>(r.Between(0, 2));
  if (r.Chance(15)) q.strategy = QueueingStrategy::kStrictFifo;
  q.fair_weight_milli = r.Pick<int64_t>({500, 1000, 2000});
  q.stopped = r.Chance(3);
  return q;
}

ResourceQuota RandomResourceQuota(Random& r, int index) {
  ResourceQuota rq{.namespace_ = "ns0", .name = fmt::format("rq{}", index)};
  if (r.Chance(50)) rq.hard["pods"] = r.Between(1, 30) * 1000;
  if (r.Chance(50)) rq.hard["requests.cpu"] = r.Between(1, 64) * 1000;
  if (r.Chance(30)) rq.hard["cpu"] = r.Between(1, 64) * 1000;
  if (r.Chance(40)) rq.hard["requests.nvidia.com/gpu"] = r.Between(0, 24) * 1000;
  if (r.Chance(30)) rq.hard["limits.memory"] = r.Between(1, 32) * 8 * kGi * 1000;
  if (r.Chance(10)) rq.hard["services"] = 5000;  // counts no pod's resources
  return rq;
}

api::NodeSelector Affinity(std::vector<api::NodeSelectorRequirement> expressions,
                           std::vector<api::NodeSelectorRequirement> fields = {}) {
  api::NodeSelectorTerm term;
  term.match_expressions = std::move(expressions);
  term.match_fields = std::move(fields);
  api::NodeSelector selector;
  selector.node_selector_terms.push_back(std::move(term));
  return selector;
}

api::Toleration Toleration(std::string key, std::string op, std::string value, std::string effect) {
  api::Toleration t;
  t.key = std::move(key);
  t.operator_ = std::move(op);
  t.value = std::move(value);
  t.effect = std::move(effect);
  return t;
}

PodConstraints RandomConstraints(Random& r) {
  PodConstraints c;
  if (r.Chance(15)) c.node_selector["zone"] = r.Pick<std::string>({"a", "b", "c"});
  if (r.Chance(10)) c.node_selector["tier"] = "gpu";
  if (r.Chance(10))
    c.required_affinity = Affinity({{.key = "zone", .operator_ = "NotIn", .values = {"a"}}});
  if (r.Chance(5)) {
    c.required_affinity = Affinity(
        {}, {{.key = "metadata.name", .operator_ = "In", .values = {"n00", "n01", "n02"}}});
  }
  if (r.Chance(25)) c.tolerations.push_back(Toleration("dedicated", "Equal", "ml", "NoSchedule"));
  if (r.Chance(10)) c.tolerations.push_back(Toleration("", "Exists", "", ""));
  if (r.Chance(10)) c.tolerations.push_back(Toleration("maintenance", "Exists", "", "NoExecute"));
  return c;
}

PendingPod RandomPod(Random& r) {
  PendingPod pod;
  Amounts& requests = pod.resources.requests;
  requests["cpu"] = r.Between(1, 40) * 100;
  requests["memory"] = r.Between(1, 64) * 256 * kMi * 1000;
  if (r.Chance(35)) requests[kGpu] = r.Pick<int64_t>({1, 2, 4, 8}) * 1000;
  if (r.Chance(3)) requests[kFpga] = 1000;
  if (r.Chance(30)) {
    pod.resources.limits["cpu"] = requests["cpu"];
    pod.resources.limits["memory"] = requests["memory"] * 2;
  }
  pod.constraints = RandomConstraints(r);
  return pod;
}

void AddRandomGang(Random& r, World& w) {
  Snapshot& s = w.snapshot;
  Gang g;
  g.id = fmt::format("g{:02}", w.next_gang++);
  g.namespace_ = r.Chance(50) ? "ns0" : "ns1";
  if (!s.cluster_queues.empty() && r.Chance(85)) {
    g.cluster_queue = s.cluster_queues[r.Between(0, s.cluster_queues.size() - 1)].name;
  } else if (r.Chance(5)) {
    g.cluster_queue = "missing";
  }
  g.priority = static_cast<int32_t>(r.Between(0, 3));
  if (r.Chance(15)) g.preemption = PreemptionPolicy::kNever;
  g.created = s.now + r.Between(0, 30) * 1000;
  g.waiting_since = g.created;
  int pods = static_cast<int>(r.Between(1, 6));
  PendingPod shape = RandomPod(r);
  for (int i = 0; i < pods; ++i) {
    PendingPod pod = r.Chance(70) ? shape : RandomPod(r);
    pod.name = fmt::format("p{}", i);
    w.specs[g.id + "/" + pod.name] = pod;
    g.pending.push_back(std::move(pod));
  }
  if (r.Chance(30)) g.min_available = static_cast<int32_t>(r.Between(1, pods));
  if (r.Chance(20)) g.time_limit_ms = r.Between(1, 120) * 60'000;
  if (r.Chance(30)) g.schedule_timeout_ms = r.Between(1, 120) * 1000;
  s.gangs.push_back(std::move(g));
}

// The pods placed run; evicted gangs stop (next round their pods are gone
// and the gang is queued again); some running gangs end, some lose a pod.
void Apply(Gang& g, const std::vector<const Placement*>& placed, int64_t now) {
  for (const Placement* p : placed) {
    auto it = std::find_if(g.pending.begin(), g.pending.end(),
                           [&](const PendingPod& pod) { return pod.name == p->pod; });
    if (it == g.pending.end()) continue;
    g.bound.push_back({p->pod, p->node, it->resources, p->devices});
    g.pending.erase(it);
  }
  if (!placed.empty()) {
    g.started = now;
    g.waiting_since = now;
  }
}

void Requeue(Gang& g, const World& w, int64_t now) {
  for (const BoundPod& b : g.bound) g.pending.push_back(w.specs.at(g.id + "/" + b.name));
  std::sort(g.pending.begin(), g.pending.end(),
            [](const PendingPod& a, const PendingPod& b) { return a.name < b.name; });
  g.bound.clear();
  g.terminating = false;
  g.started = 0;
  g.waiting_since = now;
}

void LosePod(Random& r, Gang& g, const World& w, int64_t now) {
  BoundPod lost = g.bound.back();
  g.bound.pop_back();
  g.pending.push_back(w.specs.at(g.id + "/" + lost.name));
  g.waiting_since = now - r.Between(0, 120) * 1000;
}

}  // namespace

World RandomWorld(Random& r) {
  World w;
  Snapshot& s = w.snapshot;
  s.now = 1'000'000;
  int nodes = static_cast<int>(r.Between(1, 30));
  for (int i = 0; i < nodes; ++i) s.nodes.push_back(RandomNode(r, i));
  int queues = r.Chance(20) ? 0 : static_cast<int>(r.Between(1, 3));
  for (int i = 0; i < queues; ++i) s.cluster_queues.push_back(RandomQueue(r, i));
  if (r.Chance(30)) s.resource_quotas.push_back(RandomResourceQuota(r, 0));
  if (r.Chance(10)) s.resource_quotas.push_back(RandomResourceQuota(r, 1));
  int gangs = static_cast<int>(r.Between(1, 25));
  for (int i = 0; i < gangs; ++i) AddRandomGang(r, w);
  return w;
}

World Advance(Random& r, const World& before, const Decision& d) {
  World w = before;
  Snapshot& s = w.snapshot;
  std::map<std::string, std::vector<const Placement*>> placed;
  for (const Placement& p : d.placements) placed[p.gang].push_back(&p);
  std::set<std::string> evicted;
  for (const Eviction& e : d.evictions) evicted.insert(e.gang);
  int64_t now = s.now + r.Between(1, 120) * 1000;
  std::vector<Gang> gangs;
  for (Gang& g : s.gangs) {
    if (g.terminating) {
      if (r.Chance(50)) continue;  // deleted
      Requeue(g, w, now);
    } else {
      Apply(g, placed[g.id], s.now);
      g.terminating = evicted.contains(g.id);
      if (!g.terminating && g.pending.empty() && r.Chance(15)) continue;  // done
      if (!g.terminating && !g.bound.empty() && r.Chance(10)) LosePod(r, g, w, now);
    }
    gangs.push_back(std::move(g));
  }
  s.gangs = std::move(gangs);
  s.now = now;
  int added = static_cast<int>(r.Between(0, 8));
  for (int i = 0; i < added; ++i) AddRandomGang(r, w);
  return w;
}

ScheduleOptions RandomOptions(Random& r) {
  ScheduleOptions options;
  options.policy = r.Chance(50) ? Policy::kBinPack : Policy::kSpread;
  options.fair_sharing = r.Chance(80);
  return options;
}

}  // namespace trainyard::scheduler::testing
