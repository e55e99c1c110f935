// The job or trial a pod's replicas log to and write their output for,
// marked on the pod by the controller that makes it
// (api::kTrackedOwnerAnnotation). Finding it walks up the controllers'
// chain (a TrainJob's pod: Job, JobSet, TrainJob; a trial's job gives its
// trial), which is the controllers' knowledge: the node agent reads the
// mark and knows nothing of jobs.
#pragma once

#include "api/pod_object.h"
#include "store/object_store.h"

namespace trainyard::controller {

// Marks `pod`, about to be created, for the owner up from its controller
// reference; a mark its template carried is replaced, or removed when the
// pod is no tracked job's.
void MarkTrackedOwner(const store::ObjectReader& store, api::Pod& pod);

}  // namespace trainyard::controller
