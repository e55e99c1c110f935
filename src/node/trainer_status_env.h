// What a TrainJob's trainer pods report their progress with (Kubeflow
// Trainer v2.2, KEP-2779), as upstream's TrainJobStatus plugin gives it
// them, on one machine: KUBEFLOW_TRAINER_SERVER_URL, the TrainJob's status
// endpoint on trainyard's own API (server/trainer_status.cc), and
// KUBEFLOW_TRAINER_SERVER_TOKEN and _CA_CERT, the paths of its token (the
// TrainJob's uid, which reaches that TrainJob alone) and of the API's CA,
// mounted read-only at /var/run/secrets/kubeflow/trainer. Kubeflow's SDK
// (`update_trainjob_status`) and Transformers' callback read these. Only
// pods the TrainJob controller marked as its trainer step's
// (api::kTrainerStepAnnotation) that name it as their tracked owner.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "api/pod_object.h"
#include "api/tracking.h"
#include "api/trainer_status.h"
#include "common/held_dir.h"
#include "node/container_env.h"
#include "node/volumes.h"

namespace trainyard::node {

using api::kTrainerSecretsDir;

// Whether `pod` is a trainer pod of the TrainJob `owner`.
bool ReportsTrainerStatus(const api::Pod& pod, const api::TrackedOwner& owner);

// The three variables, the API at `api_url`; what the container sets
// itself stays.
void AddTrainerStatusEnv(const api::Pod& pod, const api::TrackedOwner& owner,
                         const std::string& api_url, EnvList& env);

// The token and the API's CA (read from `ca_file`; none for HTTP) in a
// folder of `container`'s own, and its mount at kTrainerSecretsDir.
Result<Mount> PrepareTrainerStatusFiles(const api::Container& container,
                                        const api::TrackedOwner& owner, const std::string& ca_file,
                                        const PodVolumeDirs& dirs,
                                        const std::optional<FileOwner>& file_owner);

}  // namespace trainyard::node
