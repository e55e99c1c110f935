// A Katib trial's primary pods: those of its job, labelled with the trial,
// that match its primaryPodLabels (all of the job's pods when it names
// none). Their primary container's output is what StdOut collects.
#pragma once

#include <vector>

#include "api/json.h"
#include "api/katib.h"
#include "common/status.h"
#include "store/object_store.h"

namespace trainyard::engine {

// The uids of what a job's pods are owned by: the job itself, or the
// objects between it and its pods its kind's shape names (a TrainJob's
// JobSet's Jobs).
Result<std::vector<std::string>> PodOwnersOf(const store::ObjectReader& store,
                                             const api::Json& job);

// Found through the job's uid, so the cost is the job's pods', however many
// others the namespace holds. None while the job is not made, or is gone.
Result<std::vector<api::Json>> PrimaryPodsOf(const store::ObjectStore& store,
                                             const api::Trial& trial);

}  // namespace trainyard::engine
