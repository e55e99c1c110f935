// A TrainJob's trainer reporting its progress (Kubeflow Trainer v2.2,
// KEP-2779): `POST /apis/trainer.kubeflow.org/v1alpha1/namespaces/<ns>/
// trainjobs/<name>/status` with `{"trainerStatus": {...}}`, as upstream's
// status server takes it: the TrainJob's uid as the bearer token (what its
// trainer's pods are given, node/trainer_status_env.h) or a token the
// server's authorizer lets update the TrainJob; the report checked as the
// CRD checks it and stored whole, in place of the last (upstream applies
// it with one field manager: a field left out is gone), its metrics also
// appended to the job's observation log; 64 KiB at most; a
// few a second per job at most (429 beyond). Answers as upstream's:
// the request back (200), 403, 404, 413, 422.
#include "api/trainer_status.h"

#include <fmt/format.h>

#include <algorithm>

#include "api/registry.h"
#include "api/yaml.h"
#include "server/api_status.h"
#include "server/handler.h"
#include "server/handler_internal.h"
#include "tracking/trial_observations.h"

namespace trainyard::server {
namespace {

// Upstream's body limit.
constexpr size_t kMaxPushBytes = 64 * 1024;

ApiError StatusError(int code, const char* reason, std::string message) {
  return MakeApiError(code, reason, std::move(message));
}

// The report's metrics as observation rows, at `now`: those whose value
// is not the last report's (`last`, its metrics), since a trainer's SDK
// sends its latest values again with every report.
std::vector<store::ObservationRow> ReportedRows(const api::Json& status, const api::Json& last,
                                                TimePoint now) {
  std::vector<store::ObservationRow> rows;
  int64_t time_us =
      std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count();
  for (const api::Json& metric : api::ArrayRefAt(status, {"metrics"})) {
    if (std::find(last.begin(), last.end(), metric) != last.end()) continue;
    rows.push_back({.time_us = time_us,
                    .metric = api::StringAt(metric, "name"),
                    .value = api::StringAt(metric, "value")});
  }
  return rows;
}

}  // namespace

bool ApiHandler::IsTrainJobsOwnPush(const ApiRequest& request) const {
  std::string token = request.BearerToken();
  if (request.method != "POST" || token.empty()) return false;
  Result<ApiTarget> target = ParseApiPath(request.path);
  if (!target.ok() || target->subresource != "status" ||
      !target->resource->strategy.trainer_status_push) {
    return false;
  }
  Result<api::Json> job =
      backend_.store().Get({target->resource->store_kind, target->namespace_, target->name});
  // The same whole comparison as a trial's uid token.
  return job.ok() && tracking::IsTrialsToken(*job, token);
}

ApiResponse ApiHandler::PushTrainerStatus(const ApiTarget& target, const ApiRequest& request) {
  const Resource& r = *target.resource;
  if (request.body.size() > kMaxPushBytes) {
    return ErrorResponse(StatusError(413, "RequestEntityTooLarge", "Payload too large"));
  }
  Result<api::Json> body = api::ParseJsonValue(request.body, "the request body");
  if (!body.ok() || !body->is_object()) {
    return ErrorResponse(StatusError(422, "Invalid", "Invalid payload"));
  }
  // Nothing to say of the trainer: answered, and the TrainJob untouched.
  const api::Json* pushed = api::FindAt(*body, {"trainerStatus"});
  if (pushed == nullptr || pushed->is_null()) return Object(200, *body);
  FieldErrors errors;
  api::Json status =
      api::CheckedTrainerStatus(*pushed, FieldPath("status").Child("trainerStatus"), errors);
  if (!errors.empty()) return ErrorResponse(InvalidError(r, target.name, errors));
  store::ObjectKey key{r.store_kind, target.namespace_, target.name};
  // Buckets only for TrainJobs that exist: their number bounds the map.
  Result<api::Json> job = backend_.store().Get(key);
  if (job.status().code() == StatusCode::kNotFound) {
    return ErrorResponse(StatusError(404, "NotFound", "Train job not found"));
  }
  if (!job.ok()) return ErrorResponse(ApiErrorOf(job.status(), &r, target.name));
  if (!trainer_pushes_.Allow(api::StringAt(*job, {"metadata", "uid"}), clock_.Now())) {
    ApiResponse slow = ErrorResponse(TrainerPushesTooFast(target.namespace_, target.name));
    slow.headers.emplace_back("Retry-After", "1");
    return slow;
  }
  Result<api::Json> written =
      backend_.Execute([&](store::ControlStore& store) -> Result<api::Json> {
        ASSIGN_OR_RETURN(api::Json job, store.Get(key));
        api::Json last = api::ArrayRefAt(job, {"status", "trainerStatus", "metrics"});
        job["status"]["trainerStatus"] = status;
        ASSIGN_OR_RETURN(api::Json stored, store.UpdateStatus(job));
        // Each report's metrics are also a point of the job's series, as
        // printed ones are: early stopping and the dashboard's charts read
        // them there (the status keeps the last report only). Not on an
        // API-only server: no collector there deletes a job's log with it.
        if (api_only_) return stored;
        RETURN_IF_ERROR(store.AppendObservations(
            store::JobObservationsId(r.kind, target.namespace_, target.name),
            ReportedRows(status, last, clock_.Now()), /*source=*/"", 0));
        return stored;
      });
  if (written.status().code() == StatusCode::kNotFound) {
    return ErrorResponse(StatusError(404, "NotFound", "Train job not found"));
  }
  if (!written.ok()) return ErrorResponse(ApiErrorOf(written.status(), &r, target.name));
  return Object(200, api::Json{{"trainerStatus", status}});
}

}  // namespace trainyard::server
