// An ObjectStore over a real one that counts the objects its readers are
// shown, by kind: tests hold a reader's cost to what it needs, however
// much else is stored.
#pragma once

#include <map>
#include <string>

#include "store/object_store.h"

namespace trainyard::store::testing {

class CountingStore final : public ObjectStore {
 public:
  explicit CountingStore(ObjectStore& store) : store_(store) {}

  // Objects of `kind` shown since the last Reset.
  int64_t Shown(const std::string& kind) const {
    auto it = shown_.find(kind);
    return it == shown_.end() ? 0 : it->second;
  }
  void Reset() { shown_.clear(); }

  Result<api::Json> Create(api::Json object) override { return store_.Create(std::move(object)); }
  Result<api::Json> Get(const ObjectKey& key) const override {
    ++shown_[key.kind];
    return store_.Get(key);
  }
  Result<ListResult> List(const std::string& kind, const std::string& namespace_) const override {
    Result<ListResult> list = store_.List(kind, namespace_);
    if (list.ok()) shown_[kind] += static_cast<int64_t>(list->items.size());
    return list;
  }
  Status Scan(const std::string& kind, const std::string& namespace_,
              const std::function<void(const api::Json&)>& visit) const override {
    return store_.Scan(kind, namespace_, Counted(kind, visit));
  }
  Status ScanOwnedBy(const std::string& kind, const std::string& owner_uid,
                     const std::function<void(const api::Json&)>& visit) const override {
    return store_.ScanOwnedBy(kind, owner_uid, Counted(kind, visit));
  }
  Result<api::Json> Update(api::Json object) override { return store_.Update(std::move(object)); }
  Result<api::Json> UpdateStatus(api::Json object) override {
    return store_.UpdateStatus(std::move(object));
  }
  Result<api::Json> Delete(const ObjectKey& key) override { return store_.Delete(key); }
  Result<WatchId> Watch(int64_t since, WatchCallback callback) override {
    return store_.Watch(since, std::move(callback));
  }
  void StopWatch(WatchId id) override { store_.StopWatch(id); }
  int64_t CurrentResourceVersion() const override { return store_.CurrentResourceVersion(); }

 private:
  std::function<void(const api::Json&)> Counted(
      const std::string& kind, const std::function<void(const api::Json&)>& visit) const {
    return [this, kind, &visit](const api::Json& object) {
      ++shown_[kind];
      visit(object);
    };
  }

  ObjectStore& store_;
  mutable std::map<std::string, int64_t> shown_;
};

}  // namespace trainyard::store::testing
