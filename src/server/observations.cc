// GET .../trials/NAME/observations: a trial's observation log, the metric
// values collected for it in order, as Katib's GetObservationLog returns
// them (metricLogs of timeStamp and metric name/value).
#include <fmt/format.h>

#include <chrono>

#include "server/api_status.h"
#include "server/handler.h"

namespace trainyard::server {
namespace {

// RFC 3339 with microseconds, as Katib's DB manager writes times.
std::string FormatMicros(int64_t time_us) {
  TimePoint t{std::chrono::duration_cast<Duration>(std::chrono::microseconds(time_us))};
  std::string seconds = FormatRfc3339(t);  // "...:SSZ"
  int64_t micros = ((time_us % 1'000'000) + 1'000'000) % 1'000'000;
  seconds.pop_back();
  return fmt::format("{}.{:06}Z", seconds, micros);
}

}  // namespace

ApiResponse ApiHandler::Observations(const ApiTarget& target) {
  const Resource& r = *target.resource;
  Result<api::Json> trial = backend_.store().Get({r.kind, target.namespace_, target.name});
  if (!trial.ok()) return ErrorResponse(ApiErrorOf(trial.status(), &r, target.name));
  Result<std::vector<store::ObservationRow>> rows =
      backend_.store().ListObservations(target.namespace_ + "/" + target.name);
  if (!rows.ok()) return ErrorResponse(ApiErrorOf(rows.status(), &r, target.name));
  api::Json logs = api::Json::array();
  for (const store::ObservationRow& row : *rows) {
    logs.push_back({{"timeStamp", FormatMicros(row.time_us)},
                    {"metric", {{"name", row.metric}, {"value", row.value}}}});
  }
  return Object(200, {{"apiVersion", "kubeflow.org/v1beta1"},
                      {"kind", "ObservationLog"},
                      {"metadata", {{"name", target.name}, {"namespace", target.namespace_}}},
                      {"metricLogs", std::move(logs)}});
}

}  // namespace trainyard::server
