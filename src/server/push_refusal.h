// Whether a trial takes pushed metrics (Katib's Push collector), as the
// API's and the operator's observation endpoints answer it.
#pragma once

#include <optional>

#include "api/katib.h"
#include "server/api_status.h"

namespace trainyard::server {

// Why `trial` takes no pushed metrics, if it does not: its collector is
// not Push (400), or it has finished (409).
std::optional<ApiError> RefusePush(const api::Trial& trial);

}  // namespace trainyard::server
