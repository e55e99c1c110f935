// Properties every decision must have, on random clusters: nothing
// over-committed, no partial gang, every placement allowed by its node, the
// same decision twice and from a scan of every node, quotas kept, every
// eviction justified, every waiting gang told why.
//
// Each seed builds a cluster and queues, schedules new gangs on it, turns
// the decision into running pods (and evictions into stopping gangs), adds
// gangs and schedules again, three rounds in all. A failure names the seed
// and round, and prints the smallest snapshot that still fails, in the
// scenario format (scenarios/README.md), ready to become a scenario.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <initializer_list>
#include <iostream>
#include <random>
#include <set>

#include "scheduler/node_match.h"
#include "scheduler/scheduler.h"
#include "scheduler/tests/random_world.h"
#include "scheduler/tests/scenario.h"
#include "scheduler/tests/scenario_text.h"

namespace trainyard::scheduler {
namespace {

using testing::Add;
using testing::Advance;
using testing::Get;
using testing::kGpu;
using testing::kPods;
using testing::Random;
using testing::RandomOptions;
using testing::RandomWorld;
using testing::Render;
using testing::ScenarioText;
using testing::World;
constexpr uint64_t kSeeds = 300;
constexpr int kRounds = 3;

// ---------------------------------------------------------------------------
// The properties. Each violation is one line that starts with its
// property's tag.

using Violations = std::vector<std::string>;

struct Index {
  std::map<std::string, const Gang*> gangs;
  std::map<std::string, int> nodes;
  std::map<std::string, const ClusterQueue*> queues;
  std::map<std::string, std::vector<const Placement*>> placed;  // gang -> its placements
  std::set<std::string> evicted;
};

Index IndexOf(const Snapshot& s, const Decision& d) {
  Index ix;
  for (const Gang& g : s.gangs) ix.gangs[g.id] = &g;
  for (size_t i = 0; i < s.nodes.size(); ++i) ix.nodes[s.nodes[i].name] = static_cast<int>(i);
  for (const ClusterQueue& q : s.cluster_queues) ix.queues[q.name] = &q;
  for (const Placement& p : d.placements) ix.placed[p.gang].push_back(&p);
  for (const Eviction& e : d.evictions) ix.evicted.insert(e.gang);
  return ix;
}

const PendingPod* PendingOf(const Index& ix, const std::string& gang, const std::string& pod) {
  auto g = ix.gangs.find(gang);
  if (g == ix.gangs.end()) return nullptr;
  for (const PendingPod& p : g->second->pending) {
    if (p.name == pod) return &p;
  }
  return nullptr;
}

int MinOf(const Gang& g) {
  int total = static_cast<int>(g.pending.size() + g.bound.size());
  return std::clamp(g.min_available.value_or(total), 0, total);
}

// What runs on each node before the decision: amounts and device ids.
struct NodeUse {
  Amounts used;
  Amounts added;  // by this decision
  std::map<std::string, std::set<std::string>> devices;
};

std::vector<NodeUse> BoundUse(const Snapshot& s, const Index& ix) {
  std::vector<NodeUse> use(s.nodes.size());
  for (const Gang& g : s.gangs) {
    for (const BoundPod& b : g.bound) {
      auto n = ix.nodes.find(b.node);
      if (n == ix.nodes.end()) continue;
      Add(use[n->second].used, b.resources.requests);
      use[n->second].used[kPods] += 1000;
      for (const auto& [resource, ids] : b.devices) {
        use[n->second].devices[resource].insert(ids.begin(), ids.end());
      }
    }
  }
  return use;
}

void CheckDevices(const Node& node, const Placement& p, const PendingPod& pod, NodeUse& use,
                  Violations& out) {
  std::string key = p.gang + "/" + p.pod;
  for (const auto& [resource, ids] : p.devices) {
    auto pool = node.devices.find(resource);
    for (const std::string& id : ids) {
      if (pool == node.devices.end() ||
          std::find(pool->second.begin(), pool->second.end(), id) == pool->second.end()) {
        out.push_back(
            fmt::format("P1 {}: {} {} does not exist on {}", key, resource, id, node.name));
      }
      if (!use.devices[resource].insert(id).second) {
        out.push_back(
            fmt::format("P1 {}: {} {} on {} is already taken", key, resource, id, node.name));
      }
    }
  }
  for (const auto& [resource, ids] : node.devices) {
    int64_t want = (Get(pod.resources.requests, resource) + 999) / 1000;
    auto got = p.devices.find(resource);
    size_t have = got == p.devices.end() ? 0 : got->second.size();
    if (static_cast<int64_t>(have) != want) {
      out.push_back(fmt::format("P1 {}: asks for {} {}, got {} ids", key, want, resource, have));
    }
  }
}

// 1 and 3: nothing over-committed, devices real and unshared, every node
// allowed by the pod's selector, affinity, tolerations and the cordon.
void CheckNodes(const Snapshot& s, const Decision& d, const Index& ix, Violations& out) {
  std::vector<NodeUse> use = BoundUse(s, ix);
  std::set<std::string> seen;
  for (const Placement& p : d.placements) {
    std::string key = p.gang + "/" + p.pod;
    if (!seen.insert(key).second) out.push_back(fmt::format("P1 {}: placed twice", key));
    const PendingPod* pod = PendingOf(ix, p.gang, p.pod);
    auto n = ix.nodes.find(p.node);
    if (pod == nullptr || n == ix.nodes.end()) {
      out.push_back(fmt::format("P1 {}@{}: no such pending pod or node", key, p.node));
      continue;
    }
    const Node& node = s.nodes[n->second];
    NodeUse& u = use[n->second];
    Add(u.used, pod->resources.requests);
    Add(u.added, pod->resources.requests);
    u.used[kPods] += 1000;
    u.added[kPods] += 1000;
    CheckDevices(node, p, *pod, u, out);
    std::string why = StaticMismatch(node, pod->constraints);
    if (!why.empty()) out.push_back(fmt::format("P3 {}@{}: {}", key, node.name, why));
  }
  for (size_t n = 0; n < s.nodes.size(); ++n) {
    const Node& node = s.nodes[n];
    for (const auto& [resource, added] : use[n].added) {
      if (added == 0 || (resource == kPods && !node.allocatable.contains(kPods))) continue;
      int64_t used = Get(use[n].used, resource);
      if (used > Get(node.allocatable, resource)) {
        out.push_back(fmt::format("P1 {}: {} over-committed: {} in use, {} allocatable", node.name,
                                  resource, used, Get(node.allocatable, resource)));
      }
    }
  }
}

// 2: all of a gang's minimum or nothing; nothing for a gang that stops.
void CheckGangs(const Index& ix, Violations& out) {
  for (const auto& [id, placements] : ix.placed) {
    auto it = ix.gangs.find(id);
    if (it == ix.gangs.end()) continue;  // reported by CheckNodes
    const Gang& g = *it->second;
    int have = static_cast<int>(g.bound.size() + placements.size());
    if (have < MinOf(g)) {
      out.push_back(fmt::format("P2 {}: {} bound + {} placed, fewer than its minimum {}", id,
                                g.bound.size(), placements.size(), MinOf(g)));
    }
    if (g.terminating) out.push_back(fmt::format("P2 {}: placed while terminating", id));
    if (ix.evicted.contains(id)) out.push_back(fmt::format("P2 {}: placed and evicted", id));
  }
}

// 4: the same decision again, and from a scan of every node.
void CheckRepeatable(const Snapshot& s, const ScheduleOptions& options, const Decision& d,
                     Violations& out) {
  std::string first = Render(d);
  if (Render(Schedule(s, options)) != first) out.push_back("P4 not repeatable");
  ScheduleOptions reference = options;
  reference.reference_search = true;
  std::string scanned = Render(Schedule(s, reference));
  if (scanned != first) {
    out.push_back(
        fmt::format("P4 the indexed search differs from a scan:\n--- indexed\n{}--- "
                    "scanned\n{}",
                    first, scanned));
  }
}

// Requests per ClusterQueue, before and added by the decision.
struct QueueUse {
  std::map<std::string, Amounts> used;
  std::map<std::string, Amounts> added;
};

QueueUse QueueUseOf(const Snapshot& s, const Index& ix) {
  QueueUse q;
  for (const Gang& g : s.gangs) {
    if (g.cluster_queue.empty()) continue;
    for (const BoundPod& b : g.bound) Add(q.used[g.cluster_queue], b.resources.requests);
  }
  for (const auto& [id, placements] : ix.placed) {
    auto g = ix.gangs.find(id);
    if (g == ix.gangs.end() || g->second->cluster_queue.empty()) continue;
    for (const Placement* p : placements) {
      const PendingPod* pod = PendingOf(ix, id, p->pod);
      if (pod == nullptr) continue;
      Add(q.used[g->second->cluster_queue], pod->resources.requests);
      Add(q.added[g->second->cluster_queue], pod->resources.requests);
    }
  }
  return q;
}

bool Borrows(const ClusterQueue& q, const QueueUse& use) {
  auto used = use.used.find(q.name);
  if (used == use.used.end()) return false;
  for (const auto& [resource, quota] : q.quotas) {
    if (Get(used->second, resource) > quota.nominal) return true;
  }
  return false;
}

// 5a: a queue without a cohort stays within nominal; one in a cohort
// within nominal + borrowingLimit, and the cohort within the sum of its
// members' nominal quotas.
void CheckQueues(const Snapshot& s, const QueueUse& use, Violations& out) {
  std::map<std::string, Amounts> cohort_used, cohort_added, cohort_nominal;
  for (const ClusterQueue& q : s.cluster_queues) {
    const Amounts& used = use.used.contains(q.name) ? use.used.at(q.name) : Amounts{};
    const Amounts& added = use.added.contains(q.name) ? use.added.at(q.name) : Amounts{};
    for (const auto& [resource, quota] : q.quotas) {
      int64_t u = Get(used, resource), a = Get(added, resource);
      int64_t limit = quota.nominal;
      if (!q.cohort.empty()) {
        if (!quota.borrowing_limit)
          limit = std::numeric_limits<int64_t>::max();
        else
          limit += *quota.borrowing_limit;
        cohort_nominal[q.cohort][resource] += quota.nominal;
      }
      if (a > 0 && u > limit) {
        out.push_back(
            fmt::format("P5 ClusterQueue {}: {}: {} used, limit {}", q.name, resource, u, limit));
      }
    }
    if (q.cohort.empty()) continue;
    Add(cohort_used[q.cohort], used);
    Add(cohort_added[q.cohort], added);
  }
  for (const auto& [cohort, added] : cohort_added) {
    for (const auto& [resource, a] : added) {
      int64_t u = Get(cohort_used[cohort], resource);
      int64_t nominal = Get(cohort_nominal[cohort], resource);
      if (a > 0 && u > nominal) {
        out.push_back(fmt::format("P5 cohort {}: {}: {} used, {} nominal in all", cohort, resource,
                                  u, nominal));
      }
    }
  }
}

// A ResourceQuota key's use by pods, as Kubernetes counts it; nullopt for
// keys that count no pod resources.
std::optional<int64_t> KeyUse(const std::string& key, const PodResources& pod) {
  if (key == "pods") return 1000;
  if (key.starts_with("requests.")) return Get(pod.requests, key.substr(9));
  if (key.starts_with("limits.")) return Get(pod.limits, key.substr(7));
  if (key == "cpu" || key == "memory" || key.find('/') != std::string::npos)
    return Get(pod.requests, key);
  return std::nullopt;
}

// 5b: ResourceQuota hard limits hold.
void CheckResourceQuotas(const Snapshot& s, const Index& ix, Violations& out) {
  for (const ResourceQuota& rq : s.resource_quotas) {
    for (const auto& [key, hard] : rq.hard) {
      int64_t used = 0, added = 0;
      for (const Gang& g : s.gangs) {
        if (g.namespace_ != rq.namespace_) continue;
        for (const BoundPod& b : g.bound) used += KeyUse(key, b.resources).value_or(0);
        auto placed = ix.placed.find(g.id);
        if (placed == ix.placed.end()) continue;
        for (const Placement* p : placed->second) {
          if (const PendingPod* pod = PendingOf(ix, g.id, p->pod))
            added += KeyUse(key, pod->resources).value_or(0);
        }
      }
      if (added > 0 && used + added > hard) {
        out.push_back(fmt::format("P5 ResourceQuota {}/{}: {}: {} used, hard {}", rq.namespace_,
                                  rq.name, key, used + added, hard));
      }
    }
  }
}

// Whether preemptor `p` may evict `v`, as the header promises: lower
// priority without queues; within a queue as its policy says; from another
// queue of the cohort only what that queue borrows.
bool MayPreempt(const Gang& p, const Gang& v, const Index& ix, const QueueUse& use) {
  if (p.preemption == PreemptionPolicy::kNever) return false;
  bool lower = v.priority < p.priority;
  if (p.cluster_queue.empty()) return v.cluster_queue.empty() && lower;
  auto mine = ix.queues.find(p.cluster_queue);
  auto theirs = ix.queues.find(v.cluster_queue);
  if (mine == ix.queues.end() || theirs == ix.queues.end()) return false;
  const ClusterQueue& q = *mine->second;
  if (v.cluster_queue == p.cluster_queue) {
    bool newer = v.priority == p.priority && v.created > p.created;
    return (q.within_queue == WithinQueuePreemption::kLowerPriority && lower) ||
           (q.within_queue == WithinQueuePreemption::kLowerOrNewerEqualPriority &&
            (lower || newer));
  }
  if (q.cohort.empty() || theirs->second->cohort != q.cohort) return false;
  if (q.reclaim == ReclaimPreemption::kNever || !Borrows(*theirs->second, use)) return false;
  return q.reclaim == ReclaimPreemption::kAny || lower;
}

// 6: every eviction has its reason: a timed-out gang, or a victim some
// gang waiting with Preempting may evict.
void CheckEvictions(const Snapshot& s, const Decision& d, const Index& ix, const QueueUse& use,
                    Violations& out) {
  for (const Eviction& e : d.evictions) {
    auto it = ix.gangs.find(e.gang);
    if (it == ix.gangs.end()) {
      out.push_back(fmt::format("P6 {}: evicted but not in the snapshot", e.gang));
      continue;
    }
    const Gang& v = *it->second;
    if (v.bound.empty() || v.terminating) {
      out.push_back(
          fmt::format("P6 {}: evicted with nothing running, or already stopping", e.gang));
    }
    if (e.reason == kReasonScheduleTimeout) {
      if (s.now - v.waiting_since < v.schedule_timeout_ms.value_or(60'000))
        out.push_back(fmt::format("P6 {}: timed out early", e.gang));
      continue;
    }
    bool justified = e.reason == kReasonPreempted &&
                     std::any_of(d.waiting.begin(), d.waiting.end(), [&](const Waiting& w) {
                       auto p = ix.gangs.find(w.gang);
                       return w.reason == kReasonPreempting && p != ix.gangs.end() &&
                              MayPreempt(*p->second, v, ix, use);
                     });
    if (!justified) {
      out.push_back(fmt::format("P6 {} (priority {}, queue '{}'): {} by no gang that may: {}",
                                e.gang, v.priority, v.cluster_queue, e.reason, e.message));
    }
  }
}

// 7: a gang short of its minimum that got nothing waits, once, with a
// reason; a gang with no pod left pending does not wait. A gang whose
// extra pods (beyond minAvailable) do not all fit waits once for them, and
// a gang this decision evicts may go unmentioned.
void CheckWaiting(const Snapshot& s, const Decision& d, const Index& ix, Violations& out) {
  std::map<std::string, int> waits;
  for (const Waiting& w : d.waiting) ++waits[w.gang];
  for (const auto& [id, count] : waits) {
    if (!ix.gangs.contains(id)) out.push_back(fmt::format("P7 {}: waits but does not exist", id));
  }
  for (const Gang& g : s.gangs) {
    int count = waits.contains(g.id) ? waits[g.id] : 0;
    bool placed = ix.placed.contains(g.id);
    bool left = placed && ix.placed.at(g.id).size() < g.pending.size();
    bool pending = !g.pending.empty() && !g.terminating && (!placed || left);
    bool short_of_min = static_cast<int>(g.bound.size()) < MinOf(g);
    int least = pending && short_of_min && !ix.evicted.contains(g.id) ? 1 : 0;
    int most = pending ? 1 : 0;
    if (count < least || count > most) {
      out.push_back(fmt::format(
          "P7 {}: waits {} times, want {}..{} ({} pending, {} bound, min {}, {} placed)", g.id,
          count, least, most, g.pending.size(), g.bound.size(), MinOf(g),
          placed ? ix.placed.at(g.id).size() : 0));
    }
  }
}

Violations Check(const Snapshot& s, const ScheduleOptions& options, const Decision& d) {
  Violations out;
  Index ix = IndexOf(s, d);
  QueueUse use = QueueUseOf(s, ix);
  CheckNodes(s, d, ix, out);
  CheckGangs(ix, out);
  CheckRepeatable(s, options, d, out);
  CheckQueues(s, use, out);
  CheckResourceQuotas(s, ix, out);
  CheckEvictions(s, d, ix, use, out);
  CheckWaiting(s, d, ix, out);
  return out;
}

// ---------------------------------------------------------------------------
// On failure: the smallest snapshot that still breaks the same property,
// in the scenario format.

bool Breaks(const Snapshot& s, const ScheduleOptions& options, const std::string& tag) {
  Violations v = Check(s, options, Schedule(s, options));
  return std::any_of(v.begin(), v.end(),
                     [&](const std::string& line) { return line.starts_with(tag); });
}

template <class T, class Try>
bool DropEach(std::vector<T>& items, Try&& still_breaks) {
  bool dropped = false;
  for (size_t i = 0; i < items.size();) {
    T item = std::move(items[i]);
    items.erase(items.begin() + i);
    if (still_breaks()) {
      dropped = true;
      continue;
    }
    items.insert(items.begin() + i, std::move(item));
    ++i;
  }
  return dropped;
}

Snapshot Shrink(Snapshot s, const ScheduleOptions& options, const std::string& tag) {
  auto breaks = [&] { return Breaks(s, options, tag); };
  bool progress = true;
  while (progress) {
    progress = DropEach(s.gangs, breaks);
    progress |= DropEach(s.cluster_queues, breaks);
    progress |= DropEach(s.resource_quotas, breaks);
    for (Gang& g : s.gangs) {
      progress |= DropEach(g.pending, breaks);
      progress |= DropEach(g.bound, breaks);
    }
    std::set<std::string> in_use;
    for (const Gang& g : s.gangs) {
      for (const BoundPod& b : g.bound) in_use.insert(b.node);
    }
    for (size_t i = 0; i < s.nodes.size();) {
      if (in_use.contains(s.nodes[i].name)) {
        ++i;
        continue;
      }
      Node node = std::move(s.nodes[i]);
      s.nodes.erase(s.nodes.begin() + i);
      if (breaks()) {
        progress = true;
        continue;
      }
      s.nodes.insert(s.nodes.begin() + i, std::move(node));
      ++i;
    }
  }
  return s;
}

// ---------------------------------------------------------------------------

// How often the rounds reached the paths worth testing.
struct Coverage {
  int placements = 0;
  int preempted = 0;
  int reclaimed = 0;  // preempted from another queue of the cohort
  int timed_out = 0;
  int waiting = 0;
  int waiting_terminating = 0;  // Preempting for gangs already stopping

  void Count(const Snapshot& s, const Decision& d) {
    placements += static_cast<int>(d.placements.size());
    waiting += static_cast<int>(d.waiting.size());
    std::map<std::string, const Gang*> gangs;
    for (const Gang& g : s.gangs) gangs[g.id] = &g;
    for (const Eviction& e : d.evictions) {
      if (e.reason == kReasonScheduleTimeout) ++timed_out;
      if (e.reason != kReasonPreempted) continue;
      ++preempted;
      for (const Waiting& w : d.waiting) {
        if (w.reason == kReasonPreempting && w.message.find(e.gang) != std::string::npos &&
            gangs[w.gang]->cluster_queue != gangs[e.gang]->cluster_queue)
          ++reclaimed;
      }
    }
    for (const Waiting& w : d.waiting) {
      if (w.reason == kReasonPreempting && w.message.starts_with("waiting")) ++waiting_terminating;
    }
  }
};

TEST(PropertyTest, RandomClustersKeepEveryProperty) {
  int failures = 0;
  Coverage coverage;
  for (uint64_t seed = 1; seed <= kSeeds && failures < 5; ++seed) {
    Random r(seed);
    World w = RandomWorld(r);
    ScheduleOptions options = RandomOptions(r);
    for (int round = 1; round <= kRounds; ++round) {
      const Snapshot& s = w.snapshot;
      Decision d = Schedule(s, options);
      coverage.Count(s, d);
      Violations v = Check(s, options, d);
      if (!v.empty()) {
        ++failures;
        std::string tag = v.front().substr(0, 2);
        Snapshot small = Shrink(s, options, tag);
        ADD_FAILURE() << fmt::format(
            "seed {} round {}:\n{}\nthe smallest snapshot that still breaks {}:\n{}\ndecision on "
            "it:\n{}",
            seed, round, fmt::join(v, "\n"), tag, ScenarioText(small, options),
            Render(Schedule(small, options)));
        break;
      }
      w = Advance(r, w, d);
    }
  }
  // The generator must reach the interesting paths, or passing proves
  // little.
  EXPECT_GT(coverage.placements, 3000);
  EXPECT_GT(coverage.waiting, 1000);
  EXPECT_GT(coverage.preempted, 40);
  EXPECT_GT(coverage.reclaimed, 3);
  EXPECT_GT(coverage.timed_out, 3);
  EXPECT_GT(coverage.waiting_terminating, 20);
  std::cout << fmt::format(
      "{} pods placed, {} gangs waiting, {} preempted ({} reclaimed), {} timed out, {} waits for "
      "stopping gangs\n",
      coverage.placements, coverage.waiting, coverage.preempted, coverage.reclaimed,
      coverage.timed_out, coverage.waiting_terminating);
}

}  // namespace
}  // namespace trainyard::scheduler
