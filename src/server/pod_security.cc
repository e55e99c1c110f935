#include "server/pod_security.h"

#include <fmt/format.h>

namespace trainyard::server {

std::optional<ApiError> PodSecurityViolation(const Resource& r, const std::string& name,
                                             const api::Json& object, const api::Json* ns) {
  if (api::PrivilegedNamespace(ns)) return std::nullopt;
  std::vector<std::string> volumes = api::HostPathVolumes(object);
  if (volumes.empty()) return std::nullopt;
  std::vector<std::string> quoted;
  for (const std::string& v : volumes) quoted.push_back(fmt::format("{:?}", v));
  return MakeApiError(
      403, "Forbidden",
      fmt::format("{} \"{}\" is forbidden: violates PodSecurity \"baseline:latest\": hostPath "
                  "volume{} ({} {}): a namespace's pods may not use this machine's files "
                  "unless an administrator labels the namespace {}=privileged",
                  r.Qualified(), name, volumes.size() == 1 ? "" : "s",
                  volumes.size() == 1 ? "volume" : "volumes", fmt::join(quoted, ", "),
                  api::kPodSecurityEnforceLabel));
}

}  // namespace trainyard::server
