// Reconciler: what the engine drives. One per kind of object it
// reconciles, level-triggered over the object store: each Reconcile reads
// the object and what it owns and moves the world one step closer to the
// spec; it is safe to run again at any time (idempotent), and repeated
// runs with nothing changing converge to no writes at all.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "store/object_store.h"

namespace trainyard::controller {

struct ReconcileResult {
  // Reconcile again after this long even if nothing changes.
  std::optional<Duration> requeue_after;
};

class Reconciler {
 public:
  virtual ~Reconciler() = default;
  // The kinds this reconciler owns (api/registry.h names them).
  virtual std::vector<std::string> Kinds() const = 0;
  // NOT_FOUND is never an error: a deleted object's leftovers are cleaned.
  virtual Result<ReconcileResult> Reconcile(const store::ObjectKey& key) = 0;
};

}  // namespace trainyard::controller
