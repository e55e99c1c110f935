// Queue quotas (Kueue's ClusterQueues and cohorts) and namespaced
// ResourceQuotas: what is in use, and whether a gang may be admitted.
//
// Within a cohort, a queue first uses its own nominal quota; beyond that it
// borrows from what the other members lend (nominal, or lendingLimit where
// set), up to its own borrowingLimit. A member's unlent part
// (nominal - lendingLimit) is never used by anyone else.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/snapshot.h"

namespace trainyard::scheduler {

struct GangTotals {
  Amounts requests;
  Amounts limits;
  int64_t pods = 0;
};

struct QueueFit {
  bool fits = true;
  bool cohort_short = false;  // stopped by what the cohort has left to lend
  // Never admissible: no quota for a requested resource, or more than the
  // queue could have with everything its cohort lends.
  bool never = false;
  std::string message;  // why not, when !fits
};

class QuotaBook {
 public:
  explicit QuotaBook(const Snapshot& snapshot);

  const ClusterQueue* Queue(const std::string& name) const;

  QueueFit FitQueue(const ClusterQueue& queue, const Amounts& requests) const;
  // Empty when the namespace's ResourceQuotas allow `totals`; else why not.
  std::string FitNamespace(const std::string& namespace_, const GangTotals& totals) const;

  // sign +1 charges an admitted (or running) gang, -1 refunds it.
  void Charge(const std::string& queue, const std::string& namespace_, const GangTotals& totals,
              int sign);
  // Sets aside quota for a queue's blocked head: later gangs of that queue
  // see it as used, so small ones cannot take what the head is waiting for.
  void ReserveInQueue(const std::string& queue, const Amounts& requests);
  // Sets aside, in the queue's cohort, what a blocked head would borrow:
  // no other queue borrows it meanwhile (each still uses its own nominal
  // quota), so a gang larger than its queue's quota is not starved by
  // smaller ones borrowing around it.
  void ReserveInCohort(const ClusterQueue& queue, const Amounts& requests);

  // Weighted dominant share of what the queue borrows, in parts per
  // million of the cohort's lendable total, if `extra` were admitted too.
  int64_t Share(const ClusterQueue& queue, const Amounts& extra) const;
  bool Borrowing(const std::string& queue) const;
  bool WithinNominal(const ClusterQueue& queue, const Amounts& extra) const;

  int64_t Used(const std::string& queue, const std::string& resource) const;

 private:
  int64_t Lendable(const ClusterQueue& q, const std::string& resource) const;
  int64_t Overflow(const ClusterQueue& q, const std::string& resource, int64_t used) const;
  int64_t CohortOverflow(const std::string& cohort, const std::string& resource) const;
  int64_t CohortPool(const std::string& cohort, const std::string& resource) const;
  int64_t MostEver(const ClusterQueue& queue, const std::string& resource) const;
  int64_t CohortAside(const ClusterQueue& queue, const std::string& resource) const;
  std::string CheckResource(const ClusterQueue& queue, const std::string& resource, int64_t milli,
                            QueueFit& fit) const;

  std::map<std::string, const ClusterQueue*> queues_;
  std::map<std::string, std::vector<const ClusterQueue*>> cohorts_;
  std::map<std::string, Amounts> used_;          // queue -> in use
  std::map<std::string, Amounts> reserved_;      // queue -> set aside for its head
  std::map<std::string, Amounts> cohort_aside_;  // queue -> what its head would borrow
  std::map<std::string, std::vector<const ResourceQuota*>> namespace_quotas_;
  std::map<std::string, Amounts> namespace_used_;  // namespace -> by quota key
};

// Adds a pod's (or another gang's) resources and pod count to `totals`.
void Add(GangTotals& totals, const PodResources& pod);
void Add(GangTotals& totals, const GangTotals& more);

// How much of ResourceQuota key `key` a gang with `totals` uses;
// nullopt for keys that do not count pods' resources (services, ...).
std::optional<int64_t> QuotaUse(const std::string& key, const GangTotals& totals);

}  // namespace trainyard::scheduler
