#include "node/service_account.h"

#include <fmt/format.h>

namespace trainyard::node {
namespace {

// Not a volume name (those are DNS labels), so no volume of the pod's
// own can be written over it.
constexpr std::string_view kFolder = "..serviceaccount";

}  // namespace

bool MountsServiceAccount(const api::Pod& pod) {
  const api::Json* mount = api::FindAt(pod.spec.extra, {"automountServiceAccountToken"});
  return mount == nullptr || !mount->is_boolean() || mount->get<bool>();
}

void AddApiAccessEnv(const ApiAccess& access, EnvList& env) {
  std::string host =
      access.host.find(':') != std::string::npos ? "[" + access.host + "]" : access.host;
  env.emplace_back("KUBERNETES_SERVICE_HOST", access.host);
  env.emplace_back("KUBERNETES_SERVICE_PORT", access.port);
  env.emplace_back("KUBERNETES_SERVICE_PORT_HTTPS", access.port);
  env.emplace_back("KUBERNETES_PORT", fmt::format("tcp://{}:{}", host, access.port));
}

Result<Mount> PrepareServiceAccount(const api::Pod& pod, const ApiAccess& access,
                                    const PodVolumeDirs& dirs,
                                    const std::optional<FileOwner>& owner) {
  ASSIGN_OR_RETURN(HeldDir root, HeldDir::OpenOwn(dirs.memory, 0711));
  RETURN_IF_ERROR(root.Remove(kFolder));
  ASSIGN_OR_RETURN(HeldDir dir, root.Child(kFolder, 0700));
  RETURN_IF_ERROR(dir.WriteFile("token", access.token, 0600, owner));
  if (!access.ca_pem.empty()) RETURN_IF_ERROR(dir.WriteFile("ca.crt", access.ca_pem, 0644, owner));
  RETURN_IF_ERROR(dir.WriteFile("namespace", pod.metadata.namespace_, 0644, owner));
  if (owner) RETURN_IF_ERROR(GiveTree(dir.path(), *owner));
  return Mount{
      .mount_path = std::string(kServiceAccountDir), .host_path = dir.path(), .read_only = true};
}

}  // namespace trainyard::node
