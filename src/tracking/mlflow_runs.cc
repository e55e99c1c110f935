// The tracking API's runs: created, read, updated, searched, and what is
// logged to them (mlflow_api.h). Every write runs through the control loop
// (Backend::Execute): checked against the run as stored, then written
// whole or not at all.
#include <fmt/format.h>

#include <random>

#include "api/json.h"
#include "tracking/mlflow_methods.h"
#include "tracking/mlflow_records.h"

namespace trainyard::tracking::mlflow {
namespace {

constexpr std::string_view kStatuses[] = {"RUNNING", "SCHEDULED", "FINISHED", "FAILED", "KILLED"};

// 32 hex digits, as MLflow's own run ids.
std::string NewRunId() {
  thread_local std::mt19937_64 random{std::random_device{}()};
  return fmt::format("{:016x}{:016x}", random(), random());
}

Status CheckActive(const Run& run) {
  if (api::StringAt(run.info, "lifecycle_stage") == "deleted") {
    return InvalidArgumentError(
        fmt::format("The run {} must be in the 'active' state. Current state is deleted.",
                    api::StringAt(run.info, "run_id")));
  }
  return OkStatus();
}

// Sets `key` in a run's [{key, value}] list; a param (`once`) may be
// logged again only with the value it has.
Status SetPair(api::Json& pairs, const std::string& key, const api::Json& value, bool once,
               const std::string& run_id) {
  for (api::Json& pair : pairs) {
    if (api::StringAt(pair, "key") != key) continue;
    if (once && pair["value"] != value) {
      return InvalidArgumentError(fmt::format(
          "Changing param values is not allowed. Param with key='{}' was already logged with "
          "value='{}' for run ID='{}'. Attempted logging new value '{}'.",
          key, pair["value"].get<std::string>(), run_id, value.get<std::string>()));
    }
    pair["value"] = value;
    return OkStatus();
  }
  if (pairs.size() >= kMaxPairsPerRun) {
    return InvalidArgumentError(fmt::format("run {} holds {} {} already, the most one run keeps",
                                            run_id, kMaxPairsPerRun, once ? "params" : "tags"));
  }
  pairs.push_back({{"key", key}, {"value", value}});
  return OkStatus();
}

// One metric of a request ({key, value, timestamp, step}), as a log row.
Result<store::ObservationRow> MetricRow(const api::Json& metric, const std::string& at,
                                        const Clock& clock) {
  if (!metric.is_object())
    return InvalidArgumentError(at + ": must be {key, value, timestamp, step}");
  Args fields = Args::FromObject(metric);
  ASSIGN_OR_RETURN(std::string key, fields.Required("key"));
  RETURN_IF_ERROR(CheckKey(key, at + ".key"));
  if (!metric.contains("value")) {
    return InvalidArgumentError(fmt::format("Missing value for required parameter '{}.value'", at));
  }
  ASSIGN_OR_RETURN(std::string value, MetricText(metric["value"], at + ".value"));
  ASSIGN_OR_RETURN(std::optional<int64_t> timestamp, fields.Int("timestamp"));
  ASSIGN_OR_RETURN(int64_t ms,
                   CheckedMillis(timestamp.value_or(NowMillis(clock)), at + ".timestamp"));
  ASSIGN_OR_RETURN(std::optional<int64_t> step, fields.Int("step"));
  return store::ObservationRow{
      .time_us = ms * 1000, .metric = key, .value = value, .step = step.value_or(0)};
}

struct Logged {
  std::vector<store::ObservationRow> metrics;
  api::Json params = api::Json::array();
  api::Json tags = api::Json::array();
};

// Writes what `logged` holds to the run, all of it or, when any part is
// refused, none.
Result<api::Json> Log(Call& call, const std::string& run_id, const Logged& logged) {
  return call.backend.Execute([&](store::ControlStore& store) -> Result<api::Json> {
    ASSIGN_OR_RETURN(Run run, LoadRun(store, call.namespace_, run_id));
    RETURN_IF_ERROR(CheckActive(run));
    for (const api::Json& p : logged.params) {
      RETURN_IF_ERROR(SetPair(run.params, p["key"], p["value"], /*once=*/true, run_id));
    }
    for (const api::Json& t : logged.tags) {
      RETURN_IF_ERROR(SetPair(run.tags, t["key"], t["value"], /*once=*/false, run_id));
      if (t["key"] == "mlflow.runName") run.info["run_name"] = t["value"];
    }
    if (!logged.params.empty() || !logged.tags.empty()) {
      RETURN_IF_ERROR(SaveRun(store, call.namespace_, run));
    }
    if (!logged.metrics.empty()) {
      RETURN_IF_ERROR(store.AppendObservations(run.metrics_log, logged.metrics, "", 0));
    }
    return api::Json::object();
  });
}

// The request's own {key, value}, checked as one entry of a `field` list.
Result<api::Json> OnePair(const Args& args, const std::string& field, size_t max_value) {
  const api::Json* value = api::FindAt(args.doc(), {"value"});
  api::Json one = {{field,
                    {{{"key", api::ValueAt(args.doc(), "key")},
                      {"value", value != nullptr ? *value : api::Json("")}}}}};
  return CheckedPairs(one, field, max_value);
}

// Changes a run's info through `change`, and answers {run_info}.
template <typename Change>
Result<api::Json> UpdateInfo(Call& call, const Change& change) {
  ASSIGN_OR_RETURN(std::string run_id, call.args.RunId());
  return call.backend.Execute([&](store::ControlStore& store) -> Result<api::Json> {
    ASSIGN_OR_RETURN(Run run, LoadRun(store, call.namespace_, run_id));
    change(run);
    RETURN_IF_ERROR(SaveRun(store, call.namespace_, run));
    std::string dir = RunArtifactsDir(call.backend.ArtifactsDir(), call.namespace_, run);
    return api::Json{{"run_info", RunJson(run, store::ObservationSummary(), dir)["info"]}};
  });
}

// The rows of one metric with their steps: a value logged without one
// stands at its place among the metric's values.
std::vector<api::Json> History(const std::vector<store::ObservationRow>& rows) {
  std::vector<api::Json> out;
  for (const store::ObservationRow& row : rows) {
    out.push_back({{"key", row.metric},
                   {"value", MetricJson(row.value)},
                   {"timestamp", row.time_us / 1000},
                   {"step", row.StepOrIndex()}});
  }
  return out;
}

}  // namespace

Result<api::Json> CreateRun(Call& call) {
  std::string experiment = std::string(kDefaultExperiment);
  if (!call.args.Optional("experiment_id").empty() ||
      api::ValueAt(call.args.doc(), "experiment_id").is_number()) {
    ASSIGN_OR_RETURN(experiment, call.args.Id("experiment_id"));
  }
  ASSIGN_OR_RETURN(api::Json tags, CheckedPairs(call.args.doc(), "tags", kMaxTagValue));
  ASSIGN_OR_RETURN(std::optional<int64_t> start, call.args.Int("start_time"));
  ASSIGN_OR_RETURN(int64_t start_ms,
                   CheckedMillis(start.value_or(NowMillis(call.clock)), "start_time"));
  std::string name = call.args.Optional("run_name");
  for (const api::Json& t : tags) {
    if (name.empty() && t["key"] == "mlflow.runName") name = t["value"];
  }
  std::string run_id = NewRunId();
  if (name.empty()) name = "run-" + run_id.substr(0, 8);
  Run run{.info = {{"run_id", run_id},
                   {"run_uuid", run_id},
                   {"run_name", name},
                   {"experiment_id", experiment},
                   {"user_id", call.args.Optional("user_id")},
                   {"status", "RUNNING"},
                   {"start_time", start_ms},
                   {"artifact_uri",
                    fmt::format("mlflow-artifacts:/{}/{}/artifacts", call.namespace_, run_id)},
                   {"lifecycle_stage", "active"}},
          .params = api::Json::array(),
          .tags = std::move(tags),
          .metrics_log = store::JobObservationsId(std::string(kRunKind), call.namespace_, run_id),
          .owner_uid = "",
          .stored = false};
  RETURN_IF_ERROR(SetPair(run.tags, "mlflow.runName", name, /*once=*/false, run_id));
  return call.backend.Execute([&](store::ControlStore& store) -> Result<api::Json> {
    ASSIGN_OR_RETURN(api::Json e, LoadExperiment(store, call.namespace_, experiment));
    if (api::StringAt(e, "lifecycle_stage") == "deleted") {
      return InvalidArgumentError(fmt::format("experiment {} is deleted", experiment));
    }
    Result<api::Json> ns = store.Get({"Namespace", "", call.namespace_});
    if (!ns.ok()) {
      return NotFoundError(
          fmt::format("namespace {:?} not found: create it first", call.namespace_));
    }
    RETURN_IF_ERROR(SaveRun(store, call.namespace_, run));
    return api::Json{{"run", RunJson(run, store::ObservationSummary(), "")}};
  });
}

Result<api::Json> GetRun(Call& call) {
  ASSIGN_OR_RETURN(std::string run_id, call.args.RunId());
  const store::CommittedReader& store = call.backend.store();
  ASSIGN_OR_RETURN(Run run, LoadRun(store, call.namespace_, run_id));
  ASSIGN_OR_RETURN(store::ObservationSummary metrics, store.SummarizeObservations(run.metrics_log));
  std::string dir = RunArtifactsDir(call.backend.ArtifactsDir(), call.namespace_, run);
  return api::Json{{"run", RunJson(run, metrics, dir)}};
}

Result<api::Json> UpdateRun(Call& call) {
  std::string status = call.args.Optional("status");
  if (!status.empty() &&
      std::find(std::begin(kStatuses), std::end(kStatuses), status) == std::end(kStatuses)) {
    return InvalidArgumentError(fmt::format(
        "status: {:?} is not one of RUNNING, SCHEDULED, FINISHED, FAILED, KILLED", status));
  }
  ASSIGN_OR_RETURN(std::optional<int64_t> end, call.args.Int("end_time"));
  if (end) RETURN_IF_ERROR(CheckedMillis(*end, "end_time").status());
  std::string name = call.args.Optional("run_name");
  return UpdateInfo(call, [&](Run& run) {
    if (!status.empty()) run.info["status"] = status;
    if (end) run.info["end_time"] = *end;
    if (!name.empty()) {
      run.info["run_name"] = name;
      (void)SetPair(run.tags, "mlflow.runName", name, /*once=*/false, "");
    }
  });
}

Result<api::Json> DeleteRun(Call& call) {
  ASSIGN_OR_RETURN(api::Json updated,
                   UpdateInfo(call, [](Run& run) { run.info["lifecycle_stage"] = "deleted"; }));
  return api::Json::object();
}

Result<api::Json> RestoreRun(Call& call) {
  ASSIGN_OR_RETURN(api::Json updated,
                   UpdateInfo(call, [](Run& run) { run.info["lifecycle_stage"] = "active"; }));
  return api::Json::object();
}

Result<api::Json> SearchRuns(Call& call) {
  RETURN_IF_ERROR(RefuseQueryLanguage(call.args));
  ASSIGN_OR_RETURN(std::vector<std::string> experiments, call.args.Strings("experiment_ids"));
  if (experiments.empty()) {
    return InvalidArgumentError("experiment_ids: name at least one experiment to search");
  }
  std::string view = call.args.Optional("run_view_type");
  const store::CommittedReader& store = call.backend.store();
  std::vector<std::string> ids;
  RETURN_IF_ERROR(store.Scan(std::string(kRunKind), call.namespace_, [&](const api::Json& r) {
    const api::Json& info = r["spec"]["info"];
    bool in = std::find(experiments.begin(), experiments.end(),
                        api::StringAt(info, "experiment_id")) != experiments.end();
    if (in && InView(view, api::StringAt(info, "lifecycle_stage"))) {
      ids.push_back(api::StringAt(r, {"metadata", "name"}));
    }
  }));
  std::vector<api::Json> runs;
  for (const std::string& id : ids) {
    Result<Run> run = LoadRun(store, call.namespace_, id);
    if (!run.ok()) continue;  // deleted since the scan
    ASSIGN_OR_RETURN(store::ObservationSummary metrics,
                     store.SummarizeObservations(run->metrics_log));
    std::string dir = RunArtifactsDir(call.backend.ArtifactsDir(), call.namespace_, *run);
    runs.push_back(RunJson(*run, metrics, dir));
  }
  // Newest first, as MLflow orders a search with no order_by.
  std::stable_sort(runs.begin(), runs.end(), [](const api::Json& a, const api::Json& b) {
    return api::IntAt(a, {"info", "start_time"}) > api::IntAt(b, {"info", "start_time"});
  });
  return Paged(call.args, std::move(runs), "runs");
}

Result<api::Json> LogMetric(Call& call) {
  ASSIGN_OR_RETURN(std::string run_id, call.args.RunId());
  ASSIGN_OR_RETURN(store::ObservationRow row, MetricRow(call.args.doc(), "metric", call.clock));
  return Log(call, run_id, {.metrics = {std::move(row)}});
}

Result<api::Json> LogParam(Call& call) {
  ASSIGN_OR_RETURN(std::string run_id, call.args.RunId());
  ASSIGN_OR_RETURN(api::Json params, OnePair(call.args, "params", kMaxParamValue));
  return Log(call, run_id, {.params = std::move(params)});
}

Result<api::Json> SetTag(Call& call) {
  ASSIGN_OR_RETURN(std::string run_id, call.args.RunId());
  ASSIGN_OR_RETURN(api::Json tags, OnePair(call.args, "tags", kMaxTagValue));
  return Log(call, run_id, {.tags = std::move(tags)});
}

Result<api::Json> DeleteTag(Call& call) {
  ASSIGN_OR_RETURN(std::string run_id, call.args.RunId());
  ASSIGN_OR_RETURN(std::string key, call.args.Required("key"));
  return call.backend.Execute([&](store::ControlStore& store) -> Result<api::Json> {
    ASSIGN_OR_RETURN(Run run, LoadRun(store, call.namespace_, run_id));
    RETURN_IF_ERROR(CheckActive(run));
    size_t before = run.tags.size();
    auto& tags = run.tags.get_ref<api::Json::array_t&>();
    std::erase_if(tags, [&](const api::Json& t) { return api::StringAt(t, "key") == key; });
    if (run.tags.size() == before) {
      return NotFoundError(fmt::format("No tag with name: {} in run with id {}", key, run_id));
    }
    RETURN_IF_ERROR(SaveRun(store, call.namespace_, run));
    return api::Json::object();
  });
}

Result<api::Json> LogBatch(Call& call) {
  ASSIGN_OR_RETURN(std::string run_id, call.args.RunId());
  const api::Json& doc = call.args.doc();
  Logged logged;
  ASSIGN_OR_RETURN(logged.params, CheckedPairs(doc, "params", kMaxParamValue));
  ASSIGN_OR_RETURN(logged.tags, CheckedPairs(doc, "tags", kMaxTagValue));
  auto metrics = doc.find("metrics");
  if (metrics != doc.end() && !metrics->is_null()) {
    if (!metrics->is_array()) return InvalidArgumentError("metrics: must be a list");
    for (size_t i = 0; i < metrics->size(); ++i) {
      ASSIGN_OR_RETURN(store::ObservationRow row,
                       MetricRow((*metrics)[i], fmt::format("metrics[{}]", i), call.clock));
      logged.metrics.push_back(std::move(row));
    }
  }
  if (logged.metrics.size() > kMaxBatchMetrics || logged.params.size() > kMaxBatchParams ||
      logged.tags.size() > kMaxBatchTags) {
    return InvalidArgumentError(fmt::format(
        "a batch may hold {} metrics, {} params and {} tags at most (this one: {}, {}, {})",
        kMaxBatchMetrics, kMaxBatchParams, kMaxBatchTags, logged.metrics.size(),
        logged.params.size(), logged.tags.size()));
  }
  return Log(call, run_id, logged);
}

Result<api::Json> GetMetricHistory(Call& call) {
  ASSIGN_OR_RETURN(std::string run_id, call.args.RunId());
  ASSIGN_OR_RETURN(std::string key, call.args.Required("metric_key"));
  const store::CommittedReader& store = call.backend.store();
  ASSIGN_OR_RETURN(Run run, LoadRun(store, call.namespace_, run_id));
  ASSIGN_OR_RETURN(store::ObservationPage page,
                   store.ListObservations(run.metrics_log, {.metric = key}));
  // max_results absent: every value kept, as MLflow answers it.
  std::vector<api::Json> history = History(page.rows);
  if (!call.args.doc().contains("max_results")) {
    return api::Json{{"metrics", std::move(history)}};
  }
  return Paged(call.args, std::move(history), "metrics");
}

}  // namespace trainyard::tracking::mlflow
