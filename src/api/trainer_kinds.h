// The registry hooks of Kubeflow Trainer v2's kinds (TrainJob,
// TrainingRuntime, ClusterTrainingRuntime) and of JobSet, each kept as a
// CoreObject whose fields are the typed structs of api/trainer.h and
// api/jobset.h.
#pragma once

#include <string>

#include "api/registry.h"
#include "api/trainer.h"

namespace trainyard::api {

ObjectHooks TrainJobHooks();
// `kind`: TrainingRuntime or ClusterTrainingRuntime, whose specs are one.
ObjectHooks TrainingRuntimeHooks(std::string kind);
ObjectHooks JobSetHooks();

// The typed fields of a decoded TrainJob, runtime or JobSet.
TrainJobFields TrainJobFieldsOf(const Object& object);
TrainingRuntimeFields TrainingRuntimeFieldsOf(const Object& object);
JobSetFields JobSetFieldsOf(const Object& object);

// The CRD's immutability rules: runtimeRef, initializer, trainer,
// managedBy and activeDeadlineSeconds never change once created.
FieldErrors ValidateTrainJobUpdate(const TrainJobFields& old_job, const TrainJobFields& new_job);

}  // namespace trainyard::api
