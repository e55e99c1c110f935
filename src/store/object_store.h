// ObjectStore: Kubernetes-style objects by kind, namespace and name.
//
// Every write gets the next resourceVersion (one counter for the whole
// store, strictly increasing); Create assigns uid, creationTimestamp and
// generation 1; Update bumps generation when the spec changes and keeps the
// stored status; UpdateStatus replaces only the status. Updates carrying a
// resourceVersion must match the stored one (optimistic concurrency), and
// get ABORTED when they do not. Watchers receive every change in
// resourceVersion order and can resume from a resourceVersion.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "api/json.h"
#include "common/status.h"
#include "store/list_query.h"

namespace trainyard::store {

struct ObjectKey {
  std::string kind;  // "PyTorchJob", "Pod", ...
  std::string namespace_;
  std::string name;
  bool operator==(const ObjectKey&) const = default;
  std::string ToString() const;  // "PyTorchJob ns/name"
};

// The key of a document: its kind, metadata.namespace and metadata.name.
Result<ObjectKey> KeyOf(const api::Json& object);

enum class EventType { kAdded, kModified, kDeleted };

struct WatchEvent {
  EventType type;
  int64_t resource_version;
  api::Json object;  // as stored; for kDeleted, the last state
  // `object` serialised, where the store has it already (committed
  // watches): what an API server sends, without serialising it again.
  std::shared_ptr<const std::string> text;
};

using WatchCallback = std::function<void(const WatchEvent&)>;
// One event shared by every committed watcher, never copied per watcher.
using SharedWatchEvent = std::shared_ptr<const WatchEvent>;
// Committed changes come in batches, in order: a group's at its commit, so
// that a watcher is woken once per commit, not once per change.
using SharedWatchCallback = std::function<void(std::span<const SharedWatchEvent>)>;
using WatchId = int64_t;

// Reads. An ObjectStore reads what it holds, its own uncommitted writes
// included; a CommittedReader only what is durable.
class ObjectReader {
 public:
  virtual ~ObjectReader() = default;

  virtual Result<api::Json> Get(const ObjectKey& key) const = 0;
  // Every object of `kind`, in one namespace or (empty) all, ordered by
  // namespace and name; and the resourceVersion the list was taken at.
  struct ListResult {
    std::vector<api::Json> items;
    int64_t resource_version = 0;
  };
  virtual Result<ListResult> List(const std::string& kind, const std::string& namespace_) const = 0;
  // Like List, without copying: `visit` sees each object in place, in the
  // same order. It must not call the store, nor keep the reference.
  virtual Status Scan(const std::string& kind, const std::string& namespace_,
                      const std::function<void(const api::Json&)>& visit) const = 0;
  // Like Scan, over the objects of `kind` whose ownerReferences name
  // `owner_uid` (in the owner's namespace, as Kubernetes requires), in the
  // same order: from an index kept with every write, so that what an owner
  // has costs the same however many other objects there are.
  virtual Status ScanOwnedBy(const std::string& kind, const std::string& owner_uid,
                             const std::function<void(const api::Json&)>& visit) const = 0;
  // The objects `query` selects, in the same order as Scan, until `visit`
  // returns false; and the resourceVersion they are as of. A store with
  // indexes reads only those (an index per label and per kIndexedFields
  // value); this one scans the range.
  virtual Result<int64_t> ScanWhere(const ListQuery& query,
                                    const std::function<bool(const api::Json&)>& visit) const;
  // The resourceVersion of the last write these reads include.
  virtual int64_t CurrentResourceVersion() const = 0;
};

class ObjectStore : public ObjectReader {
 public:
  virtual Result<api::Json> Create(api::Json object) = 0;
  virtual Result<api::Json> Update(api::Json object) = 0;
  virtual Result<api::Json> UpdateStatus(api::Json object) = 0;
  virtual Result<api::Json> Delete(const ObjectKey& key) = 0;

  // Calls `callback` for every change after `since` (0: only future ones),
  // first those already stored, in order, then each new one after it
  // commits. Fails with OUT_OF_RANGE when `since` is older than what is
  // kept (then list again).
  virtual Result<WatchId> Watch(int64_t since, WatchCallback callback) = 0;
  virtual void StopWatch(WatchId id) = 0;
};

}  // namespace trainyard::store
