// Object: any manifest trainyard understands, and the codec between objects
// and JSON documents.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "api/batch_job.h"
#include "api/config_map.h"
#include "api/core_object.h"
#include "api/json.h"
#include "api/katib.h"
#include "api/scheduling.h"
#include "api/trainer.h"
#include "api/training_job.h"
#include "common/field_path.h"

namespace trainyard::api {

using Object = std::variant<TrainingJob, BatchJob, TrainJob, JobSet, ConfigMap, PolicyObject,
                            Experiment, Trial, Suggestion, CoreObject>;

// Whether objects of `kind` live in a namespace (Namespace, ClusterQueue,
// ResourceFlavor and PriorityClass do not).
bool IsNamespacedKind(std::string_view kind);

std::string_view KindName(const Object& object);
std::string_view ApiVersion(const Object& object);
const ObjectMeta& Metadata(const Object& object);
// "PyTorchJob kubeflow/pytorch-simple" (namespace omitted when unset).
std::string DisplayName(const Object& object);

struct DecodeResult {
  std::optional<Object> object;  // unset when the kind itself is unknown
  FieldErrors errors;            // wrong types, unknown fields, bad kind
};

// Reads an object from a JSON document. Decoding never stops at the first
// problem: every wrongly typed or unknown field is reported.
DecodeResult DecodeObject(const Json& document);

// Writes an object back; DecodeObject(EncodeObject(x)) == x.
Json EncodeObject(const Object& object);

// A TrainJob whose runtime does not exist is Failed with this reason until
// the runtime comes; then it goes on (upstream clears the condition).
inline constexpr std::string_view kRuntimeNotSupportedReason = "TrainingRuntimeNotSupported";

// Whether a Failed condition of `reason` ends a job for good: every one
// does but a TrainJob's missing runtime, which is waited for.
bool FailedForGood(std::string_view kind, std::string_view reason);

// How a stored job of any kind ended, from its conditions: "Succeeded"
// (a TrainJob's or batch Job's Complete, a JobSet's Completed, too) or
// "Failed" (for good: FailedForGood); nothing while it has not.
std::optional<std::string> JobOutcome(const Json& job);

}  // namespace trainyard::api
