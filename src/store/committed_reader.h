// CommittedReader: the store as the API serves it. Only what is durable:
// a client never reads an object, a resourceVersion or a metric value that
// a crash could take back, so a watch resumed from any resourceVersion it
// was given misses nothing. Reads only: the API writes through the
// control loop (server/backend.h). Thread-safe.
#pragma once

#include <string>
#include <vector>

#include "store/object_store.h"
#include "store/observation_log.h"

namespace trainyard::store {

class CommittedReader : public ObjectReader {
 public:
  // As ObjectStore::Watch, each change reaching `callback` once it is
  // durable. Every watcher gets the same shared event.
  virtual Result<WatchId> WatchCommitted(int64_t since, SharedWatchCallback callback) = 0;
  virtual void StopWatch(WatchId id) = 0;
  // A trial's committed observation rows (ObservationLog::ListObservations).
  virtual Result<std::vector<ObservationRow>> ListObservations(const std::string& trial) const = 0;
};

}  // namespace trainyard::store
