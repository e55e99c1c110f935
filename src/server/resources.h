// The discovery documents kubectl and client libraries read before
// anything else, made from the resource registry (api/registry.h).
#pragma once

#include <string>
#include <vector>

#include "api/json.h"
#include "api/registry.h"

namespace trainyard::server {

// A resource as the registry describes it.
using Resource = api::ResourceType;

// The documents of /version, /api, /apis, /apis/<group>, /api/v1 and
// /apis/<group>/<version>; the latter two null when no such group version.
// The Kubernetes version this server speaks as (and its nodes' kubelets):
// clients compare it with their own, and choose by it (kubectl 1.30 on
// runs exec over WebSocket, which a 1.31 server serves).
inline constexpr std::string_view kKubernetesMinor = "31";
inline constexpr std::string_view kKubernetesVersion = "v1.31.0-trainyard";
api::Json VersionDocument();
api::Json CoreVersionsDocument();
// `api_only`: the install kinds (api::ResourceRole::kInstall) are served
// too.
api::Json GroupListDocument(bool api_only = false);
api::Json GroupDocument(const std::string& group, bool api_only = false);  // null when unknown
api::Json ResourceListDocument(const std::string& group, const std::string& version,
                               bool api_only = false);
// Whether a server serves `r` (install kinds on an API-only one alone).
bool Served(const Resource& r, bool api_only);

}  // namespace trainyard::server
