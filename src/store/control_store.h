// ControlStore: what the control loop writes through, objects and trials'
// observation logs alike, so that an API write made through the loop
// (server/backend.h) can check an object and append to its log in one
// durable step.
#pragma once

#include "common/status.h"
#include "store/committed_reader.h"
#include "store/object_store.h"
#include "store/observation_log.h"

namespace trainyard::store {

class ControlStore : public ObjectStore, public ObservationLog {};

// The store the standalone engine owns (store/sqlite_store.h is the one):
// it writes through ControlStore, makes each loop step's writes durable
// together, and serves the API only what is durable.
class GroupCommitStore : public ControlStore {
 public:
  // Group commit: the writes between BeginGroup and CommitGroup share one
  // durable step. Each is visible to reads and watchers at once, as it is
  // made, but durable only once CommitGroup returns OK: nothing may be
  // acknowledged to a user before then. If the commit fails, none of the
  // group's writes remain, on disk or in memory.
  virtual Status BeginGroup() = 0;
  virtual Status CommitGroup() = 0;
  // The store as API clients see it: what is durable only.
  virtual CommittedReader& committed() = 0;
};

}  // namespace trainyard::store
