// On a cluster, what upstream's TrainJobStatus plugin (KEP-2779) gives a
// TrainJob's trainer pods to report their progress with: in every
// container of the trainer step, KUBEFLOW_TRAINER_SERVER_URL (the
// operator's status server, cli/operator_trainer_status.h),
// KUBEFLOW_TRAINER_SERVER_TOKEN and _CA_CERT, the paths of the files in
// the volume `kubeflow-trainer-token` mounted read-only at
// api::kTrainerSecretsDir: a service account token the kubelet makes for
// the TrainJob's own audience (api::TrainerStatusAudience), and the
// server's CA from the ConfigMap `<trainjob>-tls-config`, owned by the
// TrainJob. On one machine the node agent gives the same
// (node/trainer_status_env.h).
#pragma once

#include <string>

#include "api/json.h"
#include "controller/trainjob_build.h"

namespace trainyard::controller {

// The ConfigMap holding the CA: `<trainjob>-tls-config`, key ca.crt.
std::string TrainerStatusConfigMapName(const TrainJobSource& job);
api::Json TrainerStatusConfigMap(const TrainJobSource& job, const std::string& ca_pem);

// Gives every container of `replicated_job` (the trainer step) the
// variables and the mount, and its pods the volume; `server_url` is the
// status server's ("https://trainyard-operator.kubeflow.svc:10443").
// Variables a container sets itself stay.
void GiveTrainerStatusEndpoint(api::Json& replicated_job, const TrainJobSource& job,
                               const std::string& server_url);

}  // namespace trainyard::controller
