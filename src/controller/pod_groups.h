// Gang scheduling on a cluster, as upstream's operator does it
// (--gang-scheduler-name; reference section 7): one PodGroup per job, named
// as the job, owned by it, with the job's annotations, for the scheduler
// the flag names:
//  - `volcano`: a scheduling.volcano.sh/v1beta1 PodGroup with minMember,
//    minResources, queue (schedulingPolicy.queue, else the group's own,
//    else "default") and priorityClassName; pods are made only once Volcano
//    has let the group in (its phase past Pending): Volcano's delayed pod
//    creation, so no partial gang holds resources; each pod is annotated
//    with its group and task;
//  - any other name (scheduler-plugins' coscheduling, or trainyard's own):
//    a scheduling.x-k8s.io/v1alpha1 PodGroup with minMember, minResources
//    and scheduleTimeoutSeconds; pods are made at once, labelled with
//    their group, and the scheduler holds them until the gang fits.
// minMember is schedulingPolicy.minAvailable or every replica; minResources
// is schedulingPolicy.minResources or what the first minMember pods request
// (limits where a container requests nothing), replica types taken in
// order of their PriorityClass' value, highest first. Each pod goes to the
// named scheduler (a template naming another keeps it, with a warning
// event). The group goes when the job finishes or is suspended.
#pragma once

#include <optional>
#include <string>

#include "api/pod_object.h"
#include "api/training_job.h"
#include "frameworks/framework.h"
#include "store/object_store.h"

namespace trainyard::controller {

inline constexpr std::string_view kVolcano = "volcano";
// scheduler-plugins' label naming a pod's group.
inline constexpr std::string_view kPodGroupLabel = "scheduling.x-k8s.io/pod-group";

// A sum of quantities as Kubernetes writes one: in the binary suffixes its
// parts were written in (1Gi + 1Gi = "2Gi") where it divides evenly, else
// in units.
std::string FormatSum(int64_t milli, bool binary);

// The store kind of the PodGroups `scheduler` takes.
std::string PodGroupKind(std::string_view scheduler);

// The PodGroup `job` needs from `scheduler`; `existing` is the group as
// stored, if any.
api::Json BuildPodGroup(const api::TrainingJob& job, const store::ObjectReader& store,
                        const api::Json* existing, std::string_view scheduler);

// Creates or updates the job's PodGroup. Whether its pods may be made now.
Result<bool> ReconcilePodGroup(store::ObjectStore& store, const api::TrainingJob& job,
                               std::string_view scheduler);

// Sends `pod` (of `replica`) to the gang scheduler. The warning to record
// when its template names another scheduler, which is kept.
std::optional<std::string> DecorateGangPod(const api::TrainingJob& job,
                                           const frameworks::ReplicaRef& replica, api::Pod& pod,
                                           std::string_view scheduler);

// Deletes the job's PodGroup, if there is one.
Status DeletePodGroup(store::ObjectStore& store, const api::TrainingJob& job,
                      std::string_view scheduler);

}  // namespace trainyard::controller
