// What the tracking API's parts share (mlflow_api.h): a request's fields,
// and the runs and experiments as the store keeps them.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/json.h"
#include "api/tracking.h"
#include "common/clock.h"
#include "common/status.h"
#include "store/control_store.h"
#include "store/observation_log.h"

namespace trainyard::tracking::mlflow {

// The request's fields: a POST's JSON body, or a GET's query parameters.
class Args {
 public:
  static Result<Args> FromBody(std::string_view body);
  static Args FromQuery(const std::multimap<std::string, std::string>& query);
  // One object of a request's list (log-batch's metrics).
  static Args FromObject(api::Json object) {
    Args args;
    args.doc_ = std::move(object);
    return args;
  }

  // INVALID_ARGUMENT naming the field when it is missing or empty.
  Result<std::string> Required(std::string_view name) const;
  std::string Optional(std::string_view name) const;
  // An id given as a string, or as a number of one.
  Result<std::string> Id(std::string_view name) const;
  // run_id, or the run_uuid older clients send.
  Result<std::string> RunId() const;
  // An int64 given as a number or as a string of one (protobuf's JSON).
  Result<std::optional<int64_t>> Int(std::string_view name) const;
  // A list of strings ("experiment_ids"); absent: empty.
  Result<std::vector<std::string>> Strings(std::string_view name) const;
  const api::Json& doc() const { return doc_; }

 private:
  api::Json doc_ = api::Json::object();
};

// A metric value: a number, or "NaN", "Infinity", "-Infinity", or a string
// of a number; as the log keeps it: the shortest text that reads back the
// same, or one of those three words.
Result<std::string> MetricText(const api::Json& value, std::string_view field);
// The log's text back as MLflow's JSON: a number, or one of those words.
api::Json MetricJson(const std::string& text);

// Milliseconds since the epoch that fit a log's microseconds (years 1678
// to 2262); INVALID_ARGUMENT naming `field` otherwise.
Result<int64_t> CheckedMillis(int64_t ms, std::string_view field);
int64_t NowMillis(const Clock& clock);

inline constexpr std::string_view kRunKind = api::kTrackingRunKind;
inline constexpr std::string_view kExperimentKind = api::kTrackingExperimentKind;
inline constexpr std::string_view kDefaultExperiment = "0";

// A run as the API shows it, with where its metrics are logged.
struct Run {
  api::Json info;           // MLflow's RunInfo
  api::Json params;         // [{key, value}]
  api::Json tags;           // [{key, value}]
  std::string metrics_log;  // the observation log its metrics go to
  std::string owner_uid;    // the job's or trial's uid; empty for a client's run
  api::Json owner_ref;      // its ownerReference to the job or trial (null: none)
  bool stored = false;      // kept in the store (else made from its job)
  // What its job or trial was run with (a trial's assignments, a job's
  // command and env): shown with the params, never kept, never in the way
  // of a param the code logs under the same key.
  api::Json derived_params = api::Json::array();
};

// The run `run_id` in `namespace_`: kept, or a job's or trial's that has
// logged nothing to it yet; NOT_FOUND otherwise.
Result<Run> LoadRun(const store::ObjectReader& store, const std::string& namespace_,
                    const std::string& run_id);
// The run of the job or trial in `namespace_` whose uid is `token`, or "".
std::string RunOfToken(const store::ObjectReader& store, const std::string& namespace_,
                       const std::string& token);

// Keeps `run` (created, or its kept object replaced).
Status SaveRun(store::ObjectStore& store, const std::string& namespace_, const Run& run);

// MLflow's Run: {info, data: {metrics (the latest of each, from
// `metrics`' summaries), params, tags}, inputs}. A job's or trial's run
// shows its output folder, `output_dir` (where its replicas write), as its
// artifact_uri, so that MLflow's client copies `log_artifact`s straight
// there.
api::Json RunJson(const Run& run, const store::ObservationSummary& metrics,
                  const std::string& output_dir);

// Where a run's artifacts are under `root` (api::ArtifactsDirOf): its job's
// or trial's output folder, or, for a run a client made, a folder named
// by the run; "" without a root.
std::string RunArtifactsDir(const std::string& root, const std::string& namespace_, const Run& run);

// Experiments: "0" and those clients made.
Result<api::Json> LoadExperiment(const store::ObjectReader& store, const std::string& namespace_,
                                 const std::string& id);
Result<std::vector<api::Json>> ListExperiments(const store::ObjectReader& store,
                                               const std::string& namespace_);

}  // namespace trainyard::tracking::mlflow
