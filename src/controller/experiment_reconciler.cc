#include "controller/experiment_reconciler.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "api/defaults.h"
#include "api/json.h"
#include "api/katib_space.h"
#include "api/object.h"
#include "api/validation.h"
#include "common/held_dir.h"
#include "common/strings.h"
#include "controller/conditions.h"
#include "controller/early_stopping.h"
#include "controller/events.h"
#include "controller/experiment_trials.h"
#include "controller/katib_status.h"
#include "controller/owned.h"
#include "controller/reconcile_steps.h"
#include "controller/trial_dir.h"
#include "tune/median_stop.h"
#include "tune/metrics.h"

namespace trainyard::controller {
namespace {

struct ExperimentContext {
  const ExperimentReconcilerOptions& options;
  SamplerCache& samplers;
  api::Json stored;
  api::Experiment experiment;
  std::vector<api::Trial> trials;  // in creation order
  TimePoint now;
};

api::ExperimentStatus& State(ExperimentContext& ctx) { return ctx.experiment.status; }

bool SetCondition(ExperimentContext& ctx, std::string_view type, std::string_view status,
                  std::string_view reason, std::string_view message) {
  return SetKatibCondition(State(ctx).conditions, type, status, reason, message, ctx.now);
}

int64_t IndexOf(const api::Trial& trial) {
  auto it = trial.metadata.annotations.find(std::string(api::kTrialIndexAnnotation));
  if (it == trial.metadata.annotations.end()) return -1;
  return std::strtoll(it->second.c_str(), nullptr, 10);
}

Result<std::vector<api::Trial>> OwnedTrials(const store::ObjectStore& store,
                                            const api::Experiment& experiment) {
  ASSIGN_OR_RETURN(store::ObjectStore::ListResult list,
                   store.List("Trial", experiment.metadata.namespace_));
  std::vector<api::Trial> trials;
  for (const api::Json& doc : list.items) {
    api::DecodeResult decoded = api::DecodeObject(doc);
    auto* trial = decoded.object ? std::get_if<api::Trial>(&*decoded.object) : nullptr;
    if (trial == nullptr) continue;
    bool owned = std::any_of(trial->metadata.owner_references.begin(),
                             trial->metadata.owner_references.end(),
                             [&](const auto& o) { return o.uid == experiment.metadata.uid; });
    if (owned) trials.push_back(std::move(*trial));
  }
  std::stable_sort(trials.begin(), trials.end(), [](const api::Trial& a, const api::Trial& b) {
    return IndexOf(a) < IndexOf(b);
  });
  return trials;
}

Status WriteTrialStatus(ExperimentContext& ctx, const api::Trial& trial) {
  api::Json doc = api::EncodeObject(api::Object(trial));
  return ctx.options.store->UpdateStatus(std::move(doc)).status();
}

// Stops the trials still active when the experiment ends: Killed, and their
// jobs stopped by the trial controller.
Status KillActiveTrials(ExperimentContext& ctx, const std::string& why) {
  for (api::Trial& trial : ctx.trials) {
    if (IsFinished(PhaseOf(trial))) continue;
    SetKatibCondition(trial.status.conditions, "Running", "False", "TrialKilled", why, ctx.now);
    SetKatibCondition(trial.status.conditions, "Killed", "True", "TrialKilled", why, ctx.now);
    trial.status.completion_time = FormatRfc3339(ctx.now);
    RETURN_IF_ERROR(WriteTrialStatus(ctx, trial));
  }
  return OkStatus();
}

// The objective's values a trial reported, in order, as losses.
Result<std::vector<double>> LossSeries(ExperimentContext& ctx, const api::Trial& trial) {
  const api::ObjectiveSpec& objective = *ctx.experiment.spec.objective;
  return ObservedLosses(*ctx.options.observations,
                        trial.metadata.namespace_ + "/" + trial.metadata.name,
                        objective.objective_metric_name, api::Maximizes(objective));
}

Status ApplyEarlyStopping(ExperimentContext& ctx) {
  const std::optional<api::AlgorithmSpec>& spec = ctx.experiment.spec.early_stopping;
  if (!spec) return OkStatus();
  ASSIGN_OR_RETURN(tune::MedianStopSettings median, MedianStopOf(spec->algorithm_settings));
  std::vector<std::vector<double>> finished;
  std::vector<api::Trial*> running;
  for (api::Trial& trial : ctx.trials) {
    TrialPhase phase = PhaseOf(trial);
    if (phase == TrialPhase::kSucceeded || phase == TrialPhase::kEarlyStopped) {
      ASSIGN_OR_RETURN(std::vector<double> series, LossSeries(ctx, trial));
      finished.push_back(std::move(series));
    } else if (phase == TrialPhase::kRunning) {
      running.push_back(&trial);
    }
  }
  if (static_cast<int>(finished.size()) < median.min_trials_required) return OkStatus();
  for (api::Trial* trial : running) {
    ASSIGN_OR_RETURN(std::vector<double> series, LossSeries(ctx, *trial));
    if (!tune::ShouldStopByMedian(median, series, finished)) continue;
    SetKatibCondition(trial->status.conditions, "Running", "False", "TrialEarlyStopped",
                      "Trial is early stopped", ctx.now);
    SetKatibCondition(trial->status.conditions, "EarlyStopped", "True", "TrialEarlyStopped",
                      "Trial is early stopped", ctx.now);
    trial->status.completion_time = FormatRfc3339(ctx.now);
    RETURN_IF_ERROR(WriteTrialStatus(ctx, *trial));
    RETURN_IF_ERROR(RecordEvent(
        *ctx.options.store, *ctx.options.clock,
        {std::string(api::kKatibGroupVersion), "Trial", &trial->metadata}, "Normal",
        "TrialEarlyStopped",
        fmt::format("Stopped at report {}: its best {} is worse than the median of finished "
                    "trials at that report",
                    series.size(), ctx.experiment.spec.objective->objective_metric_name)));
  }
  return OkStatus();
}

// The Suggestion object: what was asked of the algorithm and what it gave,
// as upstream's; `exhausted` and `failure` become its Succeeded and Failed.
Status WriteSuggestion(ExperimentContext& ctx, bool exhausted, const std::string& failure) {
  const api::ObjectMeta& meta = ctx.experiment.metadata;
  store::ObjectKey key{"Suggestion", meta.namespace_, meta.name};
  Result<api::Json> stored = ctx.options.store->Get(key);
  if (!stored.ok() && stored.status().code() != StatusCode::kNotFound) return stored.status();
  api::Suggestion s;
  if (stored.ok()) {
    api::DecodeResult decoded = api::DecodeObject(*stored);
    if (auto* existing =
            decoded.object ? std::get_if<api::Suggestion>(&*decoded.object) : nullptr) {
      s = std::move(*existing);
    }
  }
  s.metadata.name = meta.name;
  s.metadata.namespace_ = meta.namespace_;
  s.metadata.labels[std::string(api::kExperimentLabel)] = meta.name;
  s.metadata.owner_references = {{.api_version = std::string(api::kKatibGroupVersion),
                                  .kind = "Experiment",
                                  .name = meta.name,
                                  .uid = meta.uid,
                                  .controller = true,
                                  .block_owner_deletion = true}};
  s.spec.algorithm = ctx.experiment.spec.algorithm;
  s.spec.early_stopping = ctx.experiment.spec.early_stopping;
  s.spec.requests = static_cast<int32_t>(ctx.trials.size());
  s.spec.resume_policy = ctx.experiment.spec.resume_policy;
  api::SuggestionStatus& status = s.status;
  if (status.start_time.empty()) status.start_time = FormatRfc3339(ctx.now);
  status.suggestion_count = static_cast<int32_t>(ctx.trials.size());
  status.suggestions.clear();
  for (const api::Trial& trial : ctx.trials) {
    status.suggestions.push_back({.name = trial.metadata.name,
                                  .parameter_assignments = trial.spec.parameter_assignments,
                                  .labels = trial.spec.labels});
  }
  auto& c = status.conditions;
  if (api::FindKatibCondition(c, "Created") == nullptr) {
    SetKatibCondition(c, "Created", "True", "SuggestionCreated", "Suggestion is created", ctx.now);
  }
  if (!failure.empty()) {
    SetKatibCondition(c, "Failed", "True", "SuggestionFailed", failure, ctx.now);
  } else if (exhausted) {
    SetKatibCondition(c, "Succeeded", "True", "SuggestionEndReached",
                      "The algorithm has no more suggestions", ctx.now);
  } else {
    SetKatibCondition(c, "Running", "True", "SuggestionRunning", "Suggestion is running", ctx.now);
  }
  api::Json doc = api::EncodeObject(api::Object(s));
  if (!stored.ok()) return ctx.options.store->Create(std::move(doc)).status();
  if (doc["spec"] != (*stored)["spec"]) {
    doc["metadata"]["resourceVersion"] = (*stored)["metadata"]["resourceVersion"];
    ASSIGN_OR_RETURN(*stored, ctx.options.store->Update(doc));
  }
  if (doc["status"] == api::ValueAt(*stored, "status")) return OkStatus();
  (*stored)["status"] = doc["status"];
  return ctx.options.store->UpdateStatus(*stored).status();
}

bool SuggestionsExhausted(const ExperimentContext& ctx) {
  const api::ObjectMeta& meta = ctx.experiment.metadata;
  Result<api::Json> stored = ctx.options.store->Get({"Suggestion", meta.namespace_, meta.name});
  if (!stored.ok()) return false;
  std::optional<StoredCondition> succeeded = StoredConditionOf(*stored, "Succeeded");
  return succeeded && succeeded->status == "True";
}

// How many trials to add: up to parallelTrialCount active, and no more
// than maxTrialCount in all.
int32_t TrialsWanted(const ExperimentContext& ctx) {
  const api::ExperimentSpec& spec = ctx.experiment.spec;
  const api::ExperimentStatus& s = ctx.experiment.status;
  int32_t active = s.trials_pending.value_or(0) + s.trials_running.value_or(0);
  int32_t finished = s.trials.value_or(0) - active;
  int32_t limit = spec.parallel_trial_count.value_or(3);
  if (spec.max_trial_count) limit = std::min(limit, *spec.max_trial_count - finished);
  return limit - active;
}

// Asks the sampler for the trials wanted and creates them. A problem with
// the algorithm or the template is `failure`, which fails the experiment.
Status CreateTrials(ExperimentContext& ctx, std::mt19937& random, bool& exhausted,
                    std::string& failure) {
  int32_t wanted = TrialsWanted(ctx);
  if (wanted <= 0) {
    exhausted = SuggestionsExhausted(ctx);
    return OkStatus();
  }
  auto fail = [&](const ::trainyard::Status& why) {
    failure = why.message();
    return WriteSuggestion(ctx, false, failure);
  };
  Result<tune::Space> space = api::SearchSpaceOf(ctx.experiment.spec.parameters);
  if (!space.ok()) return fail(space.status());
  // Kept between reconciles while the spec it is made from stays.
  Result<std::shared_ptr<tune::Sampler>> sampler =
      ctx.samplers.Get(ctx.experiment.metadata.uid, api::ValueAt(ctx.stored, "spec").dump(),
                       [&] { return tune::MakeSampler(*space, SamplerOptionsOf(ctx.experiment)); });
  if (!sampler.ok()) return fail(sampler.status());
  Result<std::vector<tune::TrialRecord>> records = TrialRecords(*space, ctx.experiment, ctx.trials);
  if (!records.ok()) return fail(records.status());
  Result<tune::SuggestResult> result = (*sampler)->Suggest(*records, wanted);
  if (!result.ok()) return fail(result.status());
  Result<api::Json> document = TrialTemplateDocument(*ctx.options.store, ctx.experiment);
  if (!document.ok()) return fail(document.status());
  for (const tune::Suggestion& suggestion : result->suggestions) {
    Result<api::Trial> trial = BuildTrial(ctx.experiment, *space, *document, suggestion,
                                          static_cast<int64_t>(ctx.trials.size()), random);
    if (!trial.ok()) return fail(trial.status());
    ASSIGN_OR_RETURN(api::Json created, ctx.options.store->Create(api::EncodeObject(*trial)));
    api::DecodeResult decoded = api::DecodeObject(created);
    ctx.trials.push_back(std::get<api::Trial>(*decoded.object));
  }
  exhausted = result->exhausted;
  return WriteSuggestion(ctx, exhausted, "");
}

Status Finish(ExperimentContext& ctx, const Verdict& verdict) {
  SetCondition(ctx, "Running", "False", verdict.reason, verdict.message);
  SetCondition(ctx, verdict.type, "True", verdict.reason, verdict.message);
  if (State(ctx).completion_time.empty()) State(ctx).completion_time = FormatRfc3339(ctx.now);
  RETURN_IF_ERROR(RecordEvent(
      *ctx.options.store, *ctx.options.clock,
      {std::string(api::kKatibGroupVersion), "Experiment", &ctx.experiment.metadata},
      verdict.type == "Failed" ? "Warning" : "Normal", verdict.reason, verdict.message));
  return KillActiveTrials(ctx, "Experiment has ended: " + verdict.message);
}

bool Ended(const ExperimentContext& ctx) {
  const auto& c = ctx.experiment.status.conditions;
  return IsConditionTrue(c, "Succeeded") || IsConditionTrue(c, "Failed");
}

// A LongRunning or FromVolume experiment that reached its max trials starts
// again when maxTrialCount is raised past the trials it has.
bool Restart(ExperimentContext& ctx) {
  const api::ExperimentSpec& spec = ctx.experiment.spec;
  auto& c = State(ctx).conditions;
  const api::KatibCondition* succeeded = api::FindKatibCondition(c, "Succeeded");
  if (succeeded == nullptr || succeeded->status != "True" ||
      succeeded->reason != "ExperimentMaxTrialsReached" || spec.resume_policy == "Never" ||
      !spec.max_trial_count || *spec.max_trial_count <= State(ctx).trials.value_or(0)) {
    return false;
  }
  std::erase_if(c, [](const api::KatibCondition& k) { return k.type == "Succeeded"; });
  SetCondition(ctx, "Restarting", "True", "ExperimentRestarting", "Experiment is restarted");
  State(ctx).completion_time.clear();
  return true;
}

Status WriteStatus(ExperimentContext& ctx) {
  return WriteStatusIfChanged(*ctx.options.store, ctx.stored, api::Encode(ctx.experiment.status));
}

// The experiment is gone: its trials (and, through them, their jobs and
// metrics), its Suggestion and its events go too.
Status ForgetExperiment(const ExperimentReconcilerOptions& options, const store::ObjectKey& key) {
  ASSIGN_OR_RETURN(store::ObjectStore::ListResult trials,
                   options.store->List("Trial", key.namespace_));
  for (const api::Json& trial : trials.items) {
    if (OwnedByName(trial, "Experiment", key.name)) {
      RETURN_IF_ERROR(DeleteIfPresent(
          *options.store, {"Trial", key.namespace_, api::StringAt(trial, {"metadata", "name"})}));
    }
  }
  RETURN_IF_ERROR(DeleteIfPresent(*options.store, {"Suggestion", key.namespace_, key.name}));
  if (!options.trial_dirs.empty()) {
    // A trial's process may still be writing there as it stops: a failure
    // is an error, so the experiment is forgotten again after a back-off.
    std::string dirs = ExperimentTrialDirs(options.trial_dirs, key.namespace_, key.name);
    // What the trials' replicas shaped goes without a link of theirs
    // being followed.
    RETURN_IF_ERROR(RemoveTree(dirs));
  }
  return DeleteEventsOf(*options.store, key);
}

}  // namespace

Result<ReconcileResult> ExperimentReconciler::Reconcile(const store::ObjectKey& key) {
  ASSIGN_OR_RETURN(std::optional<Loaded<api::Experiment>> loaded,
                   LoadObject<api::Experiment>(*options_.store, key));
  if (!loaded) {
    RETURN_IF_ERROR(ForgetExperiment(options_, key));
    return ReconcileResult{};
  }
  if (options_.check_stored) {
    api::ValidationResult checked = api::Validate(api::Object(loaded->object));
    if (!checked.ok()) {
      RETURN_IF_ERROR(RecordFailedValidation(
          *options_.store, *options_.clock,
          {std::string(api::kKatibGroupVersion), "Experiment", &loaded->object.metadata},
          checked.errors));
      return ReconcileResult{};
    }
  }
  ExperimentContext ctx{options_,
                        samplers_,
                        std::move(loaded->stored),
                        std::move(loaded->object),
                        {},
                        options_.clock->Now()};
  ASSIGN_OR_RETURN(ctx.trials, OwnedTrials(*options_.store, ctx.experiment));
  if (State(ctx).start_time.empty()) State(ctx).start_time = FormatRfc3339(ctx.now);
  if (api::FindKatibCondition(State(ctx).conditions, "Created") == nullptr) {
    SetCondition(ctx, "Created", "True", "ExperimentCreated", "Experiment is created");
  }
  SummarizeTrials(ctx.experiment.spec, ctx.trials, State(ctx),
                  api::ParetoObjectivesOf(ctx.experiment));
  if (Ended(ctx) && !Restart(ctx)) {
    RETURN_IF_ERROR(KillActiveTrials(ctx, "Experiment has ended"));
    RETURN_IF_ERROR(WriteStatus(ctx));
    return ReconcileResult{};
  }
  std::optional<std::string> unsupported =
      options_.unsupported ? options_.unsupported(ctx.experiment) : std::nullopt;
  std::optional<Verdict> verdict = unsupported
                                       ? Verdict{"Failed", "ExperimentNotSupported", *unsupported}
                                       : Conclude(ctx.experiment.spec, State(ctx), false);
  if (verdict) {
    RETURN_IF_ERROR(Finish(ctx, *verdict));
    RETURN_IF_ERROR(WriteStatus(ctx));
    return ReconcileResult{};
  }
  SetCondition(ctx, "Running", "True", "ExperimentRunning", "Experiment is running");
  RETURN_IF_ERROR(ApplyEarlyStopping(ctx));
  SummarizeTrials(ctx.experiment.spec, ctx.trials, State(ctx),
                  api::ParetoObjectivesOf(ctx.experiment));  // stopped trials make room
  bool exhausted = false;
  std::string failure;
  RETURN_IF_ERROR(CreateTrials(ctx, random_, exhausted, failure));
  SummarizeTrials(ctx.experiment.spec, ctx.trials, State(ctx),
                  api::ParetoObjectivesOf(ctx.experiment));
  verdict = failure.empty()
                ? Conclude(ctx.experiment.spec, State(ctx), exhausted)
                : Verdict{"Failed", "ExperimentFailed", "Suggestion has failed: " + failure};
  if (verdict) RETURN_IF_ERROR(Finish(ctx, *verdict));
  RETURN_IF_ERROR(WriteStatus(ctx));
  return ReconcileResult{};
}

}  // namespace trainyard::controller
