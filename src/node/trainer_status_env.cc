#include "node/trainer_status_env.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "api/registry.h"
#include "api/trainer_status.h"
#include "api/well_known.h"
#include "node/service_account.h"

namespace trainyard::node {

bool ReportsTrainerStatus(const api::Pod& pod, const api::TrackedOwner& owner) {
  const api::ResourceType* type = api::ResourceTypeOfKind(owner.kind);
  auto mark = pod.metadata.annotations.find(std::string(api::kTrainerStepAnnotation));
  return type != nullptr && type->strategy.trainer_status_push &&
         mark != pod.metadata.annotations.end() && mark->second == "true";
}

void AddTrainerStatusEnv(const api::Pod& pod, const api::TrackedOwner& owner,
                         const std::string& api_url, EnvList& env) {
  auto add = [&](std::string_view name, std::string value) {
    bool set = std::any_of(env.begin(), env.end(), [&](const auto& e) { return e.first == name; });
    if (!set) env.emplace_back(name, std::move(value));
  };
  add("KUBEFLOW_TRAINER_SERVER_URL",
      api_url + api::TrainerStatusPath(pod.metadata.namespace_, owner.name));
  add("KUBEFLOW_TRAINER_SERVER_TOKEN", fmt::format("{}/token", kTrainerSecretsDir));
  add("KUBEFLOW_TRAINER_SERVER_CA_CERT", fmt::format("{}/ca.crt", kTrainerSecretsDir));
}

Result<Mount> PrepareTrainerStatusFiles(const api::Container& container,
                                        const api::TrackedOwner& owner, const std::string& ca_file,
                                        const PodVolumeDirs& dirs,
                                        const std::optional<FileOwner>& file_owner) {
  std::vector<MemoryFile> files = {{"token", owner.uid, 0600}};
  if (!ca_file.empty()) {
    std::ifstream in(ca_file);
    std::stringstream ca;
    ca << in.rdbuf();
    if (!in) return UnavailableError(fmt::format("cannot read the API's CA {}", ca_file));
    files.push_back({"ca.crt", ca.str()});
  }
  return PrepareMemoryFiles(dirs, "..trainer-" + container.name, files,
                            std::string(kTrainerSecretsDir), file_owner);
}

}  // namespace trainyard::node
