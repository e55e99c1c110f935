// An API server given to pods as a service account gives it on
// Kubernetes (`trainyard run --kubeconfig`): KUBERNETES_SERVICE_HOST and
// _PORT in their environment, and its bearer token, CA and the pod's
// namespace as files at /var/run/secrets/kubernetes.io/serviceaccount,
// where client-go's and the Kubernetes python client's in-cluster
// configuration look. A pod with automountServiceAccountToken: false gets
// none of it, as on Kubernetes.
#pragma once

#include <optional>
#include <string>
#include <string_view>

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

// Whether `pod` takes the service account's token (it does unless it says
// automountServiceAccountToken: false).
bool MountsServiceAccount(const api::Pod& pod);

// The variables the kubelet sets for the `kubernetes` Service, on `env`
// (a container's own env, applied after, may still override them).
void AddApiAccessEnv(const ApiAccess& access, EnvList& env);

// Writes token, ca.crt and namespace into the pod's in-memory volumes
// (dirs.memory), anew at each start, handed to `owner`; the mount that
// puts them at kServiceAccountDir, read-only.
Result<Mount> PrepareServiceAccount(const api::Pod& pod, const ApiAccess& access,
                                    const PodVolumeDirs& dirs,
                                    const std::optional<FileOwner>& owner);

}  // namespace trainyard::node
