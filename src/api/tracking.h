// The MLflow runs trainyard keeps for jobs and trials (server/mlflow_api.h):
// each job and each trial is a run whose id names it, so that a replica is
// given its run's id before anything is stored, and the API finds the job
// from the id alone.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "api/json.h"

namespace trainyard::api {

// "pytorchjob-digits", "trial-tune-x7k2": the lower-cased kind, '-', the
// name with each '.' as '_' (MLflow's run ids are [A-Za-z0-9_-]; names
// never hold '_').
std::string TrackingRunId(std::string_view kind, std::string_view name);

struct TrackedObject {
  std::string kind;  // "PyTorchJob", "Trial"
  std::string name;
};
// The job kind or Trial, and name, that a run id names; nothing for any
// other id (a run a client created).
std::optional<TrackedObject> TrackedObjectOf(std::string_view run_id);

// The job or trial whose run an object's replicas log to: a trial's job
// gives its trial; else the topmost job kind up the controllers' chain
// from `kind`/`name` (a TrainJob's Job: JobSet, TrainJob). `get` reads an
// object of the namespace by kind and name (nothing when missing).
struct TrackedOwner {
  std::string kind;  // a job kind, or Trial
  std::string name;
  std::string uid;
};
using ObjectLookup =
    std::function<std::optional<Json>(const std::string& kind, const std::string& name)>;
std::optional<TrackedOwner> TrackedOwnerUp(std::string kind, std::string name,
                                           const ObjectLookup& get);

// A pod's tracked owner as its job controller marks it
// (kTrackedOwnerAnnotation, "PyTorchJob/mnist/<uid>": no part of a kind,
// name or uid holds '/'), so that the node agent gives its replicas their
// run and output folder without knowing jobs.
std::string FormatTrackedOwner(const TrackedOwner& owner);
// Nothing for a value that is not three parts: a job kind or Trial, a
// name, and a uid that may name a folder (IsArtifactsFolderName).
std::optional<TrackedOwner> ParseTrackedOwner(std::string_view value);

// How the store keeps a run's params, tags and state once one is logged
// (by its id, in its namespace), and experiments clients make.
inline constexpr std::string_view kTrackingRunKind = "MlflowRun";
inline constexpr std::string_view kTrackingExperimentKind = "MlflowExperiment";

// The variables a replica is given to log to its run with MLflow's client.
inline constexpr std::string_view kMlflowUriEnv = "MLFLOW_TRACKING_URI";
inline constexpr std::string_view kMlflowRunEnv = "MLFLOW_RUN_ID";
inline constexpr std::string_view kMlflowTokenEnv = "MLFLOW_TRACKING_TOKEN";
inline constexpr std::string_view kMlflowCaEnv = "MLFLOW_TRACKING_SERVER_CERT_PATH";

// Where a namespace's tracking API is under the server's URL:
// "<url>/mlflow/<namespace>" (MLflow's client appends /api/2.0/mlflow/...).
std::string TrackingUri(std::string_view api_url, std::string_view namespace_);

// A job's output folder: what its replicas write there is kept as the
// job's artifacts after the replicas are gone, until the job is deleted.
// Each replica is told where it is in TRAINYARD_OUTPUT_DIR, and its MLflow
// run's artifact_uri is the same folder, so `mlflow.log_artifact` copies
// there too. A trial's jobs share their trial's. Named by the owner's uid,
// so a new job under an old name starts empty: <root>/<namespace>/<uid>.
inline constexpr std::string_view kOutputDirEnv = "TRAINYARD_OUTPUT_DIR";
std::string ArtifactsDirOf(std::string_view root, std::string_view namespace_,
                           std::string_view uid);
// Whether `name` may name a folder there: a namespace, a uid or a run id,
// never one that steps out of it (stores make uids, but a name is only
// joined to a path once checked).
bool IsArtifactsFolderName(std::string_view name);

}  // namespace trainyard::api
