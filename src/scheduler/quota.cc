#include "scheduler/quota.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "common/int128.h"

namespace trainyard::scheduler {
namespace {

constexpr int64_t kUnbounded = std::numeric_limits<int64_t>::max() / 4;

int64_t Get(const Amounts& amounts, const std::string& key) {
  auto it = amounts.find(key);
  return it == amounts.end() ? 0 : it->second;
}

// Kubernetes' bare quota names that mean requests: the standard compute
// resources and any extended (domain-prefixed) resource.
bool IsBareResource(const std::string& key) {
  return key == "cpu" || key == "memory" || key == "ephemeral-storage" ||
         key.find('/') != std::string::npos;
}

}  // namespace

void Add(GangTotals& totals, const PodResources& pod) {
  for (const auto& [name, milli] : pod.requests) totals.requests[name] += milli;
  for (const auto& [name, milli] : pod.limits) totals.limits[name] += milli;
  ++totals.pods;
}

void Add(GangTotals& totals, const GangTotals& more) {
  for (const auto& [name, milli] : more.requests) totals.requests[name] += milli;
  for (const auto& [name, milli] : more.limits) totals.limits[name] += milli;
  totals.pods += more.pods;
}

std::optional<int64_t> QuotaUse(const std::string& key, const GangTotals& totals) {
  if (key == "pods") return totals.pods * 1000;
  if (key.starts_with("requests.")) return Get(totals.requests, key.substr(9));
  if (key.starts_with("limits.")) return Get(totals.limits, key.substr(7));
  if (IsBareResource(key)) return Get(totals.requests, key);
  return std::nullopt;
}

QuotaBook::QuotaBook(const Snapshot& snapshot) {
  for (const ClusterQueue& q : snapshot.cluster_queues) {
    queues_[q.name] = &q;
    if (!q.cohort.empty()) cohorts_[q.cohort].push_back(&q);
  }
  for (const ResourceQuota& rq : snapshot.resource_quotas) {
    namespace_quotas_[rq.namespace_].push_back(&rq);
  }
}

const ClusterQueue* QuotaBook::Queue(const std::string& name) const {
  auto it = queues_.find(name);
  return it == queues_.end() ? nullptr : it->second;
}

int64_t QuotaBook::Used(const std::string& queue, const std::string& resource) const {
  auto it = used_.find(queue);
  return it == used_.end() ? 0 : Get(it->second, resource);
}

int64_t QuotaBook::Lendable(const ClusterQueue& q, const std::string& resource) const {
  auto it = q.quotas.find(resource);
  if (it == q.quotas.end()) return 0;
  return std::min(it->second.nominal, it->second.lending_limit.value_or(it->second.nominal));
}

// What a queue using `used` takes from the cohort's pool: everything
// beyond the part of its nominal quota it does not lend.
int64_t QuotaBook::Overflow(const ClusterQueue& q, const std::string& resource,
                            int64_t used) const {
  auto it = q.quotas.find(resource);
  int64_t nominal = it == q.quotas.end() ? 0 : it->second.nominal;
  return std::max<int64_t>(0, used - (nominal - Lendable(q, resource)));
}

int64_t QuotaBook::CohortOverflow(const std::string& cohort, const std::string& resource) const {
  int64_t sum = 0;
  for (const ClusterQueue* q : cohorts_.at(cohort))
    sum += Overflow(*q, resource, Used(q->name, resource));
  return sum;
}

int64_t QuotaBook::CohortPool(const std::string& cohort, const std::string& resource) const {
  int64_t sum = 0;
  for (const ClusterQueue* q : cohorts_.at(cohort)) sum += Lendable(*q, resource);
  return sum;
}

// All the cohort lends plus what this queue keeps for itself.
int64_t QuotaBook::MostEver(const ClusterQueue& queue, const std::string& resource) const {
  auto quota = queue.quotas.find(resource);
  int64_t nominal = quota == queue.quotas.end() ? 0 : quota->second.nominal;
  if (queue.cohort.empty()) return nominal;
  return nominal - Lendable(queue, resource) + CohortPool(queue.cohort, resource);
}

std::string QuotaBook::CheckResource(const ClusterQueue& queue, const std::string& resource,
                                     int64_t milli, QueueFit& fit) const {
  auto quota = queue.quotas.find(resource);
  if (quota == queue.quotas.end()) {
    return fmt::format(
        "ClusterQueue {} has no quota for {}: add it to the queue's spec.resourceGroups",
        queue.name, resource);
  }
  const Quota& q = quota->second;
  int64_t used = Used(queue.name, resource);
  auto reserved = reserved_.find(queue.name);
  int64_t held = reserved == reserved_.end() ? 0 : Get(reserved->second, resource);
  int64_t limit = q.nominal;
  if (!queue.cohort.empty()) limit += q.borrowing_limit.value_or(kUnbounded);
  int64_t ever = std::min(limit, MostEver(queue, resource));
  if (milli > ever) {
    fit.never = true;
    return fmt::format("ClusterQueue {}: {}: needs {}, more than the queue can ever be given ({})",
                       queue.name, resource, FormatAmount(resource, milli),
                       FormatAmount(resource, ever));
  }
  if (used + held + milli > limit) {
    std::string held_text =
        held == 0 ? ""
                  : fmt::format(", {} set aside for an earlier gang", FormatAmount(resource, held));
    return fmt::format("ClusterQueue {}: {}: needs {}, {} of {} in use{}", queue.name, resource,
                       FormatAmount(resource, milli), FormatAmount(resource, used),
                       FormatAmount(resource, std::min(limit, kUnbounded - 1)), held_text);
  }
  bool borrows = used + milli > q.nominal;
  if (queue.cohort.empty()) return "";
  int64_t pool = CohortPool(queue.cohort, resource);
  int64_t overflow = CohortOverflow(queue.cohort, resource) - Overflow(queue, resource, used) +
                     Overflow(queue, resource, used + milli);
  // What other queues' blocked heads set aside binds only borrowing: a
  // queue may always use its own nominal quota.
  int64_t aside = borrows ? CohortAside(queue, resource) : 0;
  if (overflow + aside <= pool) return "";
  fit.cohort_short = true;
  int64_t left = std::max<int64_t>(0, pool - (overflow - milli));
  std::string aside_text = aside == 0 ? ""
                                      : fmt::format(", {} of it set aside for an earlier gang",
                                                    FormatAmount(resource, std::min(aside, left)));
  return fmt::format("ClusterQueue {}: {}: needs {}, cohort {} has {} left to lend{}", queue.name,
                     resource, FormatAmount(resource, milli), queue.cohort,
                     FormatAmount(resource, left), aside_text);
}

int64_t QuotaBook::CohortAside(const ClusterQueue& queue, const std::string& resource) const {
  int64_t sum = 0;
  for (const ClusterQueue* other : cohorts_.at(queue.cohort)) {
    auto it = cohort_aside_.find(other->name);
    if (other != &queue && it != cohort_aside_.end()) sum += Get(it->second, resource);
  }
  return sum;
}

void QuotaBook::ReserveInCohort(const ClusterQueue& queue, const Amounts& requests) {
  if (queue.cohort.empty()) return;
  Amounts& aside = cohort_aside_[queue.name];
  for (const auto& [resource, milli] : requests) {
    auto quota = queue.quotas.find(resource);
    if (quota == queue.quotas.end()) continue;
    int64_t beyond = Used(queue.name, resource) + milli - quota->second.nominal;
    aside[resource] += std::clamp<int64_t>(beyond, 0, milli);
  }
}

QueueFit QuotaBook::FitQueue(const ClusterQueue& queue, const Amounts& requests) const {
  QueueFit fit;
  for (const auto& [resource, milli] : requests) {
    std::string why = CheckResource(queue, resource, milli, fit);
    if (why.empty()) continue;
    fit.fits = false;
    fit.never = fit.never || !queue.quotas.contains(resource);
    fit.message = std::move(why);
    return fit;
  }
  return fit;
}

std::string QuotaBook::FitNamespace(const std::string& namespace_, const GangTotals& totals) const {
  auto quotas = namespace_quotas_.find(namespace_);
  if (quotas == namespace_quotas_.end()) return "";
  auto used_it = namespace_used_.find(namespace_);
  for (const ResourceQuota* rq : quotas->second) {
    for (const auto& [key, hard] : rq->hard) {
      std::optional<int64_t> use = QuotaUse(key, totals);
      if (!use) continue;
      int64_t used = used_it == namespace_used_.end() ? 0 : Get(used_it->second, key);
      if (used + *use <= hard) continue;
      return fmt::format("ResourceQuota {}/{}: {}: needs {}, {} of {} used", namespace_, rq->name,
                         key, FormatAmount(key, *use), FormatAmount(key, used),
                         FormatAmount(key, hard));
    }
  }
  return "";
}

void QuotaBook::Charge(const std::string& queue, const std::string& namespace_,
                       const GangTotals& totals, int sign) {
  if (!queue.empty()) {
    Amounts& used = used_[queue];
    for (const auto& [resource, milli] : totals.requests) used[resource] += sign * milli;
  }
  auto quotas = namespace_quotas_.find(namespace_);
  if (quotas == namespace_quotas_.end()) return;
  // Usage is the namespace's, once per key, however many quotas list it.
  std::set<std::string> keys;
  for (const ResourceQuota* rq : quotas->second) {
    for (const auto& [key, hard] : rq->hard) keys.insert(key);
  }
  Amounts& used = namespace_used_[namespace_];
  for (const std::string& key : keys) {
    std::optional<int64_t> use = QuotaUse(key, totals);
    if (use) used[key] += sign * *use;
  }
}

void QuotaBook::ReserveInQueue(const std::string& queue, const Amounts& requests) {
  Amounts& reserved = reserved_[queue];
  for (const auto& [resource, milli] : requests) reserved[resource] += milli;
}

bool QuotaBook::Borrowing(const std::string& name) const {
  const ClusterQueue* queue = Queue(name);
  if (queue == nullptr) return false;
  for (const auto& [resource, quota] : queue->quotas) {
    if (Used(name, resource) > quota.nominal) return true;
  }
  return false;
}

bool QuotaBook::WithinNominal(const ClusterQueue& queue, const Amounts& extra) const {
  for (const auto& [resource, milli] : extra) {
    auto quota = queue.quotas.find(resource);
    if (quota == queue.quotas.end() || Used(queue.name, resource) + milli > quota->second.nominal)
      return false;
  }
  return true;
}

int64_t QuotaBook::Share(const ClusterQueue& queue, const Amounts& extra) const {
  if (queue.cohort.empty()) return 0;
  int64_t worst = 0;
  for (const auto& [resource, quota] : queue.quotas) {
    int64_t used = Used(queue.name, resource) + Get(extra, resource);
    int64_t borrowed = used - quota.nominal;
    int64_t pool = CohortPool(queue.cohort, resource);
    if (borrowed <= 0 || pool <= 0) continue;
    Int128 ppm = static_cast<Int128>(borrowed) * 1'000'000 * 1000 /
                 (static_cast<Int128>(pool) * std::max<int64_t>(1, queue.fair_weight_milli));
    worst = std::max(worst, static_cast<int64_t>(ppm));
  }
  return worst;
}

}  // namespace trainyard::scheduler
