// A TrainJob's `status.trainerStatus` (Kubeflow Trainer v2.2, KEP-2779):
// what the trainer reports of itself (progress, time left, metrics), as
// upstream's CRD bounds it. Read from the trainer's push
// (`POST .../trainjobs/<name>/status`, server/trainer_status.cc).
#pragma once

#include <string_view>

#include "api/json.h"
#include "common/field_path.h"

namespace trainyard::api {

// Upstream's bounds: at most 256 metrics, names and values of 1 to 64
// characters (a value is a number written as a string).
inline constexpr size_t kMaxTrainerMetrics = 256;
inline constexpr size_t kMaxTrainerMetricText = 64;

// `pushed` (the push's `trainerStatus`) as it is stored: only the fields
// upstream's schema has (others are dropped, as upstream's decoder drops
// them), each checked as its CRD and CEL rules check it. Errors are
// reported at `path` ("trainerStatus.progressPercentage").
Json CheckedTrainerStatus(const Json& pushed, const FieldPath& path, FieldErrors& errors);

}  // namespace trainyard::api
