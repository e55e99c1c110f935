// A run's artifacts over MLflow's REST API:
//  - GET /api/2.0/mlflow/artifacts/list?run_id=&path=: a level of a run's
//    artifacts, as MLflow's tracking server lists it;
//  - /api/2.0/mlflow-artifacts/artifacts/<ns>/<run>/artifacts/<path>: the
//    artifacts service MLflow's client uses for a run whose artifact_uri
//    is mlflow-artifacts: (a run a client made): GET downloads, PUT
//    uploads, GET of .../artifacts?path= lists.
// A job's or trial's run has its output folder as its artifact_uri (a
// file: URI), so its replicas' `log_artifact` writes there directly,
// whatever the size; both calls read that folder too.
#include <fmt/format.h>

#include <filesystem>

#include "common/strings.h"
#include "server/artifacts.h"
#include "server/mlflow_api.h"
#include "server/mlflow_server.h"

namespace trainyard::server {
namespace {

constexpr size_t kMaxListed = 10'000;

api::Json FileInfoJson(const Artifact& a, const std::string& path) {
  api::Json info = {{"path", path}, {"is_dir", a.directory}};
  if (!a.directory) info["file_size"] = a.size;
  return info;
}

// A level of `dir`'s artifacts at `path` ("": the top): an empty list
// where nothing is (a run that logged none), as MLflow lists it.
Result<ArtifactListing> LevelOf(const std::string& dir, const std::string& path) {
  if (dir.empty()) return ArtifactListing{};
  Result<ArtifactListing> listing = ListArtifacts(dir, path, false, kMaxListed);
  if (listing.status().code() == StatusCode::kNotFound) return ArtifactListing{};
  return listing;
}

}  // namespace

Result<api::Json> ListRunArtifacts(mlflow::Call& call) {
  ASSIGN_OR_RETURN(std::string run_id, call.args.RunId());
  std::string path = call.args.Optional("path");
  while (path.ends_with('/')) path.pop_back();
  ASSIGN_OR_RETURN(mlflow::Run run, mlflow::LoadRun(call.backend.store(), call.namespace_, run_id));
  std::string dir = mlflow::RunArtifactsDir(call.backend.ArtifactsDir(), call.namespace_, run);
  ASSIGN_OR_RETURN(ArtifactListing listing, LevelOf(dir, path));
  api::Json files = api::Json::array();
  for (const Artifact& a : listing.items) files.push_back(FileInfoJson(a, a.path));
  api::Json root = mlflow::RunJson(run, {}, dir)["info"]["artifact_uri"];
  return api::Json{{"root_uri", std::move(root)}, {"files", std::move(files)}};
}

namespace {

// The run folder and the path in it that an artifacts-service path names:
// "<namespace>/<run_id>/artifacts[/<path>]", in the namespace whose
// endpoint was called (a token reaches its own namespaces alone).
struct ServicePath {
  std::string dir;
  std::string path;   // "" the folder itself
  bool jobs = false;  // a job's or trial's output folder
};

Result<ServicePath> ResolveServicePath(Backend& backend, const std::string& namespace_,
                                       std::string_view rest) {
  std::vector<std::string> parts = SplitNonEmpty(rest, '/');
  if (parts.size() < 3 || parts[2] != "artifacts") {
    return InvalidArgumentError(fmt::format(
        "path {:?}: want <namespace>/<run_id>/artifacts[/<path>], as a run's artifact_uri "
        "gives it",
        rest));
  }
  if (parts[0] != namespace_) {
    return PermissionDeniedError(fmt::format(
        "path {:?} is in the namespace {:?}; this is {:?}'s endpoint", rest, parts[0], namespace_));
  }
  std::string root = backend.ArtifactsDir();
  if (root.empty()) return NotFoundError("this server runs no jobs, so it keeps no artifacts");
  ASSIGN_OR_RETURN(mlflow::Run run, mlflow::LoadRun(backend.store(), namespace_, parts[1]));
  std::string path;
  for (size_t i = 3; i < parts.size(); ++i) path += (path.empty() ? "" : "/") + parts[i];
  while (path.ends_with('/')) path.pop_back();
  if (!path.empty()) RETURN_IF_ERROR(CheckArtifactPath(path));
  return ServicePath{mlflow::RunArtifactsDir(root, namespace_, run), std::move(path),
                     !run.owner_uid.empty()};
}

ApiResponse Listed(const ArtifactListing& listing) {
  api::Json files = api::Json::array();
  for (const Artifact& a : listing.items) {
    files.push_back(FileInfoJson(a, a.path.substr(a.path.rfind('/') + 1)));
  }
  ApiResponse response;
  response.body = api::Json{{"files", std::move(files)}}.dump();
  return response;
}

ApiResponse Downloaded(const ServicePath& where) {
  Result<OpenedArtifact> file = OpenArtifact(where.dir, where.path);
  if (!file.ok()) {
    return MlflowError(404, "RESOURCE_DOES_NOT_EXIST", fmt::format("no artifact {:?}", where.path));
  }
  return ArtifactDownload(std::move(*file), where.path);
}

}  // namespace

ApiResponse MlflowApi::HandleArtifacts(const MlflowPath& path, const ApiRequest& request) {
  // "artifacts" (a listing) or "artifacts/<ns>/<run>/artifacts/<path>".
  std::string_view method = path.method;
  if (method != "artifacts" && !method.starts_with("artifacts/")) {
    return MlflowError(
        404, "ENDPOINT_NOT_FOUND",
        fmt::format("this server does not serve /api/2.0/mlflow-artifacts/{}", path.method));
  }
  bool listing = method == "artifacts";
  std::string rest = listing ? request.Param("path") : std::string(method.substr(10));
  Result<ServicePath> where = ResolveServicePath(backend_, path.namespace_, rest);
  if (!where.ok()) return MlflowErrorOf(where.status());
  if (listing && request.method == "GET") {
    Result<ArtifactListing> level = LevelOf(where->dir, where->path);
    return level.ok() ? Listed(*level) : MlflowErrorOf(level.status());
  }
  if (listing || where->path.empty()) {
    return MlflowError(400, "INVALID_PARAMETER_VALUE", "name a file after .../artifacts/");
  }
  if (request.method == "GET") return Downloaded(*where);
  if (request.method == "PUT") {
    // A job's folder is its replicas' (their files, their user): they
    // write there themselves, as its artifact_uri says.
    if (where->jobs) {
      return MlflowError(400, "INVALID_PARAMETER_VALUE",
                         "a job's or trial's artifacts are what its replicas write to "
                         "$TRAINYARD_OUTPUT_DIR (its run's artifact_uri): none are uploaded");
    }
    // The namespace's folder, as a job's: passed through, never listed.
    namespace fs = std::filesystem;
    fs::path ns_dir = fs::path(where->dir).parent_path();
    std::error_code ec;
    fs::create_directories(ns_dir, ec);
    for (const fs::path& dir : {ns_dir.parent_path(), ns_dir}) {
      fs::permissions(dir, fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec,
                      ec);
    }
    Status written = WriteArtifact(where->dir, where->path, request.body);
    if (!written.ok()) return MlflowErrorOf(written);
    ApiResponse response;
    response.body = "{}";
    return response;
  }
  return MlflowError(
      405, "BAD_REQUEST",
      fmt::format("{} of an artifact: this server takes GET and PUT", request.method));
}

}  // namespace trainyard::server
