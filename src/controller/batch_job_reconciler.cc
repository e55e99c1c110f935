#include "controller/batch_job_reconciler.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "api/defaults.h"
#include "api/json.h"
#include "api/names.h"
#include "api/object.h"
#include "api/pod_object.h"
#include "controller/conditions.h"
#include "controller/events.h"
#include "controller/owned.h"
#include "controller/pod_state.h"
#include "controller/reconcile_steps.h"
#include "controller/tracked_owner.h"
#include "controller/ttl.h"

namespace trainyard::controller {
namespace {

struct BatchJobContext {
  const BatchJobReconcilerOptions& options;
  api::Json stored;
  api::BatchJob job;
  std::vector<api::Pod> pods;  // owned by the job
  TimePoint now;
  std::string now_text;
  api::BatchJobStatus& status() { return job.status; }
  // Events as Kubernetes' job controller records them.
  EventRecorder Events() const {
    return {*options.store,
            *options.clock,
            {.api_version = std::string(api::kBatchGroupVersion),
             .kind = "Job",
             .meta = &job.metadata}};
  }
};

bool IsTrue(const std::vector<api::BatchJobCondition>& conditions, const std::string& type) {
  return std::any_of(conditions.begin(), conditions.end(),
                     [&](const auto& c) { return c.type == type && c.status == "True"; });
}

bool IsFinished(const api::BatchJobStatus& status) {
  return IsTrue(status.conditions, "Complete") || IsTrue(status.conditions, "Failed");
}

void SetCondition(BatchJobContext& ctx, const std::string& type, const std::string& status,
                  const std::string& reason, const std::string& message) {
  PutCondition(ctx.status().conditions, api::BatchJobCondition{.type = type,
                                                               .status = status,
                                                               .last_probe_time = ctx.now_text,
                                                               .last_transition_time = ctx.now_text,
                                                               .reason = reason,
                                                               .message = message});
}

int CompletionIndexOf(const api::Pod& pod) {
  auto it = pod.metadata.annotations.find(std::string(api::kBatchCompletionIndex));
  return it == pod.metadata.annotations.end() ? -1 : std::atoi(it->second.c_str());
}

api::Pod BuildPod(const api::BatchJob& job, int index, std::mt19937& random) {
  api::Pod pod;
  pod.metadata.namespace_ = job.metadata.namespace_;
  pod.metadata.labels = job.spec.template_.metadata.labels;
  pod.metadata.annotations = job.spec.template_.metadata.annotations;
  for (std::string_view key : {api::kBatchControllerUidLabel, std::string_view("controller-uid")})
    pod.metadata.labels[std::string(key)] = job.metadata.uid;
  for (std::string_view key : {api::kBatchJobNameLabel, std::string_view("job-name")})
    pod.metadata.labels[std::string(key)] = job.metadata.name;
  api::OwnerReference owner;
  owner.api_version = std::string(api::kBatchGroupVersion);
  owner.kind = "Job";
  owner.name = job.metadata.name;
  owner.uid = job.metadata.uid;
  owner.controller = true;
  owner.block_owner_deletion = true;
  pod.metadata.owner_references.push_back(owner);
  pod.spec = job.spec.template_.spec;
  std::string suffix = api::RandomNameSuffix(random);
  if (index < 0) {
    pod.metadata.name = fmt::format("{}-{}", job.metadata.name, suffix);
    return pod;
  }
  pod.metadata.name = fmt::format("{}-{}-{}", job.metadata.name, index, suffix);
  // As Kubernetes: an Indexed Job's pod is host `<job>-<index>`, the name
  // a JobSet's subdomain gives its peers.
  if (!pod.spec.extra.contains("hostname")) {
    pod.spec.extra["hostname"] = fmt::format("{}-{}", job.metadata.name, index);
  }
  pod.metadata.labels[std::string(api::kBatchCompletionIndex)] = std::to_string(index);
  pod.metadata.annotations[std::string(api::kBatchCompletionIndex)] = std::to_string(index);
  for (api::Container& c : pod.spec.containers) {
    api::EnvVar var;
    var.name = "JOB_COMPLETION_INDEX";
    var.value = std::to_string(index);
    c.env.push_back(std::move(var));
  }
  return pod;
}

Status DeletePod(BatchJobContext& ctx, const api::Pod& pod) {
  RETURN_IF_ERROR(
      DeleteIfPresent(*ctx.options.store, {"Pod", pod.metadata.namespace_, pod.metadata.name}));
  return ctx.Events().Event("Normal", "SuccessfulDelete",
                            fmt::format("Deleted pod: {}", pod.metadata.name));
}

Status CreatePod(BatchJobContext& ctx, api::Pod pod) {
  MarkTrackedOwner(*ctx.options.store, pod);
  RETURN_IF_ERROR(ctx.options.store->Create(api::EncodePod(pod)).status());
  return ctx.Events().Event("Normal", "SuccessfulCreate",
                            fmt::format("Created pod: {}", pod.metadata.name));
}

// An event for each condition the job reaches, and for a resume.
Status RecordConditions(BatchJobContext& ctx) {
  for (const api::BatchJobCondition& c : ctx.status().conditions) {
    std::optional<StoredCondition> before = StoredConditionOf(ctx.stored, c.type);
    bool was_true = before && before->status == "True";
    if (c.status == "True" && !was_true) {
      if (c.type == "Complete") {
        RETURN_IF_ERROR(ctx.Events().Event("Normal", "Completed", "Job completed"));
      } else if (c.type == "Suspended") {
        RETURN_IF_ERROR(ctx.Events().Event("Normal", "Suspended", "Job suspended"));
      } else {
        RETURN_IF_ERROR(
            ctx.Events().Event(c.type == "Failed" ? "Warning" : "Normal", c.reason, c.message));
      }
    } else if (c.type == "Suspended" && c.status != "True" && was_true) {
      RETURN_IF_ERROR(ctx.Events().Event("Normal", "Resumed", "Job resumed"));
    }
  }
  return OkStatus();
}

Status DeleteActivePods(BatchJobContext& ctx) {
  for (const api::Pod& pod : ctx.pods) {
    if (!api::HasFinished(pod)) RETURN_IF_ERROR(DeletePod(ctx, pod));
  }
  std::erase_if(ctx.pods, [](const api::Pod& pod) { return !api::HasFinished(pod); });
  return OkStatus();
}

// podFailurePolicy's first rule matching a failed pod's exit codes:
// "FailJob", "Ignore", "Count", or "" when none does. Sets `message` for
// FailJob, in Kubernetes' words.
std::string FailurePolicyAction(const api::BatchJob& job, const api::Pod& pod,
                                std::string& message) {
  const api::Json rules = api::ArrayAt(job.spec.pod_failure_policy, "rules");
  for (size_t i = 0; i < rules.size(); ++i) {
    if (!rules[i].is_object() || !rules[i].contains("onExitCodes")) continue;
    const api::Json& on = rules[i]["onExitCodes"];  // onPodConditions: no disruptions happen here
    std::string container = api::StringAt(on, "containerName");
    bool in = api::StringAt(on, "operator", "In") == "In";
    std::set<int> values;
    for (const api::Json& v : api::ArrayAt(on, "values")) {
      if (v.is_number_integer()) values.insert(v.get<int>());  // validated; never throw here
    }
    for (const api::ContainerStatus& cs : pod.status.container_statuses) {
      if (!cs.state.terminated || cs.state.terminated->exit_code == 0) continue;
      if (!container.empty() && cs.name != container) continue;
      int code = cs.state.terminated->exit_code;
      if (values.contains(code) != in) continue;
      std::string action = api::StringAt(rules[i], "action");
      message = fmt::format(
          "Container {} for pod {}/{} failed with exit code {} matching {} rule at index {}",
          cs.name, pod.metadata.namespace_, pod.metadata.name, code, action, i);
      return action;
    }
  }
  return "";
}

Result<ReconcileResult> Finish(BatchJobContext& ctx, const std::string& type,
                               const std::string& reason, const std::string& message) {
  std::string said = message;
  if (type == "Failed" && reason != "PodFailurePolicy") {  // that one names its pod
    // The failure that ended it, what a user (or a trial) looks at first.
    std::vector<const api::Pod*> pods;
    for (const api::Pod& pod : ctx.pods) pods.push_back(&pod);
    std::string failure = LatestContainerFailure(pods);
    if (!failure.empty()) said += fmt::format(" (last failure: {})", failure);
  }
  SetCondition(ctx, type, "True", reason, said);
  if (ctx.status().completion_time.empty() && type == "Complete")
    ctx.status().completion_time = ctx.now_text;
  RETURN_IF_ERROR(DeleteActivePods(ctx));
  ctx.status().active = 0;
  return ReconcileResult{};
}

Status WriteStatus(BatchJobContext& ctx) {
  return WriteStatusIfChanged(*ctx.options.store, ctx.stored, api::Encode(ctx.job.status),
                              [&] { return RecordConditions(ctx); });
}

// Deletes the job, with its pods, once its TTL after finishing has passed.
Result<TtlStep> ApplyTtl(BatchJobContext& ctx) {
  std::string finished = ctx.status().completion_time;
  for (const auto& c : ctx.status().conditions) {
    if (c.type == "Failed" && c.status == "True") finished = c.last_transition_time;
  }
  return ExpireAfterTtl(
      ctx.job.spec.ttl_seconds_after_finished, ParseRfc3339(finished), ctx.now, [&]() -> Status {
        for (const api::Pod& pod : ctx.pods) RETURN_IF_ERROR(DeletePod(ctx, pod));
        return DeleteIfPresent(*ctx.options.store,
                               {"Job", ctx.job.metadata.namespace_, ctx.job.metadata.name});
      });
}

// The step of an unfinished, unsuspended job: counts, limits, verdict,
// then the pods still missing.
Result<ReconcileResult> ReconcileActive(BatchJobContext& ctx, std::mt19937& random) {
  const api::BatchJobSpec& spec = ctx.job.spec;
  int32_t succeeded = 0, failed = 0, counted_failures = 0, ready = 0;
  std::set<int> done_indexes, active_indexes;
  int32_t active = 0;
  for (const api::Pod& pod : ctx.pods) {
    counted_failures += RestartsOf(pod);
    if (pod.status.phase == "Succeeded") {
      ++succeeded;
      done_indexes.insert(CompletionIndexOf(pod));
    } else if (pod.status.phase == "Failed") {
      ++failed;
      std::string message;
      std::string action = FailurePolicyAction(ctx.job, pod, message);
      if (action == "FailJob") return Finish(ctx, "Failed", "PodFailurePolicy", message);
      if (action != "Ignore") ++counted_failures;
    } else {
      ++active;
      active_indexes.insert(CompletionIndexOf(pod));
      if (pod.status.phase == "Running") ++ready;
    }
  }
  ctx.status().succeeded = succeeded;
  ctx.status().failed = failed;
  ctx.status().ready = ready;
  ctx.status().active = active;
  if (counted_failures > *spec.backoff_limit) {
    return Finish(ctx, "Failed", "BackoffLimitExceeded",
                  "Job has reached the specified backoff limit");
  }
  std::optional<Duration> deadline_left;
  if (spec.active_deadline_seconds) {
    TimePoint start = ParseRfc3339(ctx.status().start_time).value_or(ctx.now);
    TimePoint deadline = start + std::chrono::seconds(*spec.active_deadline_seconds);
    if (ctx.now >= deadline) {
      return Finish(ctx, "Failed", "DeadlineExceeded",
                    "Job was active longer than specified deadline");
    }
    deadline_left = deadline - ctx.now;
  }
  bool indexed = spec.completion_mode == "Indexed";
  bool complete = spec.completions
                      ? (indexed ? static_cast<int32_t>(done_indexes.size()) >= *spec.completions
                                 : succeeded >= *spec.completions)
                      : succeeded > 0 && active == 0;
  if (complete) {
    return Finish(ctx, "Complete", "CompletionsReached",
                  "Reached expected number of succeeded pods");
  }
  int32_t room = *spec.parallelism - active;
  if (indexed) {
    for (int i = 0; i < *spec.completions && room > 0; ++i) {
      if (done_indexes.contains(i) || active_indexes.contains(i)) continue;
      RETURN_IF_ERROR(CreatePod(ctx, BuildPod(ctx.job, i, random)));
      --room;
      ++active;
    }
  } else {
    int32_t wanted = spec.completions ? std::min(room, *spec.completions - succeeded - active)
                                      : (succeeded > 0 ? 0 : room);
    for (int32_t i = 0; i < wanted; ++i) {
      RETURN_IF_ERROR(CreatePod(ctx, BuildPod(ctx.job, -1, random)));
      ++active;
    }
  }
  ctx.status().active = active;
  return ReconcileResult{deadline_left};
}

Status LoadPods(BatchJobContext& ctx) {
  ASSIGN_OR_RETURN(ctx.pods, ControlledPods(*ctx.options.store, ctx.job.metadata.uid));
  return OkStatus();
}

}  // namespace

Result<ReconcileResult> BatchJobReconciler::Reconcile(const store::ObjectKey& key) {
  ASSIGN_OR_RETURN(std::optional<Loaded<api::BatchJob>> loaded,
                   LoadObject<api::BatchJob>(*options_.store, key));
  if (!loaded) {
    // The job is gone: so are its events (its pods go by the garbage
    // collector, controller/owned.h).
    RETURN_IF_ERROR(DeleteEventsOf(*options_.store, key));
    return ReconcileResult{};
  }
  const std::optional<std::string>& managed_by = loaded->object.spec.managed_by;
  if (managed_by && *managed_by != "kubernetes.io/job-controller") return ReconcileResult{};
  BatchJobContext ctx{options_, std::move(loaded->stored), std::move(loaded->object),
                      {},       options_.clock->Now(),     ""};
  ctx.now_text = FormatRfc3339(ctx.now);
  RETURN_IF_ERROR(LoadPods(ctx));

  ReconcileResult result;
  if (IsFinished(ctx.status())) {
    RETURN_IF_ERROR(DeleteActivePods(ctx));
    ASSIGN_OR_RETURN(TtlStep ttl, ApplyTtl(ctx));
    result.requeue_after = ttl.look_again;
    if (ttl.deleted) return result;
  } else if (ctx.job.spec.suspend.value_or(false)) {
    RETURN_IF_ERROR(DeleteActivePods(ctx));
    ctx.status().active = 0;
    SetCondition(ctx, "Suspended", "True", "JobSuspended", "Job suspended");
  } else {
    if (IsTrue(ctx.status().conditions, "Suspended")) {
      SetCondition(ctx, "Suspended", "False", "JobResumed", "Job resumed");
      ctx.status().start_time = ctx.now_text;  // the deadline counts from the resume
    }
    if (ctx.status().start_time.empty()) ctx.status().start_time = ctx.now_text;
    ASSIGN_OR_RETURN(result, ReconcileActive(ctx, random_));
    if (IsFinished(ctx.status())) {
      ASSIGN_OR_RETURN(TtlStep ttl, ApplyTtl(ctx));
      result.requeue_after = ttl.look_again;
      if (ttl.deleted) return result;
    }
  }
  RETURN_IF_ERROR(WriteStatus(ctx));
  return result;
}

}  // namespace trainyard::controller
