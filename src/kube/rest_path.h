// Where a kind's objects live in the Kubernetes REST API, from the
// resource registry: /api/v1/namespaces/NS/pods/NAME for the core group,
// /apis/GROUP/VERSION/... for the others, /status for the subresource.
#pragma once

#include <string>
#include <string_view>

#include "api/registry.h"
#include "common/status.h"

namespace trainyard::kube {

// The collection: in `namespace_`, or (empty) across all of them.
Result<std::string> CollectionPath(std::string_view kind, std::string_view namespace_);
// One object, or its `subresource` ("status", "binding", "log").
Result<std::string> ObjectPath(std::string_view kind, std::string_view namespace_,
                               std::string_view name, std::string_view subresource = "");

}  // namespace trainyard::kube
