// Deleting what a job owns, for both job controllers: once it is gone,
// Kubernetes' garbage collector removes what names it as owner; here the
// controllers do it themselves.
#pragma once

#include "store/object_store.h"

namespace trainyard::controller {

// Deletes `key`; one already gone is no error.
Status DeleteIfPresent(store::ObjectStore& store, const store::ObjectKey& key);

// Deletes every pod in the owner's namespace whose owner references name it
// (kind and name).
Status DeletePodsOwnedBy(store::ObjectStore& store, const store::ObjectKey& owner);

}  // namespace trainyard::controller
