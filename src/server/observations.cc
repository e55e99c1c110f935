// A trial's observation log over the API:
//  - GET .../trials/NAME/observations: the metric values collected for it
//    in order, as Katib's GetObservationLog returns them (metricLogs of
//    timeStamp and metric name/value);
//  - POST .../trials/NAME/observations: the Push collector's endpoint, what
//    Katib's report_metrics does over gRPC: the trial's own code reports
//    its metrics, and they are durable before the answer.
#include <fmt/format.h>

#include <charconv>
#include <chrono>
#include <variant>

#include "api/object.h"
#include "api/yaml.h"
#include "server/api_status.h"
#include "server/handler.h"
#include "server/handler_internal.h"
#include "server/push_refusal.h"
#include "tracking/metric_series.h"
#include "tracking/trial_observations.h"

namespace trainyard::server {

using internal::BadRequest;

namespace {

// ?series=true&metric=M&points=N&fromStep=A&toStep=B, each but series
// optional; or the error that names what is wrong.
std::variant<tracking::SeriesOptions, ApiError> SeriesOptionsOf(const ApiRequest& request) {
  tracking::SeriesOptions options{.metric = request.Param("metric")};
  auto number = [&](const char* name, int64_t low, int64_t high) -> std::optional<int64_t> {
    std::string text = request.Param(name);
    int64_t value = 0;
    const char* end = text.data() + text.size();
    if (text.empty() || std::from_chars(text.data(), end, value).ptr != end || value < low ||
        value > high) {
      return std::nullopt;
    }
    return value;
  };
  if (!request.Param("points").empty()) {
    std::optional<int64_t> points = number("points", 1, 10'000);
    if (!points) return BadRequest("points: want a whole number from 1 to 10000");
    options.points = static_cast<size_t>(*points);
  }
  for (auto [name, into] :
       {std::pair{"fromStep", &options.from_step}, std::pair{"toStep", &options.to_step}}) {
    if (request.Param(name).empty()) continue;
    *into = number(name, INT64_MIN, INT64_MAX);
    if (!*into) return BadRequest(fmt::format("{}: want a whole number", name));
  }
  return options;
}

// ?limit=N&continue=T, as a list is paged; or the error naming what is
// wrong.
std::variant<store::ObservationQuery, ApiError> PageOf(const ApiRequest& request) {
  store::ObservationQuery query;
  std::string limit = request.Param("limit");
  if (!limit.empty()) {
    size_t n = 0;
    const char* end = limit.data() + limit.size();
    auto [stop, error] = std::from_chars(limit.data(), end, n);
    if (stop != end || error != std::errc() || n == 0) {
      return BadRequest("limit: want a whole number of 1 or more");
    }
    query.limit = n;
  }
  std::string token = request.Param("continue");
  if (!token.empty()) {
    int64_t after = 0;
    const char* end = token.data() + token.size();
    auto [stop, error] = std::from_chars(token.data(), end, after);
    if (stop != end || error != std::errc() || after < 0) {
      return BadRequest("continue: not a token this log gave; begin again without it");
    }
    query.after = after;
  }
  return query;
}

}  // namespace

ApiResponse ApiHandler::Observations(const ApiTarget& target, const ApiRequest& request) {
  const Resource& r = *target.resource;
  Result<api::Json> trial = backend_.store().Get({r.kind, target.namespace_, target.name});
  if (!trial.ok()) return ErrorResponse(ApiErrorOf(trial.status(), &r, target.name));
  // A trial's log is Katib's; a job's own metrics are kept under its kind.
  std::string id = r.strategy.tracking == api::Tracking::kPushed
                       ? target.namespace_ + "/" + target.name
                       : store::JobObservationsId(r.kind, target.namespace_, target.name);
  if (request.Flag("series")) {
    std::variant<tracking::SeriesOptions, ApiError> options = SeriesOptionsOf(request);
    if (auto* error = std::get_if<ApiError>(&options)) return ErrorResponse(*error);
    const tracking::SeriesOptions& series = std::get<tracking::SeriesOptions>(options);
    Result<store::ObservationPage> rows =
        backend_.store().ListObservations(id, {.metric = series.metric});
    if (!rows.ok()) return ErrorResponse(ApiErrorOf(rows.status(), &r, target.name));
    return Object(200, tracking::MetricSeries(rows->rows, series));
  }
  // Paged as lists are (limit, continue), a page built at a time.
  std::variant<store::ObservationQuery, ApiError> query = PageOf(request);
  if (auto* error = std::get_if<ApiError>(&query)) return ErrorResponse(*error);
  Result<store::ObservationPage> page =
      backend_.store().ListObservations(id, std::get<store::ObservationQuery>(query));
  if (!page.ok()) return ErrorResponse(ApiErrorOf(page.status(), &r, target.name));
  Result<store::ObservationSummary> summary = backend_.store().SummarizeObservations(id);
  if (!summary.ok()) return ErrorResponse(ApiErrorOf(summary.status(), &r, target.name));
  api::Json log =
      tracking::ObservationLogDocument(target.namespace_, target.name, page->rows, &*summary);
  if (page->next >= 0) log["metadata"]["continue"] = std::to_string(page->next);
  return Object(200, log);
}

bool ApiHandler::IsTrialsOwnPush(const ApiRequest& request) const {
  std::string token = request.BearerToken();
  if (request.method != "POST" || token.empty()) return false;
  Result<ApiTarget> target = ParseApiPath(request.path);
  if (!target.ok() || target->subresource != "observations" ||
      target->resource->strategy.tracking != api::Tracking::kPushed) {
    return false;
  }
  Result<api::Json> trial =
      backend_.store().Get({target->resource->kind, target->namespace_, target->name});
  if (!trial.ok()) return false;
  return tracking::IsTrialsToken(*trial, token);
}

ApiResponse ApiHandler::PushObservations(const ApiTarget& target, const ApiRequest& request) {
  const Resource& r = *target.resource;
  Result<api::Json> body = api::ParseJsonValue(request.body, "the request body");
  if (!body.ok()) return ErrorResponse(BadRequest(body.status().message()));
  if (!body->is_object()) {
    return ErrorResponse(BadRequest("the request body must be one JSON object"));
  }
  auto parsed = tracking::PushedRows(*body, tracking::Micros(clock_.Now()));
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
        ASSIGN_OR_RETURN(api::Trial trial, tracking::StoredTrial(doc));
        refused = RefusePush(trial);
        if (refused) return api::Json();
        RETURN_IF_ERROR(store.AppendObservations(target.namespace_ + "/" + target.name, rows,
                                                 /*source=*/"", 0));
        return api::Json();
      });
  if (refused) return ErrorResponse(*refused);
  if (!written.ok()) return ErrorResponse(ApiErrorOf(written.status(), &r, target.name));
  return Object(200, tracking::PushedStatus(rows.size(), target.name));
}

}  // namespace trainyard::server
