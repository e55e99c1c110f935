// Pod Security as Kubernetes' admission applies it, for the one rule that
// matters on a machine whose replicas share a filesystem: a `baseline`
// namespace's pods may not mount hostPath volumes, which reach past the
// namespace into the machine's files. A namespace is `privileged` when an
// administrator labels it `pod-security.kubernetes.io/enforce=privileged`.
// The API server refuses such objects at admission (server/pod_security.h);
// the node agent refuses to start such pods, whoever made them.
#pragma once

#include <string>
#include <vector>

#include "api/json.h"

namespace trainyard::api {

inline constexpr const char* kPodSecurityEnforceLabel = "pod-security.kubernetes.io/enforce";

// The names of the hostPath volumes anywhere in `object`: its pod
// templates, and the job templates an Experiment carries.
std::vector<std::string> HostPathVolumes(const Json& object);

// Whether the Namespace object `ns` (null: none) is labelled privileged.
bool PrivilegedNamespace(const Json* ns);

}  // namespace trainyard::api
