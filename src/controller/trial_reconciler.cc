#include "controller/trial_reconciler.h"

#include <fmt/format.h>

#include <algorithm>

#include "api/gjson.h"
#include "api/json.h"
#include "api/object.h"
#include "api/registry.h"
#include "controller/events.h"
#include "controller/katib_status.h"
#include "controller/owned.h"
#include "controller/reconcile_steps.h"
#include "controller/trial_dir.h"
#include "tune/metrics.h"

namespace trainyard::controller {
namespace {

struct Context {
  const TrialReconcilerOptions& options;
  api::Json stored;
  api::Trial trial;
  TimePoint now;
  std::string unread;  // why some of its output was given up (OutputRead)
};

std::string TrialId(const api::Trial& trial) {
  return trial.metadata.namespace_ + "/" + trial.metadata.name;
}

bool SetCondition(Context& ctx, std::string_view type, std::string_view status,
                  std::string_view reason, std::string_view message) {
  return SetKatibCondition(ctx.trial.status.conditions, type, status, reason, message, ctx.now);
}

constexpr std::string_view kMetricsVolume = "metrics-volume";  // upstream's names
constexpr std::string_view kTrialDirVolume = "suggestion-volume";

std::string Dirname(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

using EnvVars = std::vector<std::pair<std::string, std::string>>;

// What the primary container is told: its trial's name, as upstream; for
// a Push collector, where to push its metrics and the token to push with
// (the trial's uid, which the API takes for this trial's pushes alone).
EnvVars TrialEnv(const api::Trial& trial, const TrialReconcilerOptions& options) {
  EnvVars env = {{std::string(kTrialNameEnv), trial.metadata.name}};
  const auto& mc = trial.spec.metrics_collector;
  bool push = mc && mc->collector && mc->collector->kind == "Push";
  if (!push || options.api_url.empty()) return env;
  env.emplace_back(kMetricsUrlEnv, fmt::format("{}/apis/{}/namespaces/{}/trials/{}/observations",
                                               options.api_url, api::kKatibGroupVersion,
                                               trial.metadata.namespace_, trial.metadata.name));
  env.emplace_back(kMetricsTokenEnv, trial.metadata.uid);
  if (!options.api_ca_file.empty()) env.emplace_back(kMetricsCaEnv, options.api_ca_file);
  return env;
}

// A hostPath volume the primary container mounts.
struct ExtraMount {
  std::string_view volume;
  std::string mount_path;
  std::string host_path;
};

// The volumes a trial's primary container gets: with a File or
// TensorFlowEvent collector, the one its metrics file or event directory is
// written to, mounted at the directory that holds it (Katib mounts the
// event directory itself: its parent is mounted here, because a process
// sees only the paths it is given translated, and trainers are given the
// parent, as upstream's TFJob example's --log-path); with a trial
// directory, that directory.
std::vector<ExtraMount> TrialMounts(const MetricsFile& file, const std::optional<TrialDir>& dir) {
  std::vector<ExtraMount> mounts;
  if (!file.host_path.empty()) {
    mounts.push_back({kMetricsVolume, Dirname(file.container_path), Dirname(file.host_path)});
  }
  if (dir) mounts.push_back({kTrialDirVolume, dir->mount_path, dir->host_path});
  return mounts;
}

// The trial's variables in a container's (or a TrainJob trainer's) `env`,
// each replacing one of its name: the trial's value wins, and a list keyed
// by name (a TrainJob's, on a cluster) is never given a duplicate.
void SetTrialEnv(api::Json& env, const EnvVars& trial_env) {
  if (!env.is_array()) env = api::Json::array();
  for (const auto& [var_name, value] : trial_env) {
    const std::string& name = var_name;  // Debian 12's clang cannot capture a structured binding
    api::Json var = {{"name", name}, {"value", value}};
    auto same = std::find_if(env.begin(), env.end(),
                             [&](const api::Json& e) { return api::StringAt(e, "name") == name; });
    if (same == env.end()) {
      env.push_back(std::move(var));
    } else {
      *same = std::move(var);
    }
  }
}

// Adds the trial's labels, owner, environment and volumes to every
// container named primaryContainerName, in every pod template of the job.
void AddToPodTemplate(const api::Trial& trial, const std::vector<ExtraMount>& extra,
                      const EnvVars& trial_env, api::Json& pod_template) {
  api::Json& labels = pod_template["metadata"]["labels"];
  for (const auto& [key, value] : trial.metadata.labels) labels[key] = value;
  labels[std::string(api::kTrialLabel)] = trial.metadata.name;
  api::Json& containers = pod_template["spec"]["containers"];
  if (!containers.is_array()) return;
  for (api::Json& c : containers) {
    if (api::StringAt(c, "name") != trial.spec.primary_container_name) continue;
    SetTrialEnv(c["env"], trial_env);
    if (extra.empty()) continue;
    api::Json& mounts = c["volumeMounts"];
    if (!mounts.is_array()) mounts = api::Json::array();
    for (const ExtraMount& m : extra) {
      mounts.push_back({{"name", m.volume}, {"mountPath", m.mount_path}});
    }
  }
  if (extra.empty()) return;
  api::Json& volumes = pod_template["spec"]["volumes"];
  if (!volumes.is_array()) volumes = api::Json::array();
  for (const ExtraMount& m : extra) {
    volumes.push_back(
        {{"name", m.volume}, {"hostPath", {{"path", m.host_path}, {"type", "DirectoryOrCreate"}}}});
  }
}

api::Json BuildJob(const api::Trial& trial, const std::optional<TrialDir>& dir,
                   const TrialReconcilerOptions& options) {
  std::vector<ExtraMount> extra = TrialMounts(MetricsFileOf(trial, options.metrics_dir), dir);
  EnvVars env = TrialEnv(trial, options);
  api::Json job = trial.spec.run_spec;
  api::Json& meta = job["metadata"];
  meta["name"] = trial.metadata.name;
  meta["namespace"] = trial.metadata.namespace_;
  for (const auto& [key, value] : trial.metadata.labels) meta["labels"][key] = value;
  meta["labels"][std::string(api::kTrialLabel)] = trial.metadata.name;
  meta["ownerReferences"] = api::Json::array({{{"apiVersion", api::kKatibGroupVersion},
                                               {"kind", "Trial"},
                                               {"name", trial.metadata.name},
                                               {"uid", trial.metadata.uid},
                                               {"controller", true},
                                               {"blockOwnerDeletion", true}}});
  const api::JobShape* shape = api::JobShapeOf(api::StoreKindOf(job));
  if (shape == nullptr) return job;  // validation refuses it
  // A kind whose pods come from elsewhere (a TrainJob's runtime) takes the
  // trial's variables in its own env (validation keeps the collectors that
  // mount volumes away from it).
  if (!shape->trial_env_path.empty()) {
    SetTrialEnv(api::MakeAt(job, shape->trial_env_path), env);
    return job;
  }
  for (api::Json* pod_template : shape->pod_templates(job)) {
    AddToPodTemplate(trial, extra, env, *pod_template);
  }
  return job;
}

// The trial's metrics: min, max and latest of each, over every value
// collected (kept exactly, however a long log is thinned).
Result<api::Observation> ObservationOf(const Context& ctx) {
  ASSIGN_OR_RETURN(store::ObservationSummary summary,
                   ctx.options.observations->SummarizeObservations(TrialId(ctx.trial)));
  api::Observation observation;
  const api::ObjectiveSpec objective = ctx.trial.spec.objective.value_or(api::ObjectiveSpec{});
  std::vector<std::string> names = {objective.objective_metric_name};
  names.insert(names.end(), objective.additional_metric_names.begin(),
               objective.additional_metric_names.end());
  for (const std::string& name : names) {
    auto series = std::find_if(summary.series.begin(), summary.series.end(),
                               [&](const store::ObservationSeries& s) { return s.metric == name; });
    if (series == summary.series.end() || series->count == 0) {
      observation.metrics.push_back(
          {.name = name, .min = "unavailable", .max = "unavailable", .latest = "unavailable"});
      continue;
    }
    observation.metrics.push_back(
        {.name = name, .min = series->min, .max = series->max, .latest = series->latest.value});
  }
  return observation;
}

std::string WithJob(std::string_view base, std::string_view what, const std::string& value) {
  return value.empty() ? std::string(base) : fmt::format("{}. Job {}: {}", base, what, value);
}

Status RecordTrialEvent(Context& ctx, const std::string& type, const std::string& reason,
                        const std::string& message) {
  return RecordEvent(*ctx.options.store, *ctx.options.clock,
                     {std::string(api::kKatibGroupVersion), "Trial", &ctx.trial.metadata}, type,
                     reason, message);
}

// The trial's own directory (TrialDirOf), when it has one; `ready` false
// until it may start: its directory is made off the loop (a copy of the
// parent's takes as long as the disk needs), and a trial whose experiment is
// gone (and the trial with it, soon) does not start without it.
struct TrialDirState {
  std::optional<TrialDir> dir;
  bool ready = true;
};

Result<TrialDirState> ReadyTrialDir(Context& ctx, std::unique_ptr<TrialDirMaker>& maker) {
  if (ctx.options.trial_dirs.empty()) return TrialDirState{};
  std::string experiment_name = api::OwnerNameOf(ctx.trial.metadata.owner_references, "Experiment");
  if (experiment_name.empty()) return TrialDirState{};
  Result<api::Json> stored =
      ctx.options.store->Get({"Experiment", ctx.trial.metadata.namespace_, experiment_name});
  if (stored.status().code() == StatusCode::kNotFound) return TrialDirState{.ready = false};
  RETURN_IF_ERROR(stored.status());
  api::DecodeResult decoded = api::DecodeObject(*stored);
  auto* experiment = decoded.object ? std::get_if<api::Experiment>(&*decoded.object) : nullptr;
  if (experiment == nullptr) {
    return FailedPreconditionError(fmt::format("experiment {} cannot be decoded", experiment_name));
  }
  TrialDirState state{.dir = TrialDirOf(*experiment, ctx.trial, ctx.options.trial_dirs)};
  if (!state.dir) return state;
  if (!maker) maker = std::make_unique<TrialDirMaker>();
  ASSIGN_OR_RETURN(TrialDirMaker::Readiness readiness, maker->Ensure(*state.dir));
  state.ready = readiness.ready;
  if (readiness.parent_missing) {
    RETURN_IF_ERROR(RecordTrialEvent(
        ctx, "Warning", "ParentDirectoryMissing",
        fmt::format("The parent trial's directory {} is gone: this trial starts with an empty {}",
                    state.dir->parent_path, state.dir->mount_path)));
  }
  return state;
}

// Reads the job's outcome into the trial's conditions.
Status FollowJob(Context& ctx, const api::Json& job) {
  ASSIGN_OR_RETURN(api::Observation observation, ObservationOf(ctx));
  ctx.trial.status.observation = std::move(observation);
  api::ConditionMatch failed = api::EvaluateJobCondition(job, ctx.trial.spec.failure_condition);
  if (failed.matched) {
    if (SetCondition(ctx, "Failed", "True", WithJob("TrialFailed", "reason", failed.reason),
                     WithJob("Trial has failed", "message", failed.message))) {
      RETURN_IF_ERROR(RecordTrialEvent(ctx, "Normal", "JobFailed", "Job has failed"));
    }
    SetCondition(ctx, "Running", "False", "TrialFailed", "Trial has failed");
    return OkStatus();
  }
  api::ConditionMatch succeeded = api::EvaluateJobCondition(job, ctx.trial.spec.success_condition);
  if (!succeeded.matched) {
    if (SetCondition(ctx, "Running", "True", "TrialRunning", "Trial is running")) {
      RETURN_IF_ERROR(RecordTrialEvent(ctx, "Normal", "JobRunning", "Job is running"));
    }
    return OkStatus();
  }
  const api::ObjectiveSpec objective = ctx.trial.spec.objective.value_or(api::ObjectiveSpec{});
  SetCondition(ctx, "Running", "False", "TrialSucceeded", "Trial has succeeded");
  if (ObjectiveOf(objective, ctx.trial.status.observation)) {
    SetCondition(ctx, "Succeeded", "True", WithJob("TrialSucceeded", "reason", succeeded.reason),
                 WithJob("Trial has succeeded", "message", succeeded.message));
    return RecordTrialEvent(ctx, "Normal", "JobSucceeded", "Job has succeeded");
  }
  SetCondition(ctx, "MetricsUnavailable", "True", "MetricsUnavailable",
               fmt::format("Metrics are not available: no value of {} was reported{}",
                           objective.objective_metric_name,
                           ctx.unread.empty() ? "" : "; gave up reading " + ctx.unread));
  return RecordTrialEvent(ctx, "Warning", "MetricsUnavailable", "Metrics are not available");
}

// A finished trial keeps no running job: the job is deleted unless the
// template retains it, in which case an unfinished one is suspended.
Status SettleJob(Context& ctx, const store::ObjectKey& job_key) {
  Result<api::Json> job = ctx.options.store->Get(job_key);
  if (job.status().code() == StatusCode::kNotFound) return OkStatus();
  RETURN_IF_ERROR(job.status());
  if (!ctx.trial.spec.retain_run.value_or(false)) {
    RETURN_IF_ERROR(DeleteIfPresent(*ctx.options.store, job_key));
    return RecordTrialEvent(ctx, "Normal", "JobDeleted", "Job is deleted");
  }
  if (api::JobOutcome(*job).has_value()) return OkStatus();
  const api::JobShape* shape = api::JobShapeOf(job_key.kind);
  if (shape == nullptr) return OkStatus();
  api::Json& suspend = api::MakeAt(*job, shape->suspend_path);
  if (suspend.is_boolean() && suspend.get<bool>()) return OkStatus();
  suspend = true;
  return ctx.options.store->Update(*job).status();
}

Status WriteStatus(Context& ctx) {
  return WriteStatusIfChanged(*ctx.options.store, ctx.stored, api::Encode(ctx.trial.status));
}

// The trial is gone: so are its job, its events and its metrics.
Status ForgetTrial(const TrialReconcilerOptions& options, const store::ObjectKey& key) {
  for (const std::string& kind : api::JobKindNames()) {
    Result<api::Json> job = options.store->Get({kind, key.namespace_, key.name});
    if (!job.ok()) continue;
    if (OwnedByName(*job, "Trial", key.name)) {
      RETURN_IF_ERROR(DeleteIfPresent(*options.store, {kind, key.namespace_, key.name}));
    }
  }
  RETURN_IF_ERROR(DeleteEventsOf(*options.store, key));
  return options.observations->DeleteObservations(key.namespace_ + "/" + key.name);
}

}  // namespace

MetricsFile MetricsFileOf(const api::Trial& trial, const std::string& metrics_dir) {
  const api::MetricsCollectorSpec mc =
      trial.spec.metrics_collector.value_or(api::MetricsCollectorSpec{});
  bool file = mc.collector && mc.collector->kind == "File";
  bool tfevent = mc.collector && mc.collector->kind == "TensorFlowEvent";
  if (!(file || tfevent) || !mc.source || !mc.source->file_system_path) return {};
  std::string path = mc.source->file_system_path->path;
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  std::string name = path.substr(path.rfind('/') + 1);
  return {.container_path = path,
          .host_path = fmt::format("{}/{}/{}/{}", metrics_dir, trial.metadata.namespace_,
                                   trial.metadata.name, name)};
}

TrialReconciler::TrialReconciler(TrialReconcilerOptions options) : options_(std::move(options)) {}
TrialReconciler::~TrialReconciler() = default;

store::ObjectKey TrialJobKey(const api::Trial& trial) {
  return {api::StringAt(trial.spec.run_spec, "kind"), trial.metadata.namespace_,
          trial.metadata.name};
}

Result<ReconcileResult> TrialReconciler::Reconcile(const store::ObjectKey& key) {
  ASSIGN_OR_RETURN(std::optional<Loaded<api::Trial>> loaded,
                   LoadObject<api::Trial>(*options_.store, key));
  if (!loaded) {
    RETURN_IF_ERROR(ForgetTrial(options_, key));
    return ReconcileResult{};
  }
  Context ctx{options_, std::move(loaded->stored), std::move(loaded->object),
              options_.clock->Now()};
  store::ObjectKey job_key = TrialJobKey(ctx.trial);
  if (IsFinished(PhaseOf(ctx.trial))) {
    // Stopped by the experiment (early, or at its end): what was collected
    // until then is its observation.
    ASSIGN_OR_RETURN(api::Observation observation, ObservationOf(ctx));
    ctx.trial.status.observation = std::move(observation);
    RETURN_IF_ERROR(SettleJob(ctx, job_key));
    RETURN_IF_ERROR(WriteStatus(ctx));
    return ReconcileResult{};
  }
  if (ctx.trial.status.start_time.empty()) ctx.trial.status.start_time = FormatRfc3339(ctx.now);
  Result<api::Json> job = options_.store->Get(job_key);
  if (job.status().code() == StatusCode::kNotFound) {
    ASSIGN_OR_RETURN(TrialDirState dir, ReadyTrialDir(ctx, dir_maker_));
    if (!dir.ready) {
      RETURN_IF_ERROR(WriteStatus(ctx));
      return ReconcileResult{.requeue_after = options_.poll};
    }
    RETURN_IF_ERROR(options_.store->Create(BuildJob(ctx.trial, dir.dir, options_)).status());
    SetCondition(ctx, "Created", "True", "TrialCreated", "Trial is created");
    RETURN_IF_ERROR(RecordTrialEvent(ctx, "Normal", "JobCreated", "Job is created"));
    RETURN_IF_ERROR(WriteStatus(ctx));
    return ReconcileResult{.requeue_after = options_.poll};
  }
  RETURN_IF_ERROR(job.status());
  if (options_.read_output) {
    ASSIGN_OR_RETURN(OutputRead read,
                     options_.read_output(ctx.trial, api::JobOutcome(*job).has_value()));
    ctx.unread = read.unread;
    if (read.reading) {
      // Concluding now could miss its last values (and deleting its job
      // would end the read).
      ASSIGN_OR_RETURN(ctx.trial.status.observation, ObservationOf(ctx));
      RETURN_IF_ERROR(WriteStatus(ctx));
      return ReconcileResult{.requeue_after = options_.poll};
    }
  }
  RETURN_IF_ERROR(FollowJob(ctx, *job));
  bool finished = IsFinished(PhaseOf(ctx.trial));
  if (finished) {
    ctx.trial.status.completion_time = FormatRfc3339(ctx.now);
    RETURN_IF_ERROR(SettleJob(ctx, job_key));
  }
  RETURN_IF_ERROR(WriteStatus(ctx));
  if (finished) return ReconcileResult{};
  return ReconcileResult{.requeue_after = options_.poll};
}

}  // namespace trainyard::controller
