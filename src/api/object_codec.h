// The codec of each typed kind, for the registry's descriptors
// (api/registry.cc); not a public API: everyone else decodes and encodes
// through DecodeObject and EncodeObject.
#pragma once

#include "api/object.h"

namespace trainyard::api::internal {

TrainingJob DecodeTrainingJobDocument(const Json& doc, JobKind kind, FieldErrors& errors);
BatchJob DecodeBatchJobDocument(const Json& doc, FieldErrors& errors);
ConfigMap DecodeConfigMapDocument(const Json& doc, FieldErrors& errors);
PolicyObject DecodePolicyDocument(const Json& doc, PolicyKind kind, FieldErrors& errors);
// Experiment, Trial and Suggestion.
template <class Obj>
Obj DecodeKatibDocument(const Json& doc, FieldErrors& errors);

Json EncodeTrainingJob(const TrainingJob& job);
Json EncodeBatchJob(const BatchJob& job);
Json EncodeConfigMap(const ConfigMap& map);
template <class Obj>
Json EncodeKatib(const Obj& object);

}  // namespace trainyard::api::internal
