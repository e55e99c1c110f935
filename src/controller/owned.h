// Deleting what an object owns: Kubernetes' garbage collector, by owner
// uid. The engine runs it for every deleted object (and, at start, for
// every owner that is gone), so a job's pods, an MPIJob's ConfigMap, a
// trial's job and an experiment's trials go with their owner, and a
// deletion's dependents are deleted in turn.
#pragma once

#include <set>
#include <string>

#include "store/object_store.h"

namespace trainyard::controller {

// Deletes `key`; one already gone is no error.
Status DeleteIfPresent(store::ObjectStore& store, const store::ObjectKey& key);

// Whether `object`'s controlling owner reference names `uid`.
bool ControlledBy(const api::Json& object, const std::string& uid);
// Whether `object`'s ownerReferences name an owner of `kind` called `name`
// (for an owner that is gone, whose uid is not known).
bool OwnedByName(const api::Json& object, std::string_view kind, std::string_view name);

// Deletes every object whose ownerReferences name `owner_uid` and no other
// owner that still exists, through the store's owner index: the cost is
// the dependents', not the store's.
Status DeleteDependents(store::ObjectStore& store, const std::string& owner_uid);

// The uids that objects name as owners but that no object has: owners
// deleted before their dependents were (a crash in between). O(objects).
Result<std::set<std::string>> MissingOwners(const store::ObjectReader& store);

}  // namespace trainyard::controller
