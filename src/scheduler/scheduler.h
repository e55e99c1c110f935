// The scheduler: one pure function from a cluster snapshot to a decision.
//
//   Decision d = Schedule(snapshot, options);
//
// No I/O, no clock, no threads, no randomness: the same snapshot gives the
// same decision, ties broken by node index (nodes in the order given) and
// gang id. What it guarantees:
// - Gangs: min_available pods are placed together or none is; a gang
//   already running with fewer (a pod was lost) gets the rest placed, and
//   if that takes longer than its schedule timeout, it is evicted whole.
// - Order: gangs that preempted in an earlier decision first (what their
//   victims free is theirs); then the ClusterQueues take turns, the one
//   with the lowest fair share of borrowed capacity first (DRF); within a
//   queue, higher priority first, then earlier arrival.
// - No starvation: a queue's first gang that does not fit reserves nodes
//   and quota for itself (and, if it must borrow, sets the cohort's spare
//   capacity aside from other queues' borrowing); later gangs may use
//   reserved nodes only when they end (time limit) before the reservation
//   is needed (backfill).
// - Preemption: of lower priority gangs in the same queue (as the queue's
//   policy allows; always for gangs without a queue) and reclaim from
//   queues of the cohort that borrow; the fewest victims that make room,
//   chosen lowest priority and newest first.
#pragma once

#include <functional>

#include "scheduler/decision.h"
#include "scheduler/snapshot.h"

namespace trainyard::scheduler {

struct ScheduleOptions : Options {
  // Scan every node for every pod instead of the ordered per-shape index:
  // the same decisions, slowly. For tests that hold the fast path to it.
  bool reference_search = false;
  // Called after each pending gang has been decided, in decision order: a
  // benchmark's way to time gangs one by one without the scheduler
  // reading a clock itself.
  std::function<void(const Gang&)> after_gang;
};

Decision Schedule(const Snapshot& snapshot, const ScheduleOptions& options = {});

}  // namespace trainyard::scheduler
