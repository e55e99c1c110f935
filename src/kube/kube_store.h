// KubeStore: the ObjectStore the controllers run on against a Kubernetes
// API server, so that the same reconcilers work there as on SQLite.
//
// Reads come from informer-style caches: each watched kind is listed once,
// then followed by a watch that resumes from the last resourceVersion seen
// (bookmarks move it on), and lists again on 410 Gone, telling watchers
// what changed meanwhile. A kind that is not watched is read from the API
// each time. Writes go through the API (optimistic concurrency is the
// server's: a stale resourceVersion is ABORTED) and what the server answers
// enters the cache at once, so a controller reads its own writes before
// their watch events arrive. An event older than what the cache holds
// (resourceVersions compared as the integers every kube-apiserver issues)
// does not take it back.
//
// Threads: one informer thread per watched kind. Watch callbacks run on
// them, or on the thread that wrote, one at a time, after the cache has the
// change; they may read the store but not watch or stop watching. Every
// other method may be called from any thread.
#pragma once

#include <atomic>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "common/log.h"
#include "common/mutex.h"
#include "kube/kube_client.h"
#include "store/object_store.h"

namespace trainyard::kube {

struct KubeStoreOptions {
  // Where what is neither a status nor an event is said.
  Logger* log = &StderrLog();
  KubeClient* client = nullptr;
  std::vector<std::string> kinds;  // watched and cached
  // Of `kinds`, those a cluster may not serve (a CRD newer than the rest
  // of its install, OptimizationJob): said and left out, not an error.
  std::vector<std::string> optional_kinds;
  std::string namespace_;  // empty: every namespace
  // The latest changes kept for a watch that resumes from an earlier
  // resourceVersion (a restarted consumer); one older than these is
  // answered OUT_OF_RANGE, as the interface promises.
  size_t watch_history = 1000;
};

class KubeStore final : public store::ObjectStore {
 public:
  explicit KubeStore(KubeStoreOptions options);
  ~KubeStore() override;

  // Lists every watched kind, then starts following each; returns once
  // every cache is filled (an error when a list fails: no permission, no
  // such resource on the server).
  Status Start();
  void Stop();

  Result<api::Json> Get(const store::ObjectKey& key) const override;
  Result<ListResult> List(const std::string& kind, const std::string& namespace_) const override;
  Status Scan(const std::string& kind, const std::string& namespace_,
              const std::function<void(const api::Json&)>& visit) const override;
  Status ScanOwnedBy(const std::string& kind, const std::string& owner_uid,
                     const std::function<void(const api::Json&)>& visit) const override;
  // Counts the changes the caches have taken in (the server's own
  // resourceVersions are per kind and opaque).
  int64_t CurrentResourceVersion() const override;

  Result<api::Json> Create(api::Json object) override;
  Result<api::Json> Update(api::Json object) override;
  Result<api::Json> UpdateStatus(api::Json object) override;
  Result<api::Json> Delete(const store::ObjectKey& key) override;

  // The callback sees each change the caches take in, once: this store's
  // own writes at once (their watch events, when they come, change nothing
  // more), others' from the server's watches. From `since` (a value of
  // CurrentResourceVersion): the kept changes after it first; OUT_OF_RANGE
  // when it is older than those (or than Start), so list again.
  Result<store::WatchId> Watch(int64_t since, store::WatchCallback callback) override;
  void StopWatch(store::WatchId id) override;

 private:
  using Name = std::pair<std::string, std::string>;  // namespace, name
  struct Cache {
    std::map<Name, api::Json> objects;
    std::string resource_version;  // the server's, where the watch resumes
  };
  using OwnedKey = std::tuple<std::string, std::string, std::string>;  // kind, ns, name

  bool Watched(const std::string& kind) const;
  // Takes `object` into the cache unless the cache holds a newer version,
  // or, for what is not `from_watch` (a write's answer), unless the kind's
  // watch has delivered its version or a later one; tells watchers when it
  // changed something. `deleted`: it is gone.
  void Apply(const std::string& kind, api::Json object, bool deleted, bool notify, bool from_watch);
  // Apply's change to the cache: the event for watchers, or nullopt when
  // the cache did not change.
  std::optional<store::WatchEvent> TakeIn(const std::string& kind, api::Json object, bool deleted,
                                          bool from_watch);
  Status Relist(const std::string& kind, bool notify);
  // What the server answered a write of `sent` with, taken into the cache;
  // on a conflict, the object as the server holds it now.
  Result<api::Json> Written(const std::string& kind, Result<api::Json> written,
                            const api::Json& sent);
  void Follow(const std::string& kind);
  void Index(const std::string& kind, const api::Json& object, bool add) TRAINYARD_REQUIRES(mu_);
  // Waits `d` unless stopped first.
  void Pause(Duration d);

  KubeStoreOptions options_;
  mutable Mutex mu_;
  std::map<std::string, Cache> caches_ TRAINYARD_GUARDED_BY(mu_);
  // Owner uid → dependents.
  std::map<std::string, std::set<OwnedKey>> owned_ TRAINYARD_GUARDED_BY(mu_);
  int64_t changes_ TRAINYARD_GUARDED_BY(mu_) = 0;
  // Held while callbacks run: one at a time. Taken before mu_, never while
  // holding it.
  Mutex watch_mu_;
  std::map<store::WatchId, store::WatchCallback> watchers_ TRAINYARD_GUARDED_BY(watch_mu_);
  store::WatchId next_watch_ TRAINYARD_GUARDED_BY(watch_mu_) = 1;
  // The latest changes delivered, oldest first (options_.watch_history),
  // and the resourceVersion a watch may resume from, at the earliest.
  std::deque<store::WatchEvent> history_ TRAINYARD_GUARDED_BY(watch_mu_);
  int64_t history_from_ TRAINYARD_GUARDED_BY(watch_mu_) = 0;
  std::atomic<bool> stopping_{false};
  // Guards nothing (stopping_ is atomic): set under it, so that Pause
  // cannot miss the notification between its test and its sleep.
  Mutex stop_mu_;
  CondVar stop_cv_;
  std::vector<std::unique_ptr<WatchHandle>> handles_;  // one per kind; set before threads start
  std::vector<std::thread> threads_;
};

}  // namespace trainyard::kube
