// What handler.cc (reads) and handler_writes.cc (writes) share.
#pragma once

#include <string>

#include "api/json.h"
#include "server/api_status.h"
#include "server/handler.h"

namespace trainyard::server::internal {

inline ApiError BadRequest(const std::string& message) {
  return MakeApiError(400, "BadRequest", message);
}

// What a GET is, in Kubernetes' words: "watch", "list" or "get".
std::string ReadVerb(const ApiRequest& request, bool collection);

}  // namespace trainyard::server::internal
