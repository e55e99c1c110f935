#include "scheduler/scheduler.h"

#include <fmt/format.h>

#include <algorithm>
#include <queue>
#include <tuple>

#include "common/int128.h"
#include "scheduler/schedule_run.h"

namespace trainyard::scheduler {
namespace internal {
namespace {

constexpr int64_t kDefaultScheduleTimeoutMs = 60'000;

template <class F>
void ForEachResource(const Snapshot& snapshot, F&& f) {
  for (const Node& node : snapshot.nodes) {
    for (const auto& [name, milli] : node.allocatable) f(name);
    for (const auto& [name, ids] : node.devices) f(name);
  }
  for (const Gang& gang : snapshot.gangs) {
    for (const PendingPod& pod : gang.pending) {
      for (const auto& [name, milli] : pod.resources.requests) f(name);
    }
    for (const BoundPod& pod : gang.bound) {
      for (const auto& [name, milli] : pod.resources.requests) f(name);
    }
  }
}

// Higher priority first, then earlier arrival, then id.
bool QueueOrder(const GangWork* a, const GangWork* b) {
  return std::make_tuple(-static_cast<int64_t>(a->gang->priority), a->gang->created,
                         std::cref(a->gang->id)) <
         std::make_tuple(-static_cast<int64_t>(b->gang->priority), b->gang->created,
                         std::cref(b->gang->id));
}

}  // namespace

Run::Run(const Snapshot& snapshot, const ScheduleOptions& options)
    : snapshot_(snapshot), options_(options), book_(snapshot) {}

void Run::InternResources() {
  pods_resource_ = table_.Intern(std::string(kPodsResource));
  ForEachResource(snapshot_, [&](const std::string& name) { table_.Intern(name); });
  largest_.assign(table_.size(), 0);
  for (const Node& node : snapshot_.nodes) {
    for (const auto& [name, milli] : node.allocatable) {
      int id = table_.Find(name);
      largest_[id] = std::max(largest_[id], milli);
    }
  }
}

void Run::AccountBound() {
  for (GangWork& work : works_) {
    const Gang& gang = *work.gang;
    for (const BoundPod& pod : gang.bound) {
      Add(work.bound_totals, pod.resources);
      int node = state_->Find(pod.node);
      if (node < 0) continue;  // a node that left the inventory holds nothing
      Demand demand = ToDemand(pod.resources.requests, table_);
      demand.emplace_back(pods_resource_, 1000);
      std::sort(demand.begin(), demand.end());
      Hold hold = placer_->BindExisting(node, demand, pod.devices);
      work.holds.push_back({hold, state_->DeviceIds(hold)});
      NoteEnds(node, gang, gang.started);
    }
    book_.Charge(gang.cluster_queue, gang.namespace_, work.bound_totals, +1);
  }
}

void Run::PreparePending() {
  for (GangWork& work : works_) {
    const Gang& gang = *work.gang;
    for (const PendingPod& pod : gang.pending) {
      PodToPlace p{&pod, ToDemand(pod.resources.requests, table_), -1};
      p.demand.emplace_back(pods_resource_, 1000);
      std::sort(p.demand.begin(), p.demand.end());
      p.shape = placer_->ShapeOf(pod.constraints, p.demand);
      work.pods.push_back(std::move(p));
    }
    // Largest first, by the sum of each request's share of the largest
    // node: big pods placed early leave the small ones room to fit around
    // them, rather than finding every node nibbled.
    auto size = [&](const PodToPlace& p) {
      Int128 sum = 0;
      for (const auto& [id, milli] : p.demand) {
        if (largest_[id] > 0) sum += static_cast<Int128>(milli) * 1'000'000 / largest_[id];
      }
      return sum;
    };
    std::stable_sort(work.pods.begin(), work.pods.end(),
                     [&](const PodToPlace& a, const PodToPlace& b) {
                       Int128 sa = size(a), sb = size(b);
                       if (sa != sb) return sa > sb;
                       return a.pod->name < b.pod->name;
                     });
    int total = static_cast<int>(gang.pending.size() + gang.bound.size());
    int min = std::clamp(gang.min_available.value_or(total), 0, total);
    work.need = std::max(0, min - static_cast<int>(gang.bound.size()));
    work.terminating = gang.terminating;
  }
}

std::vector<std::vector<GangWork*>> Run::QueuesInOrder() {
  std::map<std::string, std::vector<GangWork*>> by_queue;
  for (GangWork& work : works_) {
    if (!work.pods.empty() && !work.terminating)
      by_queue[work.gang->cluster_queue].push_back(&work);
  }
  std::vector<std::vector<GangWork*>> out;
  for (auto& [name, list] : by_queue) {
    std::sort(list.begin(), list.end(), QueueOrder);
    for (size_t i = 0; i < list.size(); ++i) list[i]->position = static_cast<int>(i) + 1;
    out.push_back(std::move(list));
  }
  return out;
}

Decision Run::Go() {
  InternResources();
  state_ = std::make_unique<ClusterState>(snapshot_.nodes, table_);
  placer_ = std::make_unique<Placer>(*state_, options_.policy, options_.reference_search);
  node_ends_.assign(state_->size(), 0);
  works_.reserve(snapshot_.gangs.size());
  for (const Gang& gang : snapshot_.gangs) works_.push_back(GangWork{.gang = &gang});
  AccountBound();
  PreparePending();
  std::vector<std::vector<GangWork*>> queues = QueuesInOrder();

  // The queues take turns: the head with the lowest fair share (if the
  // gang were admitted) goes next; equal shares fall back to priority,
  // arrival and id, which is plain priority order when nothing borrows.
  using Turn = std::tuple<int64_t, int64_t, int64_t, std::string, size_t>;
  std::priority_queue<Turn, std::vector<Turn>, std::greater<>> turns;
  std::vector<size_t> next(queues.size(), 0);
  auto push = [&](size_t q) {
    if (next[q] >= queues[q].size()) return;
    const GangWork& head = *queues[q][next[q]];
    const ClusterQueue* queue = book_.Queue(head.gang->cluster_queue);
    int64_t share = 0;
    if (options_.fair_sharing && queue != nullptr) {
      std::vector<const PodToPlace*> pods;
      for (const PodToPlace& p : head.pods) pods.push_back(&p);
      share = book_.Share(*queue, TotalsOf(pods).requests);
    }
    turns.emplace(share, -static_cast<int64_t>(head.gang->priority), head.gang->created,
                  head.gang->id, q);
  };
  auto decide = [&](GangWork& work) {
    work.decided = true;
    Admit(work);
    if (options_.after_gang) options_.after_gang(*work.gang);
  };
  // Gangs that preempted earlier come first, in priority order.
  std::vector<GangWork*> nominated;
  for (const auto& queue : queues) {
    for (GangWork* work : queue) {
      if (work->gang->nominated) nominated.push_back(work);
    }
  }
  std::sort(nominated.begin(), nominated.end(), QueueOrder);
  for (GangWork* work : nominated) decide(*work);
  auto skip_decided = [&](size_t q) {
    while (next[q] < queues[q].size() && queues[q][next[q]]->decided) ++next[q];
  };
  for (size_t q = 0; q < queues.size(); ++q) {
    skip_decided(q);
    push(q);
  }
  while (!turns.empty()) {
    size_t q = std::get<4>(turns.top());
    turns.pop();
    decide(*queues[q][next[q]++]);
    skip_decided(q);
    push(q);
  }
  std::sort(decision_.waiting.begin(), decision_.waiting.end(),
            [](const Waiting& a, const Waiting& b) { return a.gang < b.gang; });
  std::sort(decision_.evictions.begin(), decision_.evictions.end(),
            [](const Eviction& a, const Eviction& b) { return a.gang < b.gang; });
  return std::move(decision_);
}

GangTotals Run::TotalsOf(const std::vector<const PodToPlace*>& pods) const {
  GangTotals totals;
  for (const PodToPlace* p : pods) Add(totals, p->pod->resources);
  return totals;
}

int64_t Run::EndsOf(const Gang& gang) const {
  if (!finite_reservations_ || !gang.time_limit_ms) return kNever;
  return snapshot_.now + *gang.time_limit_ms;
}

std::string Run::CheckMinResources(const Gang& gang) const {
  for (const auto& [name, milli] : gang.min_resources) {
    int id = table_.Find(name);
    int64_t free = 0;
    for (int n = 0; id >= 0 && n < state_->size(); ++n) {
      const NodeState& node = state_->at(n);
      free += std::max<int64_t>(0, node.allocatable[id] - node.used[id] - node.reserved[id]);
    }
    if (free < milli) {
      return fmt::format("minResources: needs {} {}, {} free in the cluster",
                         FormatAmount(name, milli), name, FormatAmount(name, free));
    }
  }
  return "";
}

Attempt Run::TryAdmit(GangWork& work, const ClusterQueue* queue,
                      const std::vector<const PodToPlace*>& pods, bool explain) {
  const Gang& gang = *work.gang;
  Attempt attempt;
  GangTotals totals = TotalsOf(pods);
  std::string why = book_.FitNamespace(gang.namespace_, totals);
  if (!why.empty()) {
    attempt.reason = kReasonQuotaExceeded;
    attempt.message = std::move(why);
    attempt.quota = true;
    return attempt;
  }
  if (queue != nullptr) {
    QueueFit fit = book_.FitQueue(*queue, totals.requests);
    if (!fit.fits) {
      attempt.reason = fit.never ? kReasonInadmissible : kReasonQuotaExceeded;
      attempt.message = std::move(fit.message);
      attempt.quota = true;
      attempt.cohort_short = fit.cohort_short;
      return attempt;
    }
  }
  if (work.bound_totals.pods == 0) {
    why = CheckMinResources(gang);
    if (!why.empty()) {
      attempt.reason = kReasonUnschedulable;
      attempt.message = std::move(why);
      return attempt;
    }
  }
  PlaceResult placed = placer_->Place(pods, EndsOf(gang));
  if (placed.failed >= 0) {
    attempt.reason = kReasonUnschedulable;
    if (explain) attempt.message = Unplaceable(pods, placed.failed, EndsOf(gang));
    return attempt;
  }
  attempt.ok = true;
  attempt.holds = std::move(placed.holds);
  return attempt;
}

void Run::Record(GangWork& work, const std::vector<const PodToPlace*>& pods,
                 const std::vector<Hold>& holds) {
  const Gang& gang = *work.gang;
  work.placed_now = true;
  book_.Charge(gang.cluster_queue, gang.namespace_, TotalsOf(pods), +1);
  for (size_t i = 0; i < pods.size(); ++i) {
    NoteEnds(holds[i].node, gang, snapshot_.now);
    decision_.placements.push_back({gang.id, pods[i]->pod->name,
                                    state_->at(holds[i].node).node->name,
                                    state_->DeviceIds(holds[i])});
  }
}

void Run::Wait(const GangWork& work, std::string reason, std::string message) {
  decision_.waiting.push_back(
      {work.gang->id, std::move(reason), std::move(message), work.position});
}

void Run::Admit(GangWork& work) {
  const Gang& gang = *work.gang;
  if (work.terminating) {  // evicted earlier in this decision
    return Wait(work, kReasonQueued, "evicted; queued again once its pods have stopped");
  }
  const ClusterQueue* queue = nullptr;
  if (!gang.cluster_queue.empty()) {
    queue = book_.Queue(gang.cluster_queue);
    if (queue == nullptr) {
      return Wait(work, kReasonInadmissible,
                  fmt::format("ClusterQueue {} does not exist: create it, or point the "
                              "LocalQueue at one that does",
                              gang.cluster_queue));
    }
    if (queue->stopped) {
      return Wait(work, kReasonInadmissible,
                  fmt::format("ClusterQueue {} is stopped (spec.stopPolicy)", queue->name));
    }
    if (queue->strategy == QueueingStrategy::kStrictFifo && head_blocked_[queue->name]) {
      return Wait(work, kReasonQueued,
                  fmt::format("behind an earlier gang of StrictFIFO ClusterQueue {}", queue->name));
    }
  }
  std::vector<const PodToPlace*> required;
  for (int i = 0; i < work.need; ++i) required.push_back(&work.pods[i]);
  if (required.empty()) return AdmitExtras(work, queue, 0);
  Attempt attempt = TryAdmit(work, queue, required, /*explain=*/true);
  if (!attempt.ok) return Blocked(work, queue, required, std::move(attempt));
  Record(work, required, attempt.holds);
  AdmitExtras(work, queue, required.size());
}

// Pods beyond minAvailable: each on its own, if it fits.
// Pods beyond minAvailable: each on its own, if it fits; the first that
// does not says why the rest wait (the gang itself runs).
void Run::AdmitExtras(GangWork& work, const ClusterQueue* queue, size_t from) {
  std::optional<Attempt> first_miss;
  for (size_t i = from; i < work.pods.size(); ++i) {
    std::vector<const PodToPlace*> one = {&work.pods[i]};
    Attempt attempt = TryAdmit(work, queue, one, /*explain=*/!first_miss);
    if (attempt.ok) {
      Record(work, one, attempt.holds);
    } else if (!first_miss) {
      first_miss = std::move(attempt);
    }
  }
  if (first_miss) {
    Wait(work, first_miss->reason, "pods beyond minAvailable wait: " + first_miss->message);
  }
}

void Run::Blocked(GangWork& work, const ClusterQueue* queue,
                  const std::vector<const PodToPlace*>& pods, Attempt attempt) {
  const Gang& gang = *work.gang;
  if (attempt.reason == kReasonInadmissible) return Wait(work, attempt.reason, attempt.message);
  if (!attempt.quota) {
    if (std::optional<std::string> never = NeverFits(pods)) {
      return Wait(work, kReasonExceedsCapacity, *never);
    }
  }
  if (!gang.bound.empty() && snapshot_.now - gang.waiting_since >=
                                 gang.schedule_timeout_ms.value_or(kDefaultScheduleTimeoutMs)) {
    work.terminating = true;
    decision_.evictions.push_back(
        {gang.id, kReasonScheduleTimeout,
         fmt::format("{} of the {} pods the gang needs have run without the rest for longer than "
                     "its schedule timeout; the whole gang is queued again",
                     gang.bound.size(), gang.bound.size() + work.need)});
    return Wait(work, attempt.reason, attempt.message);
  }
  std::string queue_name = gang.cluster_queue;
  bool head = !head_blocked_[queue_name];
  head_blocked_[queue_name] = true;
  if (WaitForTerminating(work, queue, pods) || Preempt(work, queue, pods)) return;
  if (head) {
    if (queue != nullptr) {
      Amounts requests = TotalsOf(pods).requests;
      if (attempt.cohort_short) book_.ReserveInCohort(*queue, requests);
      book_.ReserveInQueue(queue->name, requests);
    }
    if (!attempt.quota) ReserveNodes(work, pods);
  }
  Wait(work, attempt.reason, attempt.message);
}

// Sets nodes aside for a gang that does not fit yet: where it would go if
// what runs there now had ended, preferring the nodes most free today.
// Reserved capacity may still be used by gangs that end before the
// running pods there do (backfill), never by any other.
void Run::ReserveNodes(GangWork& work, const std::vector<const PodToPlace*>& pods) {
  std::vector<int> reserved;
  for (const PodToPlace* pod : pods) {
    int best = -1;
    for (int n = 0; n < state_->size(); ++n) {
      if (!placer_->StaticOk(pod->shape, n) ||
          !state_->Fits(n, pod->demand, kNever, /*ignore_used=*/true)) {
        continue;
      }
      if (best < 0 || state_->Key(n, Policy::kSpread) < state_->Key(best, Policy::kSpread))
        best = n;
    }
    if (best < 0) {  // other reservations are in the way: none this time
      for (auto it = reserved.rbegin(); it != reserved.rend(); ++it) state_->PopReservation(*it);
      return;
    }
    // Reserved at once, so that the gang's next pod sees this one's share.
    state_->Reserve(best, {work.gang->id, std::max(snapshot_.now, node_ends_[best]), pod->demand});
    reserved.push_back(best);
  }
  for (int n : reserved) finite_reservations_ |= node_ends_[n] != kNever;
}

void Run::NoteEnds(int node, const Gang& gang, int64_t started) {
  int64_t ends = gang.time_limit_ms ? started + *gang.time_limit_ms : kNever;
  node_ends_[node] = std::max(node_ends_[node], ends);
}

}  // namespace internal

Decision Schedule(const Snapshot& snapshot, const ScheduleOptions& options) {
  return internal::Run(snapshot, options).Go();
}

}  // namespace trainyard::scheduler
