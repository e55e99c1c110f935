// Internal to the scheduler: the state of one Schedule() call, shared by
// scheduler.cc (order and admission), preemption.cc (victims) and
// explain.cc (why a gang waits).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/cluster_state.h"
#include "scheduler/decision.h"
#include "scheduler/placer.h"
#include "scheduler/quota.h"
#include "scheduler/scheduler.h"

namespace trainyard::scheduler::internal {

struct BoundHold {
  Hold hold;
  std::map<std::string, std::vector<std::string>> devices;  // to take the same ids back
};

struct GangWork {
  const Gang* gang = nullptr;
  std::vector<PodToPlace> pods;  // pending, largest first
  int need = 0;                  // pods that must be placed together
  GangTotals bound_totals;
  std::vector<BoundHold> holds;
  bool terminating = false;  // in the snapshot, or evicted by this decision
  bool released = false;     // holds given back while preemption is simulated
  bool placed_now = false;   // got pods placed by this decision: never a victim in it
  bool decided = false;      // Admit has run for it
  int position = 0;
};

// The outcome of trying to admit some of a gang's pods.
struct Attempt {
  bool ok = false;
  std::vector<Hold> holds;
  std::string reason;  // kReason* when !ok
  std::string message;
  bool quota = false;         // stopped by a quota, not by nodes
  bool cohort_short = false;  // ... by what the cohort has left to lend
};

class Run {
 public:
  Run(const Snapshot& snapshot, const ScheduleOptions& options);
  Decision Go();

 private:
  // Setup.
  void InternResources();
  void AccountBound();
  void PreparePending();
  std::vector<std::vector<GangWork*>> QueuesInOrder();

  // Admission (scheduler.cc).
  void Admit(GangWork& work);
  void AdmitExtras(GangWork& work, const ClusterQueue* queue, size_t from);
  Attempt TryAdmit(GangWork& work, const ClusterQueue* queue,
                   const std::vector<const PodToPlace*>& pods, bool explain);
  std::string CheckMinResources(const Gang& gang) const;
  void Record(GangWork& work, const std::vector<const PodToPlace*>& pods,
              const std::vector<Hold>& holds);
  void Blocked(GangWork& work, const ClusterQueue* queue,
               const std::vector<const PodToPlace*>& pods, Attempt attempt);
  void ReserveNodes(GangWork& work, const std::vector<const PodToPlace*>& pods);
  void NoteEnds(int node, const Gang& gang, int64_t started);
  void Wait(const GangWork& work, std::string reason, std::string message);
  int64_t EndsOf(const Gang& gang) const;
  GangTotals TotalsOf(const std::vector<const PodToPlace*>& pods) const;

  // Preemption (preemption.cc).
  bool WaitForTerminating(GangWork& work, const ClusterQueue* queue,
                          const std::vector<const PodToPlace*>& pods);
  bool Preempt(GangWork& work, const ClusterQueue* queue,
               const std::vector<const PodToPlace*>& pods);
  std::vector<GangWork*> Candidates(const GangWork& work, const ClusterQueue* queue,
                                    const GangTotals& totals);
  void Release(GangWork& victim);
  void Restore(GangWork& victim);
  void Nominate(GangWork& work, const std::vector<Hold>& holds);

  // Explanations (explain.cc).
  std::optional<std::string> NeverFits(const std::vector<const PodToPlace*>& pods);
  std::string Unplaceable(const std::vector<const PodToPlace*>& pods, int failed, int64_t ends);
  std::string Breakdown(ClusterState& state, const Placer& placer, const PodToPlace& pod, int shape,
                        int64_t ends) const;

  const Snapshot& snapshot_;
  const ScheduleOptions options_;
  ResourceTable table_;
  int pods_resource_ = -1;
  std::vector<int64_t> largest_;  // per resource, the most any node has
  std::unique_ptr<ClusterState> state_;
  std::unique_ptr<Placer> placer_;
  QuotaBook book_;
  std::vector<GangWork> works_;
  Decision decision_;
  std::vector<int64_t> node_ends_;            // when the last pod on each node ends at the latest
  bool finite_reservations_ = false;          // some reservation may be backfilled
  std::map<std::string, bool> head_blocked_;  // queue -> its first gang is waiting
  // For NeverFits: the cluster with nothing on it, and what was learnt.
  std::unique_ptr<ClusterState> empty_state_;
  std::unique_ptr<Placer> empty_placer_;
  std::map<std::string, std::optional<std::string>> never_fits_;
  // For Unplaceable: the last breakdown per shapes, and the state's version
  // it was counted at.
  std::map<std::string, std::pair<uint64_t, std::string>> breakdowns_;
};

}  // namespace trainyard::scheduler::internal
