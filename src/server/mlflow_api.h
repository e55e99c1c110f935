// An MLflow tracking server's REST API (/api/2.0/mlflow/...), answered from
// the store, so that training code that logs with MLflow's client works
// with no MLflow server: what `mlflow.log_metric` logs lands on the job or
// trial it runs in, beside the metrics trainyard collects itself.
//
// Each namespace has its own tracking API, at /mlflow/<namespace> (the
// MLFLOW_TRACKING_URI replicas are given); /api/2.0/mlflow/ is the
// "default" namespace's. Runs:
//  - every job and trial is a run already, its id naming it
//    (api/tracking.h): its metrics are the job's own metrics log (a
//    trial's, its observation log, so that a trial may report its objective
//    this way), its params and tags are kept once logged, and it goes with
//    the job;
//  - runs a client creates (runs/create) are kept on their own, in
//    experiment "0" ("Default", which always exists) or one it created.
// MLflow's own rules are kept: a missing object is 404
// RESOURCE_DOES_NOT_EXIST, a bad request 400 INVALID_PARAMETER_VALUE with
// the field named (never 408, 429 or 5xx, which MLflow's client retries for
// minutes), int64 fields are taken as numbers or strings, metric values as
// numbers or "NaN"/"Infinity"/"-Infinity", a param once logged never
// changes, and a request that fails writes nothing.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "server/api_status.h"
#include "server/backend.h"

namespace trainyard::server {

struct ApiRequest;
struct ApiResponse;

// Where a request is in the tracking API: its namespace and its method
// ("runs/log-metric").
struct MlflowPath {
  std::string namespace_;
  std::string method;
  // Of MLflow's artifacts service (/api/2.0/mlflow-artifacts/<method>,
  // mlflow_artifacts.cc), not its tracking API.
  bool artifacts_service = false;
};
// "/mlflow/<ns>/api/2.0/mlflow/<method>", or "/api/2.0/mlflow/<method>"
// for "default" (also with "preview/" before "mlflow", as older clients
// write it), and the same with "mlflow-artifacts" for "mlflow"; nothing
// for any other path.
std::optional<MlflowPath> ParseMlflowPath(std::string_view path);

class MlflowApi {
 public:
  MlflowApi(Backend& backend, const Clock& clock) : backend_(backend), clock_(clock) {}

  // Never throws; every answer is MLflow's JSON.
  ApiResponse Handle(const MlflowPath& path, const ApiRequest& request);
  // The artifacts service, for runs a client made (mlflow_artifacts.cc).
  ApiResponse HandleArtifacts(const MlflowPath& path, const ApiRequest& request);

  // Whether `request` acts on one run of a job or trial and bears, as its
  // token, that job's or trial's uid: what its replicas are given as
  // MLFLOW_TRACKING_TOKEN, good for their own run alone.
  bool IsRunsOwnRequest(const ApiRequest& request) const;

  // The API's 401 or 403 as MLflow's error document (UNAUTHENTICATED,
  // PERMISSION_DENIED).
  static ApiResponse Denied(const ApiError& error);

 private:
  Backend& backend_;
  const Clock& clock_;
};

}  // namespace trainyard::server
