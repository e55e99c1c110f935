// The tracking API's front: paths, the method table and MLflow's errors;
// the methods are tracking/mlflow_methods.h's.
#include "server/mlflow_api.h"

#include <fmt/format.h>

#include "api/json.h"
#include "common/strings.h"
#include "server/handler.h"
#include "server/mlflow_server.h"

namespace trainyard::server {
namespace {

using mlflow::Args;
using mlflow::Call;

// Who may call a method with a job's or trial's own token: its replicas.
enum class Scope {
  kRun,          // acts on the run its run_id names: that run's replicas
  kExperiments,  // reads or names an experiment: any job's replicas
  kNamespace,    // only a namespace's token
};

struct Method {
  std::string_view name;
  std::string_view http;  // GET or POST
  Result<api::Json> (*run)(Call&);
  Scope scope;
};

constexpr Method kMethods[] = {
    {"experiments/create", "POST", mlflow::CreateExperiment, Scope::kExperiments},
    {"experiments/get", "GET", mlflow::GetExperiment, Scope::kExperiments},
    {"experiments/get-by-name", "GET", mlflow::GetExperimentByName, Scope::kExperiments},
    {"experiments/search", "POST", mlflow::SearchExperiments, Scope::kExperiments},
    {"runs/create", "POST", mlflow::CreateRun, Scope::kNamespace},
    {"runs/get", "GET", mlflow::GetRun, Scope::kRun},
    {"runs/update", "POST", mlflow::UpdateRun, Scope::kRun},
    {"runs/delete", "POST", mlflow::DeleteRun, Scope::kRun},
    {"runs/restore", "POST", mlflow::RestoreRun, Scope::kRun},
    {"runs/search", "POST", mlflow::SearchRuns, Scope::kNamespace},
    {"runs/log-metric", "POST", mlflow::LogMetric, Scope::kRun},
    {"runs/log-parameter", "POST", mlflow::LogParam, Scope::kRun},
    {"runs/set-tag", "POST", mlflow::SetTag, Scope::kRun},
    {"runs/delete-tag", "POST", mlflow::DeleteTag, Scope::kRun},
    {"runs/log-batch", "POST", mlflow::LogBatch, Scope::kRun},
    {"metrics/get-history", "GET", mlflow::GetMetricHistory, Scope::kRun},
    {"artifacts/list", "GET", ListRunArtifacts, Scope::kRun},
};

const Method* FindMethod(std::string_view name) {
  for (const Method& m : kMethods) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

Result<Args> ArgsOf(const Method& method, const ApiRequest& request) {
  if (method.http == "GET") return Args::FromQuery(request.query);
  return Args::FromBody(request.body);
}

}  // namespace

// MLflow's error document, with the HTTP code its client expects.
ApiResponse MlflowError(int http, std::string_view code, std::string_view message) {
  ApiResponse response;
  response.code = http;
  response.body = api::Json{{"error_code", code}, {"message", message}}.dump();
  return response;
}

ApiResponse MlflowErrorOf(const Status& status) {
  const std::string& m = status.message();
  switch (status.code()) {
    case StatusCode::kNotFound:
      return MlflowError(404, "RESOURCE_DOES_NOT_EXIST", m);
    case StatusCode::kAlreadyExists:
      return MlflowError(400, "RESOURCE_ALREADY_EXISTS", m);
    case StatusCode::kInvalidArgument:
    case StatusCode::kFailedPrecondition:
    case StatusCode::kOutOfRange:
      return MlflowError(400, "INVALID_PARAMETER_VALUE", m);
    case StatusCode::kPermissionDenied:
      return MlflowError(403, "PERMISSION_DENIED", m);
    case StatusCode::kUnavailable:
      // The store, not the request: worth the client's retry.
      return MlflowError(503, "TEMPORARILY_UNAVAILABLE", m);
    default:
      return MlflowError(500, "INTERNAL_ERROR", m);
  }
}

std::optional<MlflowPath> ParseMlflowPath(std::string_view path) {
  MlflowPath parsed{.namespace_ = "default", .method = ""};
  if (path.starts_with("/mlflow/")) {
    path.remove_prefix(8);
    size_t slash = path.find('/');
    if (slash == 0 || slash == std::string_view::npos) return std::nullopt;
    parsed.namespace_ = std::string(path.substr(0, slash));
    path.remove_prefix(slash);
  }
  for (std::string_view prefix : {"/api/2.0/mlflow/", "/api/2.0/preview/mlflow/"}) {
    if (path.starts_with(prefix)) {
      parsed.method = std::string(path.substr(prefix.size()));
      return parsed;
    }
  }
  if (path.starts_with("/api/2.0/mlflow-artifacts/")) {
    parsed.method = std::string(path.substr(26));
    parsed.artifacts_service = true;
    return parsed;
  }
  return std::nullopt;
}

ApiResponse MlflowApi::Handle(const MlflowPath& path, const ApiRequest& request) {
  if (path.artifacts_service) return HandleArtifacts(path, request);
  const Method* method = FindMethod(path.method);
  if (method == nullptr) {
    return MlflowError(404, "ENDPOINT_NOT_FOUND",
                       fmt::format("this server does not serve /api/2.0/mlflow/{} (see "
                                   "docs/tracking.md for the calls it answers)",
                                   path.method));
  }
  if (request.method != method->http) {
    return MlflowError(405, "BAD_REQUEST",
                       fmt::format("/api/2.0/mlflow/{} takes {}, not {}", method->name,
                                   method->http, request.method));
  }
  Result<Args> args = ArgsOf(*method, request);
  if (!args.ok()) return MlflowErrorOf(args.status());
  Call call{.backend = backend_,
            .clock = clock_,
            .namespace_ = path.namespace_,
            .args = std::move(*args),
            .caller_run =
                method->scope == Scope::kExperiments
                    ? mlflow::RunOfToken(backend_.store(), path.namespace_, request.BearerToken())
                    : ""};
  Result<api::Json> answer = method->run(call);
  if (!answer.ok()) return MlflowErrorOf(answer.status());
  ApiResponse response;
  response.body = answer->dump();
  return response;
}

ApiResponse MlflowApi::Denied(const ApiError& error) {
  return MlflowError(error.code, error.code == 401 ? "UNAUTHENTICATED" : "PERMISSION_DENIED",
                     api::StringAt(error.body, "message", "denied"));
}

bool MlflowApi::IsRunsOwnRequest(const ApiRequest& request) const {
  std::string token = request.BearerToken();
  std::optional<MlflowPath> path = ParseMlflowPath(request.path);
  if (token.empty() || !path || path->artifacts_service) return false;
  const Method* method = FindMethod(path->method);
  if (method == nullptr || method->scope == Scope::kNamespace || request.method != method->http) {
    return false;
  }
  if (method->scope == Scope::kExperiments) {
    return !mlflow::RunOfToken(backend_.store(), path->namespace_, token).empty();
  }
  Result<Args> args = ArgsOf(*method, request);
  if (!args.ok()) return false;
  Result<std::string> run_id = args->RunId();
  if (!run_id.ok()) return false;
  Result<mlflow::Run> run = mlflow::LoadRun(backend_.store(), path->namespace_, *run_id);
  return run.ok() && !run->owner_uid.empty() && ConstantTimeEquals(run->owner_uid, token);
}

}  // namespace trainyard::server
