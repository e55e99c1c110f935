// Pod Security admission (api/pod_security.h) at the API: on a server with
// tokens (several users), a namespace without the enforce label is
// `baseline`, and objects whose pods would mount hostPath volumes are
// refused there. Only an administrator, who alone may label namespaces,
// can make one `privileged`. A server without tokens has one user, who is
// its administrator: there every namespace is `privileged`.
#pragma once

#include <optional>
#include <string>

#include "api/json.h"
#include "api/pod_security.h"
#include "server/api_status.h"
#include "server/resources.h"

namespace trainyard::server {

// The 403 for an object whose pods `ns` (the Namespace, or null) forbids.
std::optional<ApiError> PodSecurityViolation(const Resource& r, const std::string& name,
                                             const api::Json& object, const api::Json* ns);

}  // namespace trainyard::server
