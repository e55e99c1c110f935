// An API server given to pods as a service account gives it on
// Kubernetes (`trainyard run --kubeconfig`): KUBERNETES_SERVICE_HOST and
// _PORT in every pod's environment, as the kubelet sets them; and its
// bearer token, CA and the pod's namespace as files at
// /var/run/secrets/kubernetes.io/serviceaccount, where client-go's and the
// Kubernetes python client's in-cluster configuration look.
//
// The token is the kubeconfig user's, whose rights are rarely a default
// service account's few: it goes only to pods that name a
// serviceAccountName (an operator's), never to one that says
// automountServiceAccountToken: false, nor into a container that mounts a
// volume of its own at that path (as the kubelet leaves it).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/pod_object.h"
#include "common/held_dir.h"
#include "common/status.h"
#include "node/container_env.h"
#include "node/volumes.h"

namespace trainyard::node {

inline constexpr std::string_view kServiceAccountDir =
    "/var/run/secrets/kubernetes.io/serviceaccount";

struct ApiAccess {
  std::string host;  // an address or a name; IPv6 without brackets
  std::string port;
  std::string token;   // empty: the server checks no one
  std::string ca_pem;  // the server's CA; empty: the system's (no file written)
};

// Whether `container` of `pod` is given the token: the pod names a
// serviceAccountName, does not say automountServiceAccountToken: false,
// and the container mounts nothing of its own at kServiceAccountDir.
bool MountsServiceAccount(const api::Pod& pod, const api::Container& container);

// The variables the kubelet sets for the `kubernetes` Service, on `env`
// (a container's own env, applied after, may still override them).
void AddApiAccessEnv(const ApiAccess& access, EnvList& env);

// Writes token, ca.crt and namespace into the pod's in-memory volumes
// (dirs.memory), a folder for each container, anew at each of its starts
// (the others', mounted in them, are never touched), handed to `owner`;
// the mount that puts them at kServiceAccountDir, read-only.
Result<Mount> PrepareServiceAccount(const api::Pod& pod, const api::Container& container,
                                    const ApiAccess& access, const PodVolumeDirs& dirs,
                                    const std::optional<FileOwner>& owner);

// Files written whole into a folder of the pod's in-memory volumes
// (dirs.memory), made anew at each start, handed to `owner`: the
// read-only mount that puts them at `mount_path`. `folder` is no volume
// name (those are DNS labels), so no volume of the pod's own is written
// over it.
struct MemoryFile {
  std::string name;
  std::string content;
  mode_t mode = 0644;
};
Result<Mount> PrepareMemoryFiles(const PodVolumeDirs& dirs, const std::string& folder,
                                 const std::vector<MemoryFile>& files,
                                 const std::string& mount_path,
                                 const std::optional<FileOwner>& owner);

}  // namespace trainyard::node
