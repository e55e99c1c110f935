// The tracking API's experiments: "0" and those clients make, each kept as
// an MlflowExperiment object (runs are in mlflow_runs.cc).
#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "api/json.h"
#include "tracking/mlflow_methods.h"
#include "tracking/mlflow_records.h"

namespace trainyard::tracking::mlflow {
namespace {

Status CheckNamespace(const store::ObjectReader& store, const std::string& ns) {
  Result<api::Json> found = store.Get({"Namespace", "", ns});
  if (found.status().code() == StatusCode::kNotFound) {
    return NotFoundError(fmt::format("namespace {:?} not found: create it first", ns));
  }
  return found.status();
}

Result<api::Json> ExperimentByName(const store::ObjectReader& store, const std::string& ns,
                                   const std::string& name) {
  ASSIGN_OR_RETURN(std::vector<api::Json> all, ListExperiments(store, ns));
  for (api::Json& e : all) {
    if (api::StringAt(e, "name") == name) return std::move(e);
  }
  return NotFoundError(fmt::format("Could not find experiment with name '{}'", name));
}

// The caller's job's run into experiment `id` (Call::caller_run), in the
// write that is under way.
Status MoveRun(store::ControlStore& store, const Call& call, const std::string& id) {
  if (call.caller_run.empty()) return OkStatus();
  ASSIGN_OR_RETURN(Run run, LoadRun(store, call.namespace_, call.caller_run));
  if (api::StringAt(run.info, "experiment_id") == id) return OkStatus();
  run.info["experiment_id"] = id;
  return SaveRun(store, call.namespace_, run);
}

Status MoveCallersRun(Call& call, const std::string& id) {
  if (call.caller_run.empty()) return OkStatus();
  return call.backend
      .Execute([&](store::ControlStore& store) -> Result<api::Json> {
        RETURN_IF_ERROR(MoveRun(store, call, id));
        return api::Json();
      })
      .status();
}

// The next free id: one past the highest kept.
std::string NextExperimentId(const std::vector<api::Json>& all) {
  int64_t highest = 0;
  for (const api::Json& e : all) {
    std::string id = api::StringAt(e, "experiment_id");
    int64_t n = 0;
    std::from_chars(id.data(), id.data() + id.size(), n);
    highest = std::max(highest, n);
  }
  return std::to_string(highest + 1);
}

}  // namespace

Result<api::Json> CreateExperiment(Call& call) {
  ASSIGN_OR_RETURN(std::string name, call.args.Required("name"));
  if (name.size() > 500) {
    return InvalidArgumentError("name: an experiment's name may hold 500 characters at most");
  }
  ASSIGN_OR_RETURN(api::Json tags, CheckedPairs(call.args.doc(), "tags", kMaxTagValue));
  std::string location = call.args.Optional("artifact_location");
  int64_t now = NowMillis(call.clock);
  return call.backend.Execute([&](store::ControlStore& store) -> Result<api::Json> {
    RETURN_IF_ERROR(CheckNamespace(store, call.namespace_));
    if (ExperimentByName(store, call.namespace_, name).ok()) {
      return AlreadyExistsError(fmt::format("Experiment '{}' already exists", name));
    }
    ASSIGN_OR_RETURN(std::vector<api::Json> all, ListExperiments(store, call.namespace_));
    std::string id = NextExperimentId(all);
    api::Json experiment = {
        {"experiment_id", id},
        {"name", name},
        {"artifact_location", location.empty() ? "mlflow-artifacts:/" + id : location},
        {"lifecycle_stage", "active"},
        {"creation_time", now},
        {"last_update_time", now},
        {"tags", tags}};
    RETURN_IF_ERROR(store
                        .Create({{"apiVersion", "trainyard.dev/v1"},
                                 {"kind", kExperimentKind},
                                 {"metadata", {{"name", id}, {"namespace", call.namespace_}}},
                                 {"spec", std::move(experiment)}})
                        .status());
    RETURN_IF_ERROR(MoveRun(store, call, id));
    return api::Json{{"experiment_id", id}};
  });
}

Result<api::Json> GetExperiment(Call& call) {
  ASSIGN_OR_RETURN(std::string id, call.args.Id("experiment_id"));
  ASSIGN_OR_RETURN(api::Json e, LoadExperiment(call.backend.store(), call.namespace_, id));
  RETURN_IF_ERROR(MoveCallersRun(call, id));
  return api::Json{{"experiment", std::move(e)}};
}

Result<api::Json> GetExperimentByName(Call& call) {
  ASSIGN_OR_RETURN(std::string name, call.args.Required("experiment_name"));
  ASSIGN_OR_RETURN(api::Json e, ExperimentByName(call.backend.store(), call.namespace_, name));
  RETURN_IF_ERROR(MoveCallersRun(call, api::StringAt(e, "experiment_id")));
  return api::Json{{"experiment", std::move(e)}};
}

Result<api::Json> SearchExperiments(Call& call) {
  RETURN_IF_ERROR(RefuseQueryLanguage(call.args));
  ASSIGN_OR_RETURN(std::vector<api::Json> all,
                   ListExperiments(call.backend.store(), call.namespace_));
  std::string view = call.args.Optional("view_type");
  std::erase_if(
      all, [&](const api::Json& e) { return !InView(view, api::StringAt(e, "lifecycle_stage")); });
  return Paged(call.args, std::move(all), "experiments");
}

}  // namespace trainyard::tracking::mlflow
