#include "node/service_account.h"

#include <fmt/format.h>

#include <algorithm>

namespace trainyard::node {
bool MountsServiceAccount(const api::Pod& pod, const api::Container& container) {
  if (api::StringAt(pod.spec.extra, "serviceAccountName").empty()) return false;
  const api::Json* mount = api::FindAt(pod.spec.extra, {"automountServiceAccountToken"});
  if (mount != nullptr && mount->is_boolean() && !mount->get<bool>()) return false;
  return std::none_of(container.volume_mounts.begin(), container.volume_mounts.end(),
                      [](const api::VolumeMount& m) {
                        std::string_view path = m.mount_path;
                        while (path.size() > 1 && path.ends_with('/')) path.remove_suffix(1);
                        return path == kServiceAccountDir;
                      });
}

void AddApiAccessEnv(const ApiAccess& access, EnvList& env) {
  std::string host =
      access.host.find(':') != std::string::npos ? "[" + access.host + "]" : access.host;
  env.emplace_back("KUBERNETES_SERVICE_HOST", access.host);
  env.emplace_back("KUBERNETES_SERVICE_PORT", access.port);
  env.emplace_back("KUBERNETES_SERVICE_PORT_HTTPS", access.port);
  env.emplace_back("KUBERNETES_PORT", fmt::format("tcp://{}:{}", host, access.port));
}

Result<Mount> PrepareServiceAccount(const api::Pod& pod, const api::Container& container,
                                    const ApiAccess& access, const PodVolumeDirs& dirs,
                                    const std::optional<FileOwner>& owner) {
  std::vector<MemoryFile> files = {{"token", access.token, 0600}};
  if (!access.ca_pem.empty()) files.push_back({"ca.crt", access.ca_pem});
  files.push_back({"namespace", pod.metadata.namespace_});
  return PrepareMemoryFiles(dirs, "..serviceaccount-" + container.name, files,
                            std::string(kServiceAccountDir), owner);
}

Result<Mount> PrepareMemoryFiles(const PodVolumeDirs& dirs, const std::string& folder,
                                 const std::vector<MemoryFile>& files,
                                 const std::string& mount_path,
                                 const std::optional<FileOwner>& owner) {
  ASSIGN_OR_RETURN(HeldDir root, HeldDir::OpenOwn(dirs.memory, 0711));
  RETURN_IF_ERROR(root.Remove(folder));
  ASSIGN_OR_RETURN(HeldDir dir, root.Child(folder, 0700));
  for (const MemoryFile& file : files) {
    RETURN_IF_ERROR(dir.WriteFile(file.name, file.content, file.mode, owner));
  }
  if (owner) RETURN_IF_ERROR(GiveTree(dir.path(), *owner));
  return Mount{.mount_path = mount_path, .host_path = dir.path(), .read_only = true};
}

}  // namespace trainyard::node
