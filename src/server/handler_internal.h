// What handler.cc (reads) and handler_writes.cc (writes) share.
#pragma once

#include <optional>
#include <string>

#include "api/json.h"
#include "server/api_status.h"
#include "server/field_managers.h"
#include "server/handler.h"

namespace trainyard::server::internal {

inline ApiError BadRequest(const std::string& message) {
  return MakeApiError(400, "BadRequest", message);
}

// kube-apiserver's 415 for a body in a format it does not read. (A request
// without a Content-Type is read as JSON or YAML, for curl's sake.)
std::optional<ApiError> UnsupportedBody(const ApiRequest& request);
// A request body: one JSON (or YAML) object.
Result<api::Json> ParseBody(const ApiRequest& request);

// What a GET is, in Kubernetes' words: "watch", "list" or "get".
std::string ReadVerb(const ApiRequest& request, bool collection);

// The container of `pod` a pods/log or pods/exec request names
// (`?container=`, else the pod's first), or the 400 to answer when the pod
// has no container of that name, init containers included.
Result<std::string> RequestedContainer(const api::Json& pod, const ApiRequest& request);
// That container's status, from either list; null when it has none yet.
const api::Json* ContainerStatusOf(const api::Json& pod, const std::string& container);

// Who makes a write, for managedFields: ?fieldManager=, else the client's
// User-Agent up to its first '/' (as kube-apiserver names it), else
// "unknown"; with `object`'s apiVersion and the time.
FieldManager ManagerOf(const ApiRequest& request, const api::Json& object, const Clock& clock);

}  // namespace trainyard::server::internal
