// A trial's observation log over the API:
//  - GET .../trials/NAME/observations: the metric values collected for it
//    in order, as Katib's GetObservationLog returns them (metricLogs of
//    timeStamp and metric name/value);
//  - POST .../trials/NAME/observations: the Push collector's endpoint, what
//    Katib's report_metrics does over gRPC: the trial's own code reports
//    its metrics, and they are durable before the answer.
#include <fmt/format.h>

#include <chrono>
#include <variant>

#include "api/object.h"
#include "api/yaml.h"
#include "server/api_status.h"
#include "server/handler.h"
#include "server/handler_internal.h"
#include "server/trial_observations.h"

namespace trainyard::server {

using internal::BadRequest;

ApiResponse ApiHandler::Observations(const ApiTarget& target) {
  const Resource& r = *target.resource;
  Result<api::Json> trial = backend_.store().Get({r.kind, target.namespace_, target.name});
  if (!trial.ok()) return ErrorResponse(ApiErrorOf(trial.status(), &r, target.name));
  // A trial's log is Katib's; a job's own metrics are kept under its kind.
  std::string id = r.kind == "Trial"
                       ? target.namespace_ + "/" + target.name
                       : store::JobObservationsId(r.kind, target.namespace_, target.name);
  Result<std::vector<store::ObservationRow>> rows = backend_.store().ListObservations(id);
  if (!rows.ok()) return ErrorResponse(ApiErrorOf(rows.status(), &r, target.name));
  return Object(200, ObservationLogDocument(target.namespace_, target.name, *rows));
}

bool ApiHandler::IsTrialsOwnPush(const ApiRequest& request) const {
  std::string token = request.BearerToken();
  if (request.method != "POST" || token.empty()) return false;
  Result<ApiTarget> target = ParseApiPath(request.path);
  if (!target.ok() || target->subresource != "observations" || target->resource->kind != "Trial") {
    return false;
  }
  Result<api::Json> trial =
      backend_.store().Get({target->resource->kind, target->namespace_, target->name});
  if (!trial.ok()) return false;
  return IsTrialsToken(*trial, token);
}

ApiResponse ApiHandler::PushObservations(const ApiTarget& target, const ApiRequest& request) {
  const Resource& r = *target.resource;
  Result<api::Json> body = api::ParseJsonValue(request.body, "the request body");
  if (!body.ok()) return ErrorResponse(BadRequest(body.status().message()));
  if (!body->is_object()) {
    return ErrorResponse(BadRequest("the request body must be one JSON object"));
  }
  auto parsed = PushedRows(*body, Micros(clock_.Now()));
  if (auto* errors = std::get_if<FieldErrors>(&parsed)) {
    return ErrorResponse(InvalidError(r, target.name, *errors));
  }
  const auto& rows = std::get<std::vector<store::ObservationRow>>(parsed);
  store::ObjectKey key{r.kind, target.namespace_, target.name};
  std::optional<ApiError> refused;
  // Checked and appended in one write: the trial cannot finish in between.
  Result<api::Json> written =
      backend_.Execute([&](store::ControlStore& store) -> Result<api::Json> {
        ASSIGN_OR_RETURN(api::Json doc, store.Get(key));
        ASSIGN_OR_RETURN(api::Trial trial, StoredTrial(doc));
        refused = RefusePush(trial);
        if (refused) return api::Json();
        RETURN_IF_ERROR(store.AppendObservations(target.namespace_ + "/" + target.name, rows,
                                                 /*source=*/"", 0));
        return api::Json();
      });
  if (refused) return ErrorResponse(*refused);
  if (!written.ok()) return ErrorResponse(ApiErrorOf(written.status(), &r, target.name));
  return Object(200, PushedStatus(rows.size(), target.name));
}

}  // namespace trainyard::server
