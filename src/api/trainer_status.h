// A TrainJob's `status.trainerStatus` (Kubeflow Trainer v2.2, KEP-2779):
// what the trainer reports of itself (progress, time left, metrics), as
// upstream's CRD bounds it. Read from the trainer's push
// (`POST .../trainjobs/<name>/status`, server/trainer_status.cc).
#pragma once

#include <string>
#include <string_view>

#include "api/json.h"
#include "common/field_path.h"

namespace trainyard::api {

// Upstream's bounds: at most 256 metrics, names and values of 1 to 64
// characters (a value is a number written as a string).
inline constexpr size_t kMaxTrainerMetrics = 256;
inline constexpr size_t kMaxTrainerMetricText = 64;

// Where a trainer pod finds its token and the endpoint's CA (upstream's
// KUBEFLOW_TRAINER_SERVER_TOKEN and _CA_CERT name the files in it).
inline constexpr std::string_view kTrainerSecretsDir = "/var/run/secrets/kubeflow/trainer";

// `pushed` (the push's `trainerStatus`) as it is stored: only the fields
// upstream's schema has (others are dropped, as upstream's decoder drops
// them), each checked as its CRD and CEL rules check it. Errors are
// reported at `path` ("trainerStatus.progressPercentage").
Json CheckedTrainerStatus(const Json& pushed, const FieldPath& path, FieldErrors& errors);

// The endpoint a TrainJob's trainer posts its status to, under the API
// (`/apis/trainer.kubeflow.org/v1alpha1/namespaces/<ns>/trainjobs/<name>/status`).
std::string TrainerStatusPath(std::string_view namespace_, std::string_view name);

// On a cluster, the audience of the service account token a TrainJob's
// trainer pods are given (upstream's, one a TrainJob: the path without its
// leading "/apis/"), so that a token reaches its own TrainJob alone.
std::string TrainerStatusAudience(std::string_view namespace_, std::string_view name);

}  // namespace trainyard::api
