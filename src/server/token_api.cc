// TokenRequest and TokenReview on the API (server/service_account_tokens.h),
// answered as kube-apiserver answers them: 201 with the object and its
// status; 404, 409 and 422 for what it refuses.
#include <fmt/format.h>

#include "api/yaml.h"
#include "server/api_status.h"
#include "server/handler.h"
#include "server/handler_internal.h"

namespace trainyard::server {

ApiResponse ApiHandler::RequestToken(const ApiTarget& target, const ApiRequest& request) {
  Result<api::Json> body = api::ParseJsonValue(request.body, "the request body");
  if (!body.ok() || !body->is_object()) {
    return ErrorResponse(internal::BadRequest("a TokenRequest is a JSON object"));
  }
  Result<api::Json> answered =
      tokens_.Request(backend_.store(), target.namespace_, target.name, *body, clock_.Now());
  if (answered.ok()) return Object(201, *answered);
  const Status& status = answered.status();
  switch (status.code()) {
    case StatusCode::kNotFound:
      return ErrorResponse(MakeApiError(404, "NotFound", std::string(status.message())));
    case StatusCode::kAborted:
      return ErrorResponse(MakeApiError(409, "Conflict", std::string(status.message())));
    case StatusCode::kFailedPrecondition:
      return ErrorResponse(MakeApiError(400, "BadRequest", std::string(status.message())));
    case StatusCode::kInvalidArgument:
      return ErrorResponse(MakeApiError(
          422, "Invalid",
          fmt::format("TokenRequest.authentication.k8s.io \"\" is invalid: {}", status.message())));
    default:
      return ErrorResponse(ApiErrorOf(status));
  }
}

ApiResponse ApiHandler::ReviewToken(const ApiRequest& request) {
  if (request.method != "POST") {
    return ErrorResponse(MakeApiError(405, "MethodNotAllowed",
                                      "the server does not allow this method on the requested "
                                      "resource (tokenreviews.authentication.k8s.io)"));
  }
  Result<api::Json> body = api::ParseJsonValue(request.body, "the request body");
  if (!body.ok() || !body->is_object() || api::StringAt(*body, {"spec", "token"}).empty()) {
    return ErrorResponse(
        MakeApiError(400, "BadRequest", "token is required for TokenReview in authentication"));
  }
  return Object(201, tokens_.Review(backend_.store(), *body, clock_.Now()));
}

}  // namespace trainyard::server
