// The Pod the job controller creates for one replica, as upstream's
// operator builds it: the replica's template, upstream's name, labels and
// owner reference, the replica's restart policy, and the framework's env
// appended after the user's. The framework's named port carries the port
// the engine chose for this replica, since all replicas share 127.0.0.1.
#pragma once

#include <string>

#include "api/pod_object.h"
#include "api/training_job.h"
#include "api/well_known.h"
#include "frameworks/framework.h"

namespace trainyard::controller {

// The job must be defaulted, valid and stored (it has a uid).
Result<api::Pod> BuildReplicaPod(const api::TrainingJob& job, const frameworks::ReplicaRef& replica,
                                 const frameworks::Placement& placement);

// The controller reference upstream puts on everything a job owns.
api::OwnerReference OwnerOf(const api::TrainingJob& job);

// The replica a pod belongs to, from its labels; nullopt for other pods.
std::optional<frameworks::ReplicaRef> ReplicaOf(const api::TrainingJob& job, const api::Pod& pod);

}  // namespace trainyard::controller
