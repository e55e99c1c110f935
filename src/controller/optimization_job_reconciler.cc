#include "controller/optimization_job_reconciler.h"

#include <fmt/format.h>

#include <algorithm>

#include "api/katib_space.h"
#include "api/object.h"
#include "api/optimization_job.h"
#include "api/validation.h"
#include "controller/conditions.h"
#include "controller/early_stopping.h"
#include "controller/events.h"
#include "controller/optimization_trials.h"
#include "controller/owned.h"
#include "controller/reconcile_steps.h"
#include "tune/median_stop.h"
#include "tune/metrics.h"

namespace trainyard::controller {
namespace {

struct OptimizationContext {
  const OptimizationJobReconcilerOptions& options;
  SamplerCache& samplers;
  api::Json stored;
  api::CoreObject job;
  api::OptimizationJobSpec spec;
  api::OptimizationJobStatus status;
  std::vector<OptimizationTrial> trials;
  std::string now;  // RFC 3339
};

InvolvedObject Involved(const OptimizationContext& ctx) {
  return {std::string(api::kTrainerGroupVersion), "OptimizationJob", &ctx.job.metadata};
}

Status Event(OptimizationContext& ctx, const std::string& type, const std::string& reason,
             const std::string& message) {
  return RecordEvent(*ctx.options.store, *ctx.options.clock, Involved(ctx), type, reason, message);
}

bool Ended(const api::OptimizationJobStatus& status) {
  auto is_true = [&](std::string_view type) {
    return std::any_of(
        status.conditions.begin(), status.conditions.end(),
        [&](const api::MetaCondition& c) { return c.type == type && c.status == "True"; });
  };
  return is_true("Complete") || is_true("Failed");
}

struct Tally {
  int32_t running = 0, succeeded = 0, failed = 0, early_stopped = 0;
  int32_t unreported = 0;  // Complete, but without every objective
};

Tally Count(const std::vector<OptimizationTrial>& trials) {
  Tally t;
  for (const OptimizationTrial& trial : trials) {
    switch (trial.state) {
      case tune::TrialState::kSucceeded:
        ++t.succeeded;
        break;
      case tune::TrialState::kEarlyStopped:
        ++t.early_stopped;
        break;
      case tune::TrialState::kFailed:
        ++t.failed;
        if (api::JobOutcome(trial.stored) == "Succeeded") ++t.unreported;
        break;
      case tune::TrialState::kPending:
        ++t.running;
        break;
    }
  }
  return t;
}

// The trials made so far: one deleted by hand still counts, so that no
// more than numTrials run.
int32_t TrialsMade(const std::vector<OptimizationTrial>& trials) {
  return static_cast<int32_t>(
      std::max<int64_t>(static_cast<int64_t>(trials.size()), NextTrialIndex(trials)));
}

Status Finish(OptimizationContext& ctx, const std::string& type, const std::string& reason,
              const std::string& message) {
  PutCondition(ctx.status.conditions, type, "True", reason, message, ctx.now);
  return Event(ctx, type == "Failed" ? "Warning" : "Normal", reason, message);
}

// Why a trial's objectives were never read, said once it matters.
std::string UnreportedHint(const OptimizationContext& ctx, const Tally& t) {
  if (t.unreported == 0) return "";
  std::vector<std::string> metrics;
  for (const api::OptimizationObjective& o : ctx.spec.objectives) metrics.push_back(o.metric);
  // Where no output is read (an operator without --katib), printing is no way.
  std::string print = ctx.options.observations != nullptr
                          ? fmt::format(" or print it as {}=<number>", metrics.front())
                          : "; this controller reads no output (on a cluster: `trainyard operator "
                            "--trainer --katib` reads what trials print)";
  return fmt::format(
      "; {} completed without reporting {}: push it to status.trainerStatus.metrics (KEP-2779, "
      "$KUBEFLOW_TRAINER_SERVER_URL){}",
      t.unreported, fmt::join(metrics, ", "), print);
}

// Ends the job once every trial it will run has ended.
Status Conclude(OptimizationContext& ctx, bool exhausted) {
  Tally t = Count(ctx.trials);
  int32_t created = TrialsMade(ctx.trials);
  bool all_made = created >= ctx.spec.num_trials.value_or(1) || exhausted;
  if (!all_made || t.running > 0) return OkStatus();
  if (t.succeeded + t.early_stopped == 0) {
    return Finish(
        ctx, "Failed", "AllTrialsFailed",
        fmt::format("{} out of {} trials failed{}", t.failed, created, UnreportedHint(ctx, t)));
  }
  std::string best = ctx.status.result ? ctx.status.result->train_job_name : "";
  return Finish(ctx, "Complete", exhausted ? "SearchSpaceExhausted" : "MaxTrialsReached",
                fmt::format("{} of {} trials succeeded; the best is {}{}", t.succeeded, created,
                            best, UnreportedHint(ctx, t)));
}

Status FailCreation(OptimizationContext& ctx, const std::string& why) {
  PutCondition(ctx.status.conditions, "Created", "False", "TrainJobsCreationFailed", why, ctx.now);
  return Finish(ctx, "Failed", "TrainJobsCreationFailed", why);
}

// A trial as the API would take it: decoded, defaulted and valid.
Status CheckTrial(const api::Json& doc) {
  api::DecodeResult decoded = api::DecodeObject(doc);
  FieldErrors errors = decoded.errors;
  if (decoded.object) {
    api::SetDefaults(*decoded.object);
    api::ValidationResult checked = api::Validate(*decoded.object);
    errors.insert(errors.end(), checked.errors.begin(), checked.errors.end());
  }
  if (errors.empty()) return OkStatus();
  std::vector<std::string> lines;
  for (const FieldError& e : errors) lines.push_back(e.ToString());
  return InvalidArgumentError(fmt::format(
      "TrainJob {}: {}", api::StringAt(doc, {"metadata", "name"}), fmt::join(lines, "; ")));
}

// Asks the sampler for the trials wanted (parallelTrials running, numTrials
// in all) and creates them; `exhausted`: the algorithm has no more.
Status CreateTrials(OptimizationContext& ctx, bool& exhausted) {
  Tally t = Count(ctx.trials);
  int32_t created = TrialsMade(ctx.trials);
  int32_t wanted = std::min(ctx.spec.parallel_trials.value_or(1) - t.running,
                            ctx.spec.num_trials.value_or(1) - created);
  if (wanted <= 0) return OkStatus();
  Result<tune::Space> space = api::OptimizationSpaceOf(ctx.spec.parameters);
  if (!space.ok()) return FailCreation(ctx, std::string(space.status().message()));
  // Kept between reconciles while the spec it is made from stays.
  Result<std::shared_ptr<tune::Sampler>> sampler =
      ctx.samplers.Get(ctx.job.metadata.uid, api::ValueAt(ctx.stored, "spec").dump(), [&] {
        return tune::MakeSampler(*space,
                                 OptimizationSamplerOptions(ctx.spec, ctx.job.metadata.uid));
      });
  if (!sampler.ok()) return FailCreation(ctx, std::string(sampler.status().message()));
  ASSIGN_OR_RETURN(std::vector<tune::TrialRecord> records,
                   OptimizationRecords(*space, ctx.spec, ctx.trials));
  Result<tune::SuggestResult> result = (*sampler)->Suggest(records, wanted);
  if (!result.ok()) return FailCreation(ctx, std::string(result.status().message()));
  int64_t index = NextTrialIndex(ctx.trials);
  for (const tune::Suggestion& suggestion : result->suggestions) {
    api::Json doc = BuildOptimizationTrial(ctx.job, ctx.spec, *space, suggestion, index++);
    if (Status checked = CheckTrial(doc); !checked.ok()) {
      return FailCreation(ctx, std::string(checked.message()));
    }
    Result<api::Json> made = ctx.options.store->Create(doc);
    if (made.status().code() == StatusCode::kAlreadyExists) {
      // Ours: a read older than the last create, which the next reconcile
      // reads. Another's (a job of this name deleted before its trials
      // went, or a TrainJob made by hand): asked again, it would stall.
      Result<api::Json> taken = ctx.options.store->Get(
          {"TrainJob", ctx.job.metadata.namespace_, api::StringAt(doc, {"metadata", "name"})});
      if (!taken.ok() || ControlledBy(*taken, ctx.job.metadata.uid)) return OkStatus();
      return FailCreation(ctx, fmt::format("TrainJob {} exists and is not this job's trial: "
                                           "delete it, or give the job another name",
                                           api::StringAt(doc, {"metadata", "name"})));
    }
    RETURN_IF_ERROR(made.status());
    std::string name = api::StringAt(*made, {"metadata", "name"});
    RETURN_IF_ERROR(Event(ctx, "Normal", "SuccessfulCreateTrainJob",
                          fmt::format("Created trial TrainJob {}", name)));
    OptimizationTrial trial{.name = name};
    std::vector<std::string> values = space->Format(suggestion.point);
    for (size_t i = 0; i < space->size(); ++i) {
      trial.parameters.push_back({.name = (*space)[i].name, .value = values[i]});
    }
    trial.stored = *std::move(made);
    ctx.trials.push_back(std::move(trial));
  }
  exhausted = result->exhausted;
  // Said where a user looks, not in silence: where no output is read (an
  // operator without --katib), medianstop has no series to judge.
  std::string message = "The trials' TrainJobs are being created";
  if (ctx.spec.early_stopping && ctx.options.observations == nullptr) {
    message +=
        "; spec.earlyStopping is not acted on: this operator reads no trial's output "
        "(run `trainyard operator --trainer --katib` for it)";
  }
  PutCondition(ctx.status.conditions, "Created", "True", "TrainJobsCreated", message, ctx.now);
  return OkStatus();
}

// The first objective's values a trial reported (printed or pushed), in
// order, as losses.
Result<std::vector<double>> LossSeries(const OptimizationContext& ctx,
                                       const OptimizationTrial& trial) {
  const api::OptimizationObjective& objective = ctx.spec.objectives.front();
  return ObservedLosses(
      *ctx.options.observations,
      store::JobObservationsId("TrainJob", ctx.job.metadata.namespace_, trial.name),
      objective.metric, objective.direction == "Maximize");
}

// Suspends `trial` and marks it stopped early; false when it changed
// meanwhile (the next reconcile judges it again).
Result<bool> StopTrial(OptimizationContext& ctx, OptimizationTrial& trial, size_t reports) {
  api::Json doc = trial.stored;
  doc["metadata"]["annotations"][std::string(api::kOptimizationEarlyStoppedAnnotation)] =
      std::to_string(reports);
  doc["spec"]["suspend"] = true;
  Result<api::Json> updated = ctx.options.store->Update(std::move(doc));
  if (updated.status().code() == StatusCode::kAborted) return false;
  RETURN_IF_ERROR(updated.status());
  trial.stored = *std::move(updated);
  RETURN_IF_ERROR(Event(ctx, "Normal", "TrialEarlyStopped",
                        fmt::format("Stopped trial {} at report {}: its best {} is worse than "
                                    "the median of ended trials at that report",
                                    trial.name, reports, ctx.spec.objectives.front().metric)));
  return true;
}

// medianstop (spec.earlyStopping, trainyard's) over the running trials,
// against the ended ones' reported values of the first objective.
Status ApplyEarlyStopping(OptimizationContext& ctx) {
  if (!ctx.spec.early_stopping || ctx.options.observations == nullptr) return OkStatus();
  ASSIGN_OR_RETURN(tune::MedianStopSettings median,
                   MedianStopOf(ctx.spec.early_stopping->algorithm_settings));
  std::vector<std::vector<double>> ended;
  for (const OptimizationTrial& trial : ctx.trials) {
    if (trial.state != tune::TrialState::kSucceeded &&
        trial.state != tune::TrialState::kEarlyStopped) {
      continue;
    }
    ASSIGN_OR_RETURN(std::vector<double> series, LossSeries(ctx, trial));
    ended.push_back(std::move(series));
  }
  if (static_cast<int>(ended.size()) < median.min_trials_required) return OkStatus();
  for (OptimizationTrial& trial : ctx.trials) {
    if (trial.state != tune::TrialState::kPending || api::JobOutcome(trial.stored)) continue;
    ASSIGN_OR_RETURN(std::vector<double> series, LossSeries(ctx, trial));
    if (!tune::ShouldStopByMedian(median, series, ended)) continue;
    ASSIGN_OR_RETURN(bool stopped, StopTrial(ctx, trial, series.size()));
    if (!stopped) continue;
    // Read again as a stopped trial: what it reached is its result.
    ASSIGN_OR_RETURN(std::vector<OptimizationTrial> again,
                     ReadOptimizationTrials(*ctx.options.store, ctx.options.observations, ctx.job,
                                            ctx.spec, TimePoint::max(), Duration::zero()));
    for (OptimizationTrial& t : again) {
      if (t.name == trial.name) trial = std::move(t);
    }
  }
  return OkStatus();
}

void Summarize(OptimizationContext& ctx) {
  Tally t = Count(ctx.trials);
  ctx.status.trial_counts =
      api::OptimizationTrialCounts{.created = static_cast<int32_t>(ctx.trials.size()),
                                   .running = t.running,
                                   .succeeded = t.succeeded,
                                   .failed = t.failed,
                                   .early_stopped = t.early_stopped};
  OptimizationOutcome outcome = SummarizeOptimization(ctx.spec, ctx.trials);
  ctx.status.result = std::move(outcome.best);
  ctx.status.pareto_front = std::move(outcome.front);
  ctx.status.trial_results = std::move(outcome.reported);
  BoundOptimizationStatus(ctx.status);
}

}  // namespace

Result<ReconcileResult> OptimizationJobReconciler::Reconcile(const store::ObjectKey& key) {
  ASSIGN_OR_RETURN(std::optional<Loaded<api::CoreObject>> loaded,
                   LoadObject<api::CoreObject>(*options_.store, key));
  if (!loaded) {
    RETURN_IF_ERROR(DeleteEventsOf(*options_.store, key));  // its trials go with it (owned.h)
    return ReconcileResult{};
  }
  if (!loaded->object.metadata.deletion_timestamp.empty()) return ReconcileResult{};
  OptimizationContext ctx{.options = options_,
                          .samplers = samplers_,
                          .stored = std::move(loaded->stored),
                          .job = std::move(loaded->object),
                          .now = FormatRfc3339(options_.clock->Now())};
  if (options_.check_stored) {
    api::ValidationResult checked = api::Validate(api::Object(ctx.job));
    if (!checked.ok()) {
      RETURN_IF_ERROR(
          RecordFailedValidation(*options_.store, *options_.clock, Involved(ctx), checked.errors));
      return ReconcileResult{};
    }
  }
  api::OptimizationJobFields fields = api::OptimizationJobFieldsOf(ctx.job);
  ctx.spec = std::move(fields.spec);
  ctx.status = std::move(fields.status);
  ASSIGN_OR_RETURN(ctx.trials,
                   ReadOptimizationTrials(*options_.store, options_.observations, ctx.job, ctx.spec,
                                          options_.clock->Now(), options_.metric_grace));
  Summarize(ctx);
  if (!Ended(ctx.status)) {
    RETURN_IF_ERROR(ApplyEarlyStopping(ctx));
    bool exhausted = false;
    RETURN_IF_ERROR(CreateTrials(ctx, exhausted));
    Summarize(ctx);
    if (!Ended(ctx.status)) RETURN_IF_ERROR(Conclude(ctx, exhausted));
  }
  RETURN_IF_ERROR(WriteStatusIfChanged(*options_.store, ctx.stored, api::Encode(ctx.status)));
  ReconcileResult result;
  // A Complete trial whose objectives are not read yet: read again soon
  // (collected output wakes no reconcile).
  bool waiting = std::any_of(ctx.trials.begin(), ctx.trials.end(), [](const auto& t) {
    return t.state == tune::TrialState::kPending && api::JobOutcome(t.stored) == "Succeeded";
  });
  if (waiting) result.requeue_after = std::chrono::seconds(1);
  // Nothing running and not ended: the sampler gave nothing this time
  // (hyperband between rungs), and no trial's change will wake the job.
  if (!waiting && !Ended(ctx.status) && Count(ctx.trials).running == 0) {
    result.requeue_after = std::chrono::seconds(5);
  }
  return result;
}

}  // namespace trainyard::controller
