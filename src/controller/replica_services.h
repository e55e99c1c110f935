// The headless Services a job's replicas are reached by on Kubernetes, as
// upstream's operator makes them: one per replica (none for an MPIJob),
// named as its pod, `clusterIP: None`, selecting the pod by the four
// training.kubeflow.org labels, with every named port of the replica's
// default container, owned by the job. Out-of-range ones go on scale-down.
#pragma once

#include <functional>
#include <string>

#include "api/json.h"
#include "api/pod.h"
#include "api/training_job.h"
#include "frameworks/framework.h"
#include "store/object_store.h"

namespace trainyard::controller {

api::Json BuildReplicaService(const api::TrainingJob& job, const frameworks::ReplicaRef& replica);

// Upstream's `init-pytorch` init container of a PyTorchJob's workers when it
// has a Master: it waits (up to `max_tries` times 2 s) until the master's
// Service name resolves.
api::Container PyTorchInitContainer(const api::TrainingJob& job, const std::string& image,
                                    int max_tries);

// Tells what was done: (reason, message), as upstream's events say it.
using RecordFn = std::function<Status(const std::string& reason, const std::string& message)>;

// Creates each missing Service and deletes those no replica has.
Status ReconcileServices(store::ObjectStore& store, const api::TrainingJob& job,
                         const RecordFn& record);

// Deletes the Service of `pod_name` if there is one (a finished job's
// pods go with their Services, as upstream's cleanPodPolicy does).
Status DeleteServiceOf(store::ObjectStore& store, const api::TrainingJob& job,
                       const std::string& pod_name, const RecordFn& record);

}  // namespace trainyard::controller
