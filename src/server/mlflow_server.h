// What the tracking API's HTTP front shares (mlflow_api.cc,
// mlflow_artifacts.cc): MLflow's error documents, and the method that
// lists a run's files. The methods themselves are tracking/'s.
#pragma once

#include <string_view>

#include "common/status.h"
#include "server/handler.h"
#include "tracking/mlflow_methods.h"

namespace trainyard::server {

namespace mlflow = tracking::mlflow;

// MLflow's error document, with the HTTP code its client expects.
ApiResponse MlflowError(int http, std::string_view code, std::string_view message);
// A status as MLflow's error: NOT_FOUND is 404 RESOURCE_DOES_NOT_EXIST, a
// bad request 400 INVALID_PARAMETER_VALUE, and so on.
ApiResponse MlflowErrorOf(const Status& status);

// artifacts/list: a run's files, one folder level (mlflow_artifacts.cc).
Result<api::Json> ListRunArtifacts(mlflow::Call& call);

}  // namespace trainyard::server
