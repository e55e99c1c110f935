// ControlStore: what the control loop writes through, objects and trials'
// observation logs alike, so that an API write made through the loop
// (server/backend.h) can check an object and append to its log in one
// durable step.
#pragma once

#include "store/object_store.h"
#include "store/observation_log.h"

namespace trainyard::store {

class ControlStore : public ObjectStore, public ObservationLog {};

}  // namespace trainyard::store
