// Gang scheduling on a cluster through Volcano, as upstream's operator does
// it (--gang-scheduler-name volcano; reference section 7):
//  - one scheduling.volcano.sh/v1beta1 PodGroup per job, named as the job,
//    owned by it, with the job's annotations: minMember is
//    schedulingPolicy.minAvailable or every replica; minResources is
//    schedulingPolicy.minResources or what the first minMember pods request
//    (limits where a container requests nothing), replica types taken in
//    order of their PriorityClass' value, highest first; queue
//    (schedulingPolicy.queue, else the group's own, else "default") and
//    priorityClassName;
//  - each pod goes to the `volcano` scheduler (a template naming another
//    keeps it, with a warning event), annotated with its group and task;
//  - pods are made only once Volcano has let the group in (its phase past
//    Pending): Volcano's delayed pod creation, so no partial gang holds
//    resources;
//  - the group goes when the job finishes or is suspended.
#pragma once

#include <optional>
#include <string>

#include "api/pod_object.h"
#include "api/training_job.h"
#include "frameworks/framework.h"
#include "store/object_store.h"

namespace trainyard::controller {

inline constexpr std::string_view kVolcano = "volcano";

// The PodGroup `job` needs; `existing` is the group as stored, if any.
api::Json BuildPodGroup(const api::TrainingJob& job, const store::ObjectReader& store,
                        const api::Json* existing);

// Creates or updates the job's PodGroup. Whether its pods may be made now.
Result<bool> ReconcilePodGroup(store::ObjectStore& store, const api::TrainingJob& job);

// Sends `pod` (of `replica`) to the gang scheduler. The warning to record
// when its template names another scheduler, which is kept.
std::optional<std::string> DecorateGangPod(const api::TrainingJob& job,
                                           const frameworks::ReplicaRef& replica, api::Pod& pod);

// Deletes the job's PodGroup, if there is one.
Status DeletePodGroup(store::ObjectStore& store, const api::TrainingJob& job);

}  // namespace trainyard::controller
