// What handler.cc (reads) and handler_writes.cc (writes) share.
#pragma once

#include <string>

#include "api/json.h"
#include "server/api_status.h"

namespace trainyard::server::internal {

inline ApiError BadRequest(const std::string& message) {
  return MakeApiError(400, "BadRequest", message);
}

// metadata.<field> as a string, "" when absent or not a string.
std::string MetaString(const api::Json& object, const char* field);

}  // namespace trainyard::server::internal
