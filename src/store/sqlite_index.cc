// The SQLite store's indexes and the lists they answer: each label
// (key = value) and each kIndexedFields value of every object, so that a
// selected list reads only the objects it returns (store/list_query.h).
#include <algorithm>
#include <atomic>

#include "store/sqlite_store.h"

namespace trainyard::store {
namespace {

// An index term: a label, or a field's value. NUL cannot occur in either
// (label keys and field paths are names), so terms never collide.
std::string LabelTerm(const std::string& key, const std::string& value) {
  return "l" + key + '\0' + value;
}
std::string FieldTerm(std::string_view path, const std::string& value) {
  return "f" + std::string(path) + '\0' + value;
}

}  // namespace

std::vector<std::string> SqliteStore::TermsOf(const api::Json& object) {
  std::vector<std::string> terms;
  const api::Json& labels = api::ValueAt(object, {"metadata", "labels"});
  if (labels.is_object()) {
    for (const auto& [key, value] : labels.items()) {
      if (value.is_string()) terms.push_back(LabelTerm(key, value.get<std::string>()));
    }
  }
  // An empty value is not indexed: a query for one (`spec.nodeName=`, the
  // pods no node has) reads the range, as most objects would match.
  for (std::string_view path : kIndexedFields) {
    std::string value = FieldAt(object, path).value_or("");
    if (!value.empty()) terms.push_back(FieldTerm(path, value));
  }
  return terms;
}

void SqliteStore::IndexTerms(const Slot& slot, const api::Json& object, bool add) {
  const std::string& kind = std::get<0>(slot);
  for (std::string& term : TermsOf(object)) {
    if (add) {
      terms_[{kind, std::move(term)}].insert(&slot);
      continue;
    }
    auto entry = terms_.find({kind, std::move(term)});
    if (entry == terms_.end()) continue;
    entry->second.erase(&slot);
    if (entry->second.empty()) terms_.erase(entry);
  }
}

const SqliteStore::SlotSet* SqliteStore::SmallestPosting(const ListQuery& query) const {
  static const SlotSet kNone;
  const SlotSet* smallest = nullptr;
  auto consider = [&](std::string term) TRAINYARD_REQUIRES(mu_) {
    auto entry = terms_.find({query.kind, std::move(term)});
    const SlotSet* posting = entry == terms_.end() ? &kNone : &entry->second;
    if (smallest == nullptr || posting->size() < smallest->size()) smallest = posting;
  };
  for (const auto& [key, value] : query.labels) consider(LabelTerm(key, value));
  for (const auto& [path, value] : query.fields) {
    if (value.empty()) continue;
    if (std::ranges::find(kIndexedFields, path) != kIndexedFields.end()) {
      consider(FieldTerm(path, value));
    }
  }
  return smallest;
}

Result<int64_t> SqliteStore::ScanWhere(const ListQuery& query,
                                       const std::function<bool(const api::Json&)>& visit) const {
  MutexLock lock(mu_);
  ScanWhereLocked(query, /*committed=*/false, visit);
  return rv_;
}

Result<int64_t> SqliteStore::CommittedView::ScanWhere(
    const ListQuery& query, const std::function<bool(const api::Json&)>& visit) const {
  MutexLock lock(store_.mu_);
  store_.ScanWhereLocked(query, /*committed=*/true, visit);
  return store_.committed_rv_;
}

void SqliteStore::ScanWhereLocked(ListQuery query, bool committed,
                                  const std::function<bool(const api::Json&)>& visit) const {
  for (const auto& [path, value] : query.fields) {
    if (path == "metadata.namespace" && query.namespace_.empty()) query.namespace_ = value;
  }
  // Where the range starts: the namespace's first key, or past `after`.
  Slot from{query.kind, query.namespace_, ""};
  bool from_after = query.after > std::pair{query.namespace_, std::string()};
  if (from_after) from = {query.kind, query.after.first, query.after.second};
  auto in_range = [&](const Slot& slot) {
    return std::get<0>(slot) == query.kind &&
           (query.namespace_.empty() || std::get<1>(slot) == query.namespace_);
  };
  // The open group's slots, for a committed read: their before-images
  // are read in order among the others.
  std::vector<const Slot*> group;
  if (committed) {
    for (auto it = group_before_.lower_bound(from);
         it != group_before_.end() && in_range(it->first); ++it) {
      group.push_back(&it->first);
    }
  }
  size_t next_group = 0;
  bool more = true;
  auto read = [&](const Slot& slot) TRAINYARD_REQUIRES(mu_) {
    if (from_after && slot == from) return;  // the last page's last
    const api::Json* object = committed ? CommittedAt(slot) : &objects_.at(slot);
    if (object == nullptr) return;
    examined_.fetch_add(1, std::memory_order_relaxed);
    if (MatchesQuery(query, *object)) more = visit(*object);
  };
  // Each slot of the index or the range, in order, merged with the group's.
  auto take = [&](const Slot& slot) TRAINYARD_REQUIRES(mu_) {
    while (more && next_group < group.size() && *group[next_group] < slot) {
      read(*group[next_group++]);
    }
    if (next_group < group.size() && *group[next_group] == slot) ++next_group;
    if (more) read(slot);
    return more;
  };
  if (std::optional<Slot> named = NamedSlot(query)) {
    if (auto it = objects_.find(*named); it != objects_.end() && it->first >= from) {
      if (!take(it->first)) return;
    }
  } else if (const SlotSet* posting = SmallestPosting(query)) {
    for (auto it = posting->lower_bound(&from); it != posting->end() && in_range(**it); ++it) {
      if (!take(**it)) return;
    }
  } else {
    for (auto it = objects_.lower_bound(from); it != objects_.end() && in_range(it->first); ++it) {
      if (!take(it->first)) return;
    }
  }
  while (more && next_group < group.size()) read(*group[next_group++]);
}

// The one slot a `metadata.name=` query in one namespace can name.
std::optional<SqliteStore::Slot> SqliteStore::NamedSlot(const ListQuery& query) {
  if (query.namespace_.empty()) return std::nullopt;
  for (const auto& [path, value] : query.fields) {
    if (path == "metadata.name") return Slot{query.kind, query.namespace_, value};
  }
  return std::nullopt;
}

}  // namespace trainyard::store
