// The committed view of the SQLite store: reads of what is durable, for
// the API and the watchers that must never see a write that may yet be
// taken back.
#include <fmt/format.h>

#include "store/sqlite_store.h"

namespace trainyard::store {

const api::Json* SqliteStore::CommittedAt(const Slot& slot) const {
  auto before = group_before_.find(slot);
  if (before != group_before_.end()) return before->second ? &*before->second : nullptr;
  auto it = objects_.find(slot);
  return it == objects_.end() ? nullptr : &it->second;
}

void SqliteStore::ScanCommittedLocked(const std::string& kind, const std::string& namespace_,
                                      const std::function<void(const api::Json&)>& visit) const {
  auto in_range = [&](const Slot& slot) {
    return std::get<0>(slot) == kind && (namespace_.empty() || std::get<1>(slot) == namespace_);
  };
  // Both maps in slot order at once: objects_ as it is now, and the
  // before-images where the open group wrote.
  Slot from{kind, namespace_, ""};
  auto now = objects_.lower_bound(from);
  auto before = group_before_.lower_bound(from);
  while (true) {
    bool has_now = now != objects_.end() && in_range(now->first);
    bool has_before = before != group_before_.end() && in_range(before->first);
    if (!has_now && !has_before) return;
    if (has_before && (!has_now || before->first <= now->first)) {
      if (has_now && now->first == before->first) ++now;
      if (before->second) visit(*before->second);
      ++before;
    } else {
      visit(now->second);
      ++now;
    }
  }
}

Result<api::Json> SqliteStore::CommittedView::Get(const ObjectKey& key) const {
  MutexLock lock(store_.mu_);
  const api::Json* object = store_.CommittedAt({key.kind, key.namespace_, key.name});
  if (object == nullptr) return NotFoundError(fmt::format("{} not found", key.ToString()));
  return *object;
}

Result<ObjectStore::ListResult> SqliteStore::CommittedView::List(
    const std::string& kind, const std::string& namespace_) const {
  MutexLock lock(store_.mu_);
  ListResult result;
  result.resource_version = store_.committed_rv_;
  store_.ScanCommittedLocked(kind, namespace_,
                             [&](const api::Json& o) { result.items.push_back(o); });
  return result;
}

Status SqliteStore::CommittedView::Scan(const std::string& kind, const std::string& namespace_,
                                        const std::function<void(const api::Json&)>& visit) const {
  MutexLock lock(store_.mu_);
  store_.ScanCommittedLocked(kind, namespace_, visit);
  return OkStatus();
}

Status SqliteStore::CommittedView::ScanOwnedBy(
    const std::string& kind, const std::string& owner_uid,
    const std::function<void(const api::Json&)>& visit) const {
  MutexLock lock(store_.mu_);
  // Owned now, or owned before the open group wrote it.
  std::set<Slot> slots;
  if (auto owned = store_.owned_.find(owner_uid); owned != store_.owned_.end()) {
    for (const Slot& slot : owned->second) {
      if (std::get<0>(slot) == kind) slots.insert(slot);
    }
  }
  for (const auto& [slot, before] : store_.group_before_) {
    if (std::get<0>(slot) == kind && before) slots.insert(slot);
  }
  for (const Slot& slot : slots) {
    const api::Json* object = store_.CommittedAt(slot);
    if (object == nullptr) continue;
    std::vector<std::string> uids = OwnerUidsOf(*object);
    if (std::find(uids.begin(), uids.end(), owner_uid) != uids.end()) visit(*object);
  }
  return OkStatus();
}

int64_t SqliteStore::CommittedView::CurrentResourceVersion() const {
  MutexLock lock(store_.mu_);
  return store_.committed_rv_;
}

// The summary as committed: the open group's before-images where it
// wrote one.
ObservationSummary SqliteStore::CommittedSummaryLocked(
    const std::string& trial, std::map<std::string, std::string> bodies) const {
  auto before = group_series_before_.find(trial);
  if (before != group_series_before_.end()) {
    for (const auto& [metric, body] : before->second) {
      if (body) {
        bodies[metric] = *body;
      } else {
        bodies.erase(metric);
      }
    }
  }
  return SummaryOf(bodies);
}

Result<ObservationPage> SqliteStore::CommittedView::ListObservations(
    const std::string& trial, const ObservationQuery& query) const {
  MutexLock lock(store_.mu_);
  store_.AwaitCommit();
  auto first = store_.group_first_seq_.find(trial);
  ASSIGN_OR_RETURN(auto bodies, store_.SeriesBodiesLocked(trial));
  return store_.ListObservationsLocked(
      trial, query, first == store_.group_first_seq_.end() ? INT64_MAX : first->second,
      store_.CommittedSummaryLocked(trial, std::move(bodies)));
}

Result<ObservationSummary> SqliteStore::CommittedView::SummarizeObservations(
    const std::string& trial) const {
  MutexLock lock(store_.mu_);
  store_.AwaitCommit();
  ASSIGN_OR_RETURN(auto bodies, store_.SeriesBodiesLocked(trial));
  return store_.CommittedSummaryLocked(trial, std::move(bodies));
}

}  // namespace trainyard::store
