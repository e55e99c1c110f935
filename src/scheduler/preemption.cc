// Making room for a gang that does not fit: waiting for pods that are
// already stopping, or choosing victims to evict.
#include <fmt/format.h>

#include <algorithm>
#include <tuple>

#include "scheduler/schedule_run.h"

namespace trainyard::scheduler::internal {

void Run::Release(GangWork& victim) {
  for (const BoundHold& h : victim.holds) placer_->Unbind(h.hold);
  book_.Charge(victim.gang->cluster_queue, victim.gang->namespace_, victim.bound_totals, -1);
  victim.released = true;
}

void Run::Restore(GangWork& victim) {
  for (BoundHold& h : victim.holds) {
    h.hold = placer_->BindExisting(h.hold.node, h.hold.demand, h.devices);
  }
  book_.Charge(victim.gang->cluster_queue, victim.gang->namespace_, victim.bound_totals, +1);
  victim.released = false;
}

// The trial placement becomes a reservation: the capacity the victims free
// goes to this gang, not to whichever gang asks next.
void Run::Nominate(GangWork& work, const std::vector<Hold>& holds) {
  placer_->UnbindAll(holds);
  for (const Hold& h : holds) state_->Reserve(h.node, {work.gang->id, kNever, h.demand});
}

bool Run::WaitForTerminating(GangWork& work, const ClusterQueue* queue,
                             const std::vector<const PodToPlace*>& pods) {
  std::vector<GangWork*> stopping;
  for (GangWork& other : works_) {
    if (&other != &work && other.terminating && !other.holds.empty()) stopping.push_back(&other);
  }
  if (stopping.empty()) return false;
  for (GangWork* other : stopping) Release(*other);
  Attempt attempt = TryAdmit(work, queue, pods, /*explain=*/false);
  if (attempt.ok) Nominate(work, attempt.holds);
  for (auto it = stopping.rbegin(); it != stopping.rend(); ++it) Restore(**it);
  if (!attempt.ok) return false;
  Wait(work, kReasonPreempting, "waiting for the pods of evicted or deleted gangs to stop");
  return true;
}

std::vector<GangWork*> Run::Candidates(const GangWork& work, const ClusterQueue* queue,
                                       const GangTotals& totals) {
  const Gang& gang = *work.gang;
  std::vector<std::pair<bool, GangWork*>> found;  // (from another queue, gang)
  for (GangWork& other : works_) {
    if (&other == &work || other.terminating || other.holds.empty() || other.placed_now) continue;
    const Gang& v = *other.gang;
    if (queue == nullptr) {
      // Without queues, kube-scheduler's rule: any lower priority pod.
      if (v.cluster_queue.empty() && v.priority < gang.priority) found.emplace_back(false, &other);
      continue;
    }
    if (v.cluster_queue == queue->name) {
      bool lower = v.priority < gang.priority;
      bool newer = v.priority == gang.priority && v.created > gang.created;
      if ((queue->within_queue == WithinQueuePreemption::kLowerPriority && lower) ||
          (queue->within_queue == WithinQueuePreemption::kLowerOrNewerEqualPriority &&
           (lower || newer))) {
        found.emplace_back(false, &other);
      }
      continue;
    }
    // Reclaim: only what other queues of the cohort borrow, and only for
    // a gang that stays within its own nominal quota, so that two queues
    // can never take the same capacity back and forth.
    const ClusterQueue* theirs = book_.Queue(v.cluster_queue);
    if (theirs == nullptr || queue->cohort.empty() || theirs->cohort != queue->cohort) continue;
    if (queue->reclaim == ReclaimPreemption::kNever || !book_.Borrowing(theirs->name) ||
        !book_.WithinNominal(*queue, totals.requests)) {
      continue;
    }
    if (queue->reclaim == ReclaimPreemption::kAny || v.priority < gang.priority) {
      found.emplace_back(true, &other);
    }
  }
  // Borrowed capacity first, then the lowest priority, then the newest.
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
    const Gang& x = *a.second->gang;
    const Gang& y = *b.second->gang;
    return std::make_tuple(!a.first, x.priority, -x.created, std::cref(x.id)) <
           std::make_tuple(!b.first, y.priority, -y.created, std::cref(y.id));
  });
  std::vector<GangWork*> out;
  for (const auto& [other_queue, w] : found) out.push_back(w);
  return out;
}

bool Run::Preempt(GangWork& work, const ClusterQueue* queue,
                  const std::vector<const PodToPlace*>& pods) {
  const Gang& gang = *work.gang;
  if (gang.preemption == PreemptionPolicy::kNever) return false;
  std::vector<GangWork*> candidates = Candidates(work, queue, TotalsOf(pods));
  if (candidates.empty()) return false;
  auto fits = [&] {
    Attempt attempt = TryAdmit(work, queue, pods, /*explain=*/false);
    placer_->UnbindAll(attempt.holds);
    return attempt.ok;
  };
  std::vector<GangWork*> victims;
  bool room = false;
  for (GangWork* candidate : candidates) {
    const std::string& their_queue = candidate->gang->cluster_queue;
    if (their_queue != gang.cluster_queue && !book_.Borrowing(their_queue)) continue;
    Release(*candidate);
    victims.push_back(candidate);
    if ((room = fits())) break;
  }
  if (!room) {
    for (auto it = victims.rbegin(); it != victims.rend(); ++it) Restore(**it);
    return false;
  }
  // The fewest victims: give back each one not needed after all, the most
  // valuable (chosen last) first.
  for (int i = static_cast<int>(victims.size()) - 2; i >= 0; --i) {
    Restore(*victims[i]);
    if (fits()) {
      victims.erase(victims.begin() + i);
    } else {
      Release(*victims[i]);
    }
  }
  Attempt attempt = TryAdmit(work, queue, pods, /*explain=*/false);
  Nominate(work, attempt.holds);
  std::vector<std::string> names;
  for (auto it = victims.rbegin(); it != victims.rend(); ++it) {
    GangWork& victim = **it;
    Restore(victim);
    victim.terminating = true;
    names.push_back(victim.gang->id);
    decision_.evictions.push_back(
        {victim.gang->id, kReasonPreempted,
         fmt::format("preempted by {} (priority {}) to make room; it is queued again", gang.id,
                     gang.priority)});
  }
  std::sort(names.begin(), names.end());
  Wait(work, kReasonPreempting, fmt::format("preempting {}", fmt::join(names, ", ")));
  return true;
}

}  // namespace trainyard::scheduler::internal
