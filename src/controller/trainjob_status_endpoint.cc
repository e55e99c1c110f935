#include "controller/trainjob_status_endpoint.h"

#include "api/trainer_status.h"
#include "controller/trainjob_json.h"

namespace trainyard::controller {
namespace {

using api::Json;

constexpr char kTrainerTokenVolume[] = "kubeflow-trainer-token";
// Upstream's: the kubelet renews the token well before this.
constexpr int kTrainerTokenSeconds = 3600;

}  // namespace

std::string TrainerStatusConfigMapName(const TrainJobSource& job) {
  return job.meta.name + "-tls-config";
}

Json TrainerStatusConfigMap(const TrainJobSource& job, const std::string& ca_pem) {
  return Json{{"apiVersion", "v1"},
              {"kind", "ConfigMap"},
              {"metadata",
               {{"name", TrainerStatusConfigMapName(job)},
                {"namespace", job.meta.namespace_},
                {"ownerReferences", Json::array({OwnerReferenceTo(job)})}}},
              {"data", {{"ca.crt", ca_pem}}}};
}

void GiveTrainerStatusEndpoint(Json& replicated_job, const TrainJobSource& job,
                               const std::string& server_url) {
  std::string dir(api::kTrainerSecretsDir);
  Json& pod = trainjob::PodSpecOf(replicated_job);
  for (Json& container : pod["containers"]) {
    Json& env = container["env"];
    if (!env.is_array()) env = Json::array();
    for (auto [name, value] :
         {std::pair{"KUBEFLOW_TRAINER_SERVER_URL",
                    server_url + api::TrainerStatusPath(job.meta.namespace_, job.meta.name)},
          std::pair{"KUBEFLOW_TRAINER_SERVER_TOKEN", dir + "/token"},
          std::pair{"KUBEFLOW_TRAINER_SERVER_CA_CERT", dir + "/ca.crt"}}) {
      if (trainjob::FindNamed(env, name) == nullptr) {
        env.push_back(trainjob::EnvValue(name, std::move(value)));
      }
    }
    trainjob::UpsertNamed(
        container["volumeMounts"],
        Json{{"name", kTrainerTokenVolume}, {"mountPath", dir}, {"readOnly", true}});
  }
  Json token = {{"serviceAccountToken",
                 {{"audience", api::TrainerStatusAudience(job.meta.namespace_, job.meta.name)},
                  {"expirationSeconds", kTrainerTokenSeconds},
                  {"path", "token"}}}};
  Json ca = {{"configMap",
              {{"name", TrainerStatusConfigMapName(job)},
               {"items", Json::array({{{"key", "ca.crt"}, {"path", "ca.crt"}}})}}}};
  trainjob::UpsertNamed(pod["volumes"], Json{{"name", kTrainerTokenVolume},
                                             {"projected", {{"sources", {token, ca}}}}});
}

}  // namespace trainyard::controller
