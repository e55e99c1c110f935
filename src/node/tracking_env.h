// The MLflow variables a replica is given (api/tracking.h): where its
// namespace's tracking API is, the run its job or trial is, and the token
// that reaches that run alone, so that unmodified `mlflow.log_metric` calls
// land on the job. A container that names its own tracking server
// (MLFLOW_TRACKING_URI in its env) keeps it, untouched.
#pragma once

#include <optional>
#include <string>

#include "api/pod_object.h"
#include "api/tracking.h"
#include "node/container_env.h"

namespace trainyard::node {

using api::TrackedOwner;

// The job or trial a pod runs for, as the controller that made it marked
// it (controller/tracked_owner.h). Nothing for a pod of no controller; a
// pod created through the API loses any mark it carried (Pod's
// ApiStrategy), so it names a job's run only as its namespace's writers
// may anyway: the run and folder are always of the pod's own namespace.
std::optional<TrackedOwner> TrackedOwnerOf(const api::Pod& pod);

// Adds the variables to `env` for a pod of `owner`, with the API at
// `api_url` (and its CA file, for HTTPS).
void AddTrackingEnv(const api::Pod& pod, const TrackedOwner& owner, const std::string& api_url,
                    const std::string& ca_file, EnvList& env);

}  // namespace trainyard::node
