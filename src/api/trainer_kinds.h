// The registry hooks of Kubeflow Trainer v2's kinds and of JobSet. A
// TrainJob and a JobSet are Object alternatives of their own (api/trainer.h,
// api/jobset.h); the runtimes (TrainingRuntime, ClusterTrainingRuntime)
// are CoreObjects whose fields are TrainingRuntimeFields.
#pragma once

#include <string>

#include "api/registry.h"
#include "api/trainer.h"

namespace trainyard::api {

ObjectHooks TrainJobHooks();
// `kind`: TrainingRuntime or ClusterTrainingRuntime, whose specs are one.
ObjectHooks TrainingRuntimeHooks(std::string kind);
ObjectHooks JobSetHooks();

// The typed fields of a decoded runtime.
TrainingRuntimeFields TrainingRuntimeFieldsOf(const Object& object);

// The defaults the TrainJob CRD's schema sets in a spec (runtimeRef's
// apiGroup and kind, suspend, managedBy), a TrainJob's or a template's.
void DefaultTrainJobSpec(TrainJobSpec& spec);

// A TrainJob's spec at `path` (a TrainJob's "spec", an OptimizationJob's
// trainJobTemplate.spec), as its CRD and webhook check it.
void ValidateTrainJobSpec(const TrainJobSpec& spec, const FieldPath& path, ValidationResult& out);

// The CRD's immutability rules: runtimeRef, initializer, trainer,
// managedBy and activeDeadlineSeconds never change once created.
FieldErrors ValidateTrainJobUpdate(const TrainJob& old_job, const TrainJob& new_job);

}  // namespace trainyard::api
