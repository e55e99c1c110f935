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
  // A trial's committed observation rows and summary, as ObservationLog's.
  Result<std::vector<ObservationRow>> ListObservations(const std::string& trial) const {
    ASSIGN_OR_RETURN(ObservationPage page, ListObservations(trial, ObservationQuery{}));
    return std::move(page.rows);
  }
  virtual Result<ObservationPage> ListObservations(const std::string& trial,
                                                   const ObservationQuery& query) const = 0;
  virtual Result<ObservationSummary> SummarizeObservations(const std::string& trial) const = 0;
};

}  // namespace trainyard::store
