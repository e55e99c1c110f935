// A namespace of a store read by kind and name, as api::TrackedOwnerUp
// walks it (the node agent's pods, the API's artifacts).
#pragma once

#include <string>

#include "api/tracking.h"
#include "store/object_store.h"

namespace trainyard::store {

// Objects of `namespace_` by kind (a kind's name, kept under its type's
// store kind) and name; nothing for a kind no type has, or a missing one.
// `store` must outlive the lookup.
api::ObjectLookup LookupIn(const ObjectReader& store, std::string namespace_);

}  // namespace trainyard::store
