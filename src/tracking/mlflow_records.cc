// The tracking API's records: runs and experiments as the store keeps them,
// a job's or trial's run made from it, and MLflow's Run document
// (mlflow_internal.h).
#include "tracking/mlflow_records.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "api/json.h"
#include "api/object.h"
#include "api/registry.h"
#include "api/tracking.h"
#include "common/strings.h"
#include "tracking/mlflow_methods.h"

namespace trainyard::tracking::mlflow {

namespace {

std::string RunNotFound(const std::string& run_id) {
  return fmt::format("Run with id={} not found", run_id);
}

// MLflow's status of a job or trial that has not set one itself.
std::string StatusOf(const api::Json& owner) {
  std::optional<std::string> outcome = api::JobOutcome(owner);
  if (!outcome) return "RUNNING";
  return *outcome == "Succeeded" ? "FINISHED" : "FAILED";
}

int64_t Millis(TimePoint t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

// When a job or trial ended: its ending condition's time, else its
// completionTime; nothing while it runs.
std::optional<int64_t> EndedMillis(const api::Json& owner) {
  if (!api::JobOutcome(owner)) return std::nullopt;
  for (const char* type : {"Succeeded", "Complete", "Completed", "Failed"}) {
    for (const api::Json& c : api::ArrayRefAt(owner, {"status", "conditions"})) {
      if (api::StringAt(c, "type") != type || api::StringAt(c, "status") != "True") continue;
      if (std::optional<TimePoint> t = ParseRfc3339(api::StringAt(c, "lastTransitionTime"))) {
        return Millis(*t);
      }
    }
  }
  std::optional<TimePoint> done = ParseRfc3339(api::StringAt(owner, {"status", "completionTime"}));
  if (done) return Millis(*done);
  return std::nullopt;
}

// A job's run its code never ended shows the job's own end.
void ShowOwnersEnd(const api::Json& owner, Run& run) {
  if (api::StringAt(run.info, "status") != "RUNNING") return;
  run.info["status"] = StatusOf(owner);
  if (std::optional<int64_t> end = EndedMillis(owner); end && !run.info.contains("end_time")) {
    run.info["end_time"] = *end;
  }
}

int64_t CreatedMillis(const api::Json& object) {
  std::optional<TimePoint> created =
      ParseRfc3339(api::StringAt(object, {"metadata", "creationTimestamp"}));
  if (!created) return 0;
  return std::chrono::duration_cast<std::chrono::milliseconds>(created->time_since_epoch()).count();
}

// An argument as a shell would need it written: as it is when it holds
// nothing a shell reads specially.
std::string QuotedIfNeeded(const std::string& arg) {
  bool plain = !arg.empty() && std::all_of(arg.begin(), arg.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 ||
           std::string_view("_-./=:,@%+").find(c) != std::string_view::npos;
  });
  return plain ? arg : ShellQuote(arg);
}

// What a job or trial was run with, as MLflow params: a trial's parameter
// assignments; a job's main container's command and arguments
// (`trainyard.command`) and literal env values (`trainyard.env.NAME`;
// never a value from a Secret or ConfigMap).
api::Json DerivedParams(const std::string& kind, const api::Json& owner) {
  api::Json params = api::Json::array();
  auto add = [&](std::string key, std::string value) {
    if (value.size() > kMaxParamValue) {
      // Cut at a character's start: half a UTF-8 character is no JSON.
      size_t n = kMaxParamValue;
      while (n > 0 && (static_cast<unsigned char>(value[n]) & 0xC0) == 0x80) --n;
      value.resize(n);
    }
    params.push_back({{"key", std::move(key)}, {"value", std::move(value)}});
  };
  if (api::TrackingOf(kind) == api::Tracking::kPushed) {
    for (const api::Json& p : api::ArrayRefAt(owner, {"spec", "parameterAssignments"})) {
      add(api::StringAt(p, "name"), api::StringAt(p, "value"));
    }
    return params;
  }
  const api::JobShape* shape = api::JobShapeOf(kind);
  const api::Json* container = shape != nullptr ? shape->main_container(owner) : nullptr;
  if (container == nullptr) return params;
  std::vector<std::string> argv;
  for (const char* field : {"command", "args"}) {
    for (const api::Json& a : api::ArrayRefAt(*container, {field})) {
      if (a.is_string()) argv.push_back(QuotedIfNeeded(a.get<std::string>()));
    }
  }
  if (!argv.empty()) add("trainyard.command", Join(argv, " "));
  for (const api::Json& e : api::ArrayRefAt(*container, {"env"})) {
    std::string name = api::StringAt(e, "name");
    if (!name.empty() && e.contains("value") && e["value"].is_string()) {
      add("trainyard.env." + name, e["value"].get<std::string>());
    }
  }
  return params;
}

// The run a job or trial is before anything was logged to it.
Run OwnersRun(const api::TrackedObject& owned, const api::Json& owner, const std::string& ns,
              const std::string& run_id) {
  Run run;
  run.info = {{"run_id", run_id},
              {"run_uuid", run_id},
              {"run_name", owned.name},
              {"experiment_id", kDefaultExperiment},
              {"user_id", ""},
              {"status", "RUNNING"},
              {"start_time", CreatedMillis(owner)},
              {"artifact_uri", fmt::format("mlflow-artifacts:/{}/{}/artifacts", ns, run_id)},
              {"lifecycle_stage", "active"}};
  run.params = api::Json::array();
  run.derived_params = DerivedParams(owned.kind, owner);
  run.tags = api::Json::array({{{"key", "mlflow.runName"}, {"value", owned.name}},
                               {{"key", "trainyard.dev/kind"}, {"value", owned.kind}}});
  run.metrics_log = api::TrackingOf(owned.kind) == api::Tracking::kPushed
                        ? ns + "/" + owned.name
                        : store::JobObservationsId(owned.kind, ns, owned.name);
  ShowOwnersEnd(owner, run);
  run.owner_uid = api::StringAt(owner, {"metadata", "uid"});
  run.owner_ref = {{"apiVersion", api::StringAt(owner, "apiVersion")},
                   {"kind", owned.kind},
                   {"name", owned.name},
                   {"uid", run.owner_uid}};
  return run;
}

}  // namespace

namespace {

// The job or trial `run_id` names, as stored; nothing when it names none
// (a client's run) or that object is gone.
Result<std::optional<api::Json>> OwnerOf(const store::ObjectReader& store,
                                         const std::string& namespace_, const std::string& run_id,
                                         std::optional<api::TrackedObject>& owned) {
  owned = api::TrackedObjectOf(run_id);
  const api::ResourceType* type = owned ? api::ResourceTypeOfKind(owned->kind) : nullptr;
  if (type == nullptr || api::TrackingRunId(owned->kind, owned->name) != run_id) {
    return std::optional<api::Json>();
  }
  Result<api::Json> owner = store.Get({type->store_kind, namespace_, owned->name});
  if (owner.status().code() == StatusCode::kNotFound) return std::optional<api::Json>();
  RETURN_IF_ERROR(owner.status());
  return std::optional<api::Json>(std::move(*owner));
}

}  // namespace

Result<Run> LoadRun(const store::ObjectReader& store, const std::string& namespace_,
                    const std::string& run_id) {
  std::optional<api::TrackedObject> owned;
  ASSIGN_OR_RETURN(std::optional<api::Json> owner, OwnerOf(store, namespace_, run_id, owned));
  Result<api::Json> kept = store.Get({std::string(kRunKind), namespace_, run_id});
  if (!kept.ok() && kept.status().code() != StatusCode::kNotFound) return kept.status();
  if (kept.ok()) {
    const api::Json& spec = (*kept)["spec"];
    Run run{.info = api::ObjectAt(spec, "info"),
            .params = api::ArrayRefAt(spec, "params"),
            .tags = api::ArrayRefAt(spec, "tags"),
            .metrics_log = api::StringAt(spec, "metricsLog"),
            .owner_uid = api::StringAt(spec, "ownerUid"),
            .owner_ref = nullptr,
            .stored = true};
    for (const api::Json& ref : api::ArrayRefAt(*kept, {"metadata", "ownerReferences"})) {
      run.owner_ref = ref;
    }
    // A job's run kept from an earlier job of the same name (deleted before
    // its run was collected) is not this job's: this one starts afresh.
    bool earlier = !run.owner_uid.empty() &&
                   (!owner || api::StringAt(*owner, {"metadata", "uid"}) != run.owner_uid);
    if (!earlier) {
      // A replica killed, or a job failed, never says its run ended: the
      // job's own state does.
      if (owner) ShowOwnersEnd(*owner, run);
      if (owner) run.derived_params = DerivedParams(owned->kind, *owner);
      return run;
    }
  }
  if (!owner) return NotFoundError(RunNotFound(run_id));
  Run run = OwnersRun(*owned, *owner, namespace_, run_id);
  run.stored = kept.ok();  // an earlier job's, to be replaced
  return run;
}

std::string RunOfToken(const store::ObjectReader& store, const std::string& namespace_,
                       const std::string& token) {
  if (token.empty()) return "";
  std::vector<std::string> kinds = api::JobKindNames();
  kinds.emplace_back("Trial");
  std::string found;
  for (const std::string& kind : kinds) {
    const api::ResourceType* type = api::ResourceTypeOfKind(kind);
    if (type == nullptr) continue;
    (void)store.Scan(type->store_kind, namespace_, [&](const api::Json& object) {
      if (ConstantTimeEquals(api::StringAt(object, {"metadata", "uid"}), token)) {
        found = api::TrackingRunId(kind, api::StringAt(object, {"metadata", "name"}));
      }
    });
    if (!found.empty()) break;
  }
  return found;
}

Status SaveRun(store::ObjectStore& store, const std::string& namespace_, const Run& run) {
  std::string run_id = api::StringAt(run.info, "run_id");
  api::Json metadata = {{"name", run_id}, {"namespace", namespace_}};
  if (!run.owner_ref.is_null()) {
    // Deleted with its job or trial, whatever the kind, by the engine's
    // garbage collector (controller/owned.h).
    metadata["ownerReferences"] = api::Json::array({run.owner_ref});
  }
  api::Json object = {{"apiVersion", "trainyard.dev/v1"},
                      {"kind", kRunKind},
                      {"metadata", std::move(metadata)},
                      {"spec",
                       {{"info", run.info},
                        {"params", run.params},
                        {"tags", run.tags},
                        {"metricsLog", run.metrics_log},
                        {"ownerUid", run.owner_uid}}}};
  if (!run.stored) return store.Create(std::move(object)).status();
  ASSIGN_OR_RETURN(api::Json kept, store.Get({std::string(kRunKind), namespace_, run_id}));
  object["metadata"]["resourceVersion"] = kept["metadata"]["resourceVersion"];
  object["metadata"]["uid"] = kept["metadata"]["uid"];
  object["metadata"]["creationTimestamp"] = kept["metadata"]["creationTimestamp"];
  return store.Update(std::move(object)).status();
}

std::string RunArtifactsDir(const std::string& root, const std::string& namespace_,
                            const Run& run) {
  if (root.empty()) return "";
  std::string folder = run.owner_uid.empty() ? api::StringAt(run.info, "run_id") : run.owner_uid;
  return api::ArtifactsDirOf(root, namespace_, folder);
}

api::Json RunJson(const Run& run, const store::ObservationSummary& metrics,
                  const std::string& output_dir) {
  // The latest value of each metric: at its highest step, then time.
  api::Json values = api::Json::array();
  for (const store::ObservationSeries& series : metrics.series) {
    if (series.count == 0) continue;
    values.push_back({{"key", series.metric},
                      {"value", MetricJson(series.top.value)},
                      {"timestamp", series.top.time_us / 1000},
                      {"step", series.top.StepOrIndex()}});
  }
  // What the job was run with, unless its code logged the same key itself.
  api::Json params = run.params;
  for (const api::Json& derived : run.derived_params) {
    bool logged = std::any_of(run.params.begin(), run.params.end(), [&](const api::Json& p) {
      return api::StringAt(p, "key") == api::StringAt(derived, "key");
    });
    if (!logged) params.push_back(derived);
  }
  api::Json info = run.info;
  if (!run.owner_uid.empty() && !output_dir.empty()) info["artifact_uri"] = "file://" + output_dir;
  return {
      {"info", std::move(info)},
      {"data", {{"metrics", std::move(values)}, {"params", std::move(params)}, {"tags", run.tags}}},
      {"inputs", api::Json::object()}};
}

namespace {

api::Json DefaultExperiment() {
  return {{"experiment_id", kDefaultExperiment},
          {"name", "Default"},
          {"artifact_location", "mlflow-artifacts:/0"},
          {"lifecycle_stage", "active"},
          {"creation_time", 0},
          {"last_update_time", 0},
          {"tags", api::Json::array()}};
}

}  // namespace

Result<api::Json> LoadExperiment(const store::ObjectReader& store, const std::string& namespace_,
                                 const std::string& id) {
  if (id == kDefaultExperiment) return DefaultExperiment();
  Result<api::Json> kept = store.Get({std::string(kExperimentKind), namespace_, id});
  if (kept.status().code() == StatusCode::kNotFound) {
    return NotFoundError(fmt::format("No Experiment with id={} exists", id));
  }
  RETURN_IF_ERROR(kept.status());
  return (*kept)["spec"];
}

Result<std::vector<api::Json>> ListExperiments(const store::ObjectReader& store,
                                               const std::string& namespace_) {
  std::vector<api::Json> all = {DefaultExperiment()};
  RETURN_IF_ERROR(store.Scan(std::string(kExperimentKind), namespace_,
                             [&](const api::Json& e) { all.push_back(e["spec"]); }));
  return all;
}

}  // namespace trainyard::tracking::mlflow
