// The PodGroup a TrainJob's runtime asks for (podGroupPolicy), as
// upstream's coscheduling and Volcano plugins build it on a cluster: named
// as the TrainJob and owned by it; minMember every pod of its JobSet, and
// minResources what they request together (limits where a container
// requests nothing); scheduler-plugins' scheduleTimeoutSeconds, or
// Volcano's networkTopology. Without it the pods the policy marks wait
// for a group that never comes. On one machine trainyard's own scheduler
// groups the marked pods itself, and no PodGroup is made.
#pragma once

#include <optional>

#include "api/json.h"
#include "api/trainer.h"
#include "controller/trainjob_build.h"

namespace trainyard::controller {

// The PodGroup for `jobset` (as built for `job`); nullopt when the
// runtime asks for none.
std::optional<api::Json> BuildTrainJobPodGroup(const TrainJobSource& job,
                                               const api::TrainingRuntimeSpec& runtime,
                                               const api::Json& jobset);

}  // namespace trainyard::controller
