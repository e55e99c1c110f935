// The tracking API's methods (server/mlflow_api.h serves them over HTTP),
// one function each, and what they share in checking a request.
#pragma once

#include <string>
#include <vector>

#include "tracking/backend.h"
#include "tracking/mlflow_records.h"

namespace trainyard::tracking::mlflow {

struct Call {
  TrackingBackend& backend;
  const Clock& clock;
  std::string namespace_;
  Args args;
  // The run of the job or trial whose replica calls (by its token), for
  // the experiment methods: a replica that names an experiment
  // (mlflow.set_experiment) moves its job's run there, as MLflow's client
  // then expects the run it was given to be in it. Empty otherwise.
  std::string caller_run;
};

// MLflow's bounds (its store's), and ours on what one run keeps.
inline constexpr size_t kMaxKey = 250;
inline constexpr size_t kMaxParamValue = 6000;
inline constexpr size_t kMaxTagValue = 8000;
inline constexpr size_t kMaxPairsPerRun = 1000;  // params, and tags
inline constexpr size_t kMaxBatchMetrics = 1000;
inline constexpr size_t kMaxBatchParams = 100;
inline constexpr size_t kMaxBatchTags = 100;

// `field` of `doc`: a list of {key, value}, each key 1 to 250 characters
// and each value at most `max_value` (absent: an empty list).
Result<api::Json> CheckedPairs(const api::Json& doc, const std::string& field, size_t max_value);
Status CheckKey(const std::string& key, const std::string& field);
// `filter` and `order_by` are MLflow's query language, which this server
// does not read: a search that gives them is refused rather than answered
// as if they were not there.
Status RefuseQueryLanguage(const Args& args);
// Whether a lifecycle stage is in a view_type / run_view_type
// (ACTIVE_ONLY, the default; DELETED_ONLY; ALL).
bool InView(const std::string& view, const std::string& stage);
// `items` from page_token on, max_results of them (default 1000, at most
// 50000), as {<field>: [...], next_page_token}.
Result<api::Json> Paged(const Args& args, std::vector<api::Json> items, const std::string& field);

Result<api::Json> CreateExperiment(Call& call);
Result<api::Json> GetExperiment(Call& call);
Result<api::Json> GetExperimentByName(Call& call);
Result<api::Json> SearchExperiments(Call& call);
Result<api::Json> CreateRun(Call& call);
Result<api::Json> GetRun(Call& call);
Result<api::Json> UpdateRun(Call& call);
Result<api::Json> DeleteRun(Call& call);
Result<api::Json> RestoreRun(Call& call);
Result<api::Json> SearchRuns(Call& call);
Result<api::Json> LogMetric(Call& call);
Result<api::Json> LogParam(Call& call);
Result<api::Json> SetTag(Call& call);
Result<api::Json> DeleteTag(Call& call);
Result<api::Json> LogBatch(Call& call);
Result<api::Json> GetMetricHistory(Call& call);

}  // namespace trainyard::tracking::mlflow
