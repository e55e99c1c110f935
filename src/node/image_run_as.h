// Whom a container runs as in its image's root. trainyard's run-as rules
// come first (a root trainyard runs replicas as nobody, or as their
// namespace's own user, so that one namespace's replicas cannot reach
// another's files); where they leave it to the pod (`--run-as root`), the
// pod says as on Kubernetes: securityContext.runAsUser and runAsGroup (the
// container's over the pod's), else the image's USER, read in the image's
// own user database (image/image_user.h), with the pod's
// supplementalGroups added to the user's groups.
#pragma once

#include <optional>

#include "api/pod.h"
#include "common/status.h"
#include "node/container_env.h"
#include "node/image_root.h"
#include "runtime/local/credentials.h"

namespace trainyard::node {

// `chosen` is what the run-as rules give (unset: trainyard's own user,
// root). Sets HOME in `env` as containerd gives it: the container's own,
// else the image's ENV, else the user's home in the image's user database,
// else "/" (the image's database read once for both). FAILED_PRECONDITION,
// as the kubelet's CreateContainerConfigError, when runAsNonRoot is set and
// the container would run as root; NOT_FOUND for a user the image does not
// have.
Result<std::optional<runtime::Credentials>> ImageRunAs(const api::Pod& pod,
                                                       const api::Container& container,
                                                       const ImageRoot& root,
                                                       std::optional<runtime::Credentials> chosen,
                                                       EnvList& env);

}  // namespace trainyard::node
