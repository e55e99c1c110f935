#include "controller/jobset_reconciler.h"

#include <fmt/format.h>
#include <re2/re2.h>

#include <algorithm>
#include <map>

#include "api/trainer_kinds.h"
#include "api/well_known.h"
#include "controller/conditions.h"
#include "controller/events.h"
#include "controller/jobset_children.h"
#include "controller/owned.h"
#include "controller/reconcile_steps.h"
#include "controller/ttl.h"

namespace trainyard::controller {
namespace {

using api::Json;

using api::kJobSetController;
// How soon a JobSet waiting for a name another object holds looks again.
constexpr Duration kBlockedRecheck = std::chrono::seconds(5);

// A child Job as the JobSet controller sees it.
struct Child {
  Json stored;
  std::string rjob;
  int attempt = 0;
  bool complete = false;
  bool failed = false;
  std::string failure_reason;  // the Job's Failed condition's reason and message
  std::string failure_message;
  bool suspended = false;
  int32_t active = 0;
  int32_t ready = 0;  // pods running or done, against parallelism
  int32_t parallelism = 1;
};

struct JobSetContext {
  const JobSetReconcilerOptions& options;
  Json stored;
  api::ObjectMeta meta;
  api::JobSetSpec spec;
  api::JobSetStatus status;
  std::vector<Child> children;  // of the current restart attempt
  TimePoint now;
  std::string now_text;
  bool blocked = false;  // a name it needs is another's: look again later
  EventRecorder Events() const {
    return {
        *options.store,
        *options.clock,
        {.api_version = std::string(api::kJobSetGroupVersion), .kind = "JobSet", .meta = &meta}};
  }
};

bool ConditionTrue(const Json& object, const std::string& type) {
  std::optional<StoredCondition> c = StoredConditionOf(object, type);
  return c && c->status == "True";
}

Child ChildOf(Json stored) {
  Child child;
  const Json& labels = api::ObjectAt(stored, {"metadata", "labels"});
  child.rjob = api::StringAt(labels, std::string(api::kReplicatedJobNameLabel).c_str());
  child.attempt = std::atoi(
      api::StringAt(labels, std::string(api::kJobSetRestartAttemptLabel).c_str(), "0").c_str());
  child.complete = ConditionTrue(stored, "Complete");
  child.failed = ConditionTrue(stored, "Failed");
  for (const Json& c : api::ArrayRefAt(stored, {"status", "conditions"})) {
    if (api::StringAt(c, "type") != "Failed") continue;
    child.failure_reason = api::StringAt(c, "reason");
    child.failure_message = api::StringAt(c, "message");
  }
  child.suspended =
      api::FindAt(stored, {"spec", "suspend"}) != nullptr && stored["spec"]["suspend"] == true;
  child.active = static_cast<int32_t>(api::IntAt(stored, {"status", "active"}));
  child.ready = static_cast<int32_t>(api::IntAt(stored, {"status", "ready"}) +
                                     api::IntAt(stored, {"status", "succeeded"}));
  child.parallelism = static_cast<int32_t>(api::IntAt(stored, {"spec", "parallelism"}, 1));
  child.stored = std::move(stored);
  return child;
}

bool IsFinished(const api::JobSetStatus& status) {
  return std::any_of(status.conditions.begin(), status.conditions.end(),
                     [](const api::MetaCondition& c) {
                       return (c.type == "Completed" || c.type == "Failed") && c.status == "True";
                     });
}

Status DeleteChild(JobSetContext& ctx, const Child& child) {
  return DeleteIfPresent(*ctx.options.store, {"Job", ctx.meta.namespace_,
                                              api::StringAt(child.stored, {"metadata", "name"})});
}

// Reads the Jobs it controls; those of an earlier restart attempt go.
Status LoadChildren(JobSetContext& ctx) {
  std::vector<Json> owned;
  RETURN_IF_ERROR(ctx.options.store->ScanOwnedBy("Job", ctx.meta.uid,
                                                 [&](const Json& doc) { owned.push_back(doc); }));
  int32_t attempt = ctx.status.restarts.value_or(0);
  for (Json& doc : owned) {
    Child child = ChildOf(std::move(doc));
    if (child.attempt < attempt) {
      RETURN_IF_ERROR(DeleteChild(ctx, child));
    } else {
      ctx.children.push_back(std::move(child));
    }
  }
  return OkStatus();
}

Status StopActiveChildren(JobSetContext& ctx) {
  for (const Child& child : ctx.children) {
    if (!child.complete && !child.failed) RETURN_IF_ERROR(DeleteChild(ctx, child));
  }
  return OkStatus();
}

Status Finish(JobSetContext& ctx, const std::string& type, const std::string& reason,
              const std::string& message) {
  PutCondition(ctx.status.conditions, type, "True", reason, message, ctx.now_text);
  ctx.status.terminal_state = type;
  RETURN_IF_ERROR(ctx.Events().Event(type == "Failed" ? "Warning" : "Normal", reason, message));
  return StopActiveChildren(ctx);
}

// The failurePolicy rule for a failed Job: the first whose targets,
// reasons and message patterns (each empty: any) match it; nullptr when
// none does.
const api::JobSetFailureRule* RuleFor(const api::JobSetSpec& spec, const Child& child) {
  if (!spec.failure_policy) return nullptr;
  auto listed = [](const std::vector<std::string>& list, const std::string& value) {
    return list.empty() || std::find(list.begin(), list.end(), value) != list.end();
  };
  for (const api::JobSetFailureRule& rule : spec.failure_policy->rules) {
    bool message = rule.on_job_failure_message_patterns.empty();
    for (const std::string& pattern : rule.on_job_failure_message_patterns) {
      RE2 re(pattern, RE2::Quiet);
      message = message || (re.ok() && RE2::PartialMatch(child.failure_message, re));
    }
    if (listed(rule.target_replicated_jobs, child.rjob) &&
        listed(rule.on_job_failure_reasons, child.failure_reason) && message) {
      return &rule;
    }
  }
  return nullptr;
}

// A Job failed: restart every Job while the failure policy allows, else fail.
Status HandleFailure(JobSetContext& ctx, const Child& failed) {
  if (!ctx.spec.failure_policy) {
    return Finish(ctx, "Failed", "FailedJobs", "jobset failed due to one or more job failures");
  }
  const api::JobSetFailureRule* rule = RuleFor(ctx.spec, failed);
  std::string action = rule != nullptr ? rule->action : "RestartJobSet";
  if (action == "FailJobSet") {
    return Finish(ctx, "Failed", "FailJobSetFailurePolicyAction",
                  "applying FailJobSet failure policy action");
  }
  bool counted = action != "RestartJobSetAndIgnoreMaxRestarts";
  int32_t towards_max = ctx.status.restarts_count_towards_max.value_or(0);
  if (counted && towards_max >= ctx.spec.failure_policy->max_restarts.value_or(0)) {
    return Finish(ctx, "Failed", "ReachedMaxRestarts",
                  "jobset failed due to reaching max number of restarts");
  }
  ctx.status.restarts = ctx.status.restarts.value_or(0) + 1;
  if (counted) ctx.status.restarts_count_towards_max = towards_max + 1;
  RETURN_IF_ERROR(ctx.Events().Event(
      "Warning", "Restarting", fmt::format("restarting jobset, attempt {}", *ctx.status.restarts)));
  for (const Child& child : ctx.children) RETURN_IF_ERROR(DeleteChild(ctx, child));
  ctx.children.clear();
  return OkStatus();
}

std::vector<const Child*> ChildrenOf(const JobSetContext& ctx, const std::string& rjob) {
  std::vector<const Child*> out;
  for (const Child& c : ctx.children) {
    if (c.rjob == rjob) out.push_back(&c);
  }
  return out;
}

// Every Job of `rjob` exists and is Ready (its pods running or done) or,
// for "Complete", has completed.
bool Reached(const JobSetContext& ctx, const api::ReplicatedJob& rjob, const std::string& status) {
  std::vector<const Child*> jobs = ChildrenOf(ctx, rjob.name);
  if (static_cast<int32_t>(jobs.size()) < rjob.replicas.value_or(1)) return false;
  return std::all_of(jobs.begin(), jobs.end(), [&](const Child* c) {
    return c->complete || (status == "Ready" && c->ready >= c->parallelism);
  });
}

bool Succeeded(const JobSetContext& ctx) {
  const api::JobSetSuccessPolicy policy =
      ctx.spec.success_policy.value_or(api::JobSetSuccessPolicy{.operator_ = "All"});
  bool any = false, all = true;
  for (const api::ReplicatedJob& rjob : ctx.spec.replicated_jobs) {
    const auto& targets = policy.target_replicated_jobs;
    if (!targets.empty() && std::find(targets.begin(), targets.end(), rjob.name) == targets.end()) {
      continue;
    }
    std::vector<const Child*> jobs = ChildrenOf(ctx, rjob.name);
    int32_t complete = static_cast<int32_t>(
        std::count_if(jobs.begin(), jobs.end(), [](const Child* c) { return c->complete; }));
    any = any || complete > 0;
    all = all && complete >= rjob.replicas.value_or(1);
  }
  return policy.operator_ == "Any" ? any : all;
}

// Whether `rjob` may start: what it dependsOn is reached, and under
// startupPolicy InOrder, the one before it is Ready.
bool MayStart(const JobSetContext& ctx, size_t index) {
  const api::ReplicatedJob& rjob = ctx.spec.replicated_jobs[index];
  for (const api::DependsOn& dep : rjob.depends_on) {
    for (const api::ReplicatedJob& other : ctx.spec.replicated_jobs) {
      if (other.name == dep.name && !Reached(ctx, other, dep.status)) return false;
    }
  }
  bool in_order =
      ctx.spec.startup_policy && ctx.spec.startup_policy->startup_policy_order == "InOrder";
  return !in_order || index == 0 || Reached(ctx, ctx.spec.replicated_jobs[index - 1], "Ready");
}

// Creates what the JobSet makes unless it is there. One of that name that
// is not the JobSet's (another's leftover, or the user's) is left alone and
// said, and the JobSet waits for its name (`ctx.blocked`).
// `failed_reason` is the event's reason when it cannot be made: upstream's
// JobCreationFailed for its Jobs.
Status CreateIfMissing(JobSetContext& ctx, const std::string& kind, Json object,
                       const char* failed_reason = "CreationFailed") {
  store::ObjectKey key{kind, ctx.meta.namespace_, api::StringAt(object, {"metadata", "name"})};
  Result<Json> existing = ctx.options.store->Get(key);
  bool ours = ControlledBy(
      object, ctx.meta.uid);  // what it makes without an owner (a Retain claim) is shared
  if (existing.ok() && ours && !ControlledBy(*existing, ctx.meta.uid)) {
    ctx.blocked = true;
    return ctx.Events().Event(
        "Warning", failed_reason,
        fmt::format("{} {} exists and is not this JobSet's: it waits for the name", kind,
                    key.name));
  }
  if (existing.ok()) return OkStatus();
  if (existing.status().code() != StatusCode::kNotFound) return existing.status();
  Result<Json> created = ctx.options.store->Create(std::move(object));
  if (!created.ok() && created.status().code() != StatusCode::kAlreadyExists) {
    RETURN_IF_ERROR(ctx.Events().Event("Warning", failed_reason, created.status().message()));
    return created.status();
  }
  return OkStatus();
}

Status CreateChildren(JobSetContext& ctx) {
  if (!SubdomainOf(ctx.meta, ctx.spec).empty()) {
    RETURN_IF_ERROR(CreateIfMissing(ctx, "Service", HeadlessService(ctx.meta, ctx.spec)));
  }
  for (Json& claim : PolicyClaims(ctx.meta, ctx.spec)) {
    RETURN_IF_ERROR(CreateIfMissing(ctx, "PersistentVolumeClaim", std::move(claim)));
  }
  int32_t attempt = ctx.status.restarts.value_or(0);
  for (size_t i = 0; i < ctx.spec.replicated_jobs.size(); ++i) {
    if (!MayStart(ctx, i)) continue;
    const api::ReplicatedJob& rjob = ctx.spec.replicated_jobs[i];
    std::vector<const Child*> existing = ChildrenOf(ctx, rjob.name);
    for (int index = 0; index < rjob.replicas.value_or(1); ++index) {
      std::string name = ChildJobName(ctx.meta.name, rjob.name, index);
      bool have = std::any_of(existing.begin(), existing.end(), [&](const Child* c) {
        return api::StringAt(c->stored, {"metadata", "name"}) == name;
      });
      if (!have) {
        RETURN_IF_ERROR(CreateIfMissing(
            ctx, "Job", ChildJob(ctx.meta, ctx.spec, rjob, index, attempt), "JobCreationFailed"));
      }
    }
  }
  return OkStatus();
}

// suspend reaches every Job; the Suspended condition says so.
// What a resumed Job takes from the JobSet as it is now, as upstream's
// JobSet controller does: Kueue and runtime patches change these while it
// is suspended.
void RefreshPodTemplate(const JobSetContext& ctx, Child& child) {
  auto rjob = std::find_if(ctx.spec.replicated_jobs.begin(), ctx.spec.replicated_jobs.end(),
                           [&](const api::ReplicatedJob& r) { return r.name == child.rjob; });
  if (rjob == ctx.spec.replicated_jobs.end()) return;
  int index = std::atoi(
      api::StringAt(child.stored, {"metadata", "labels", std::string(api::kJobIndexLabel).c_str()})
          .c_str());
  Json fresh = ChildJob(ctx.meta, ctx.spec, *rjob, index, child.attempt);
  Json& pod = child.stored["spec"]["template"];
  const Json& fresh_pod = fresh["spec"]["template"];
  for (const char* field : {"labels", "annotations"}) {
    pod["metadata"][field] = api::ObjectAt(fresh_pod, {"metadata", field});
  }
  for (const char* field : {"nodeSelector", "tolerations", "schedulingGates"}) {
    if (const Json* value = api::FindAt(fresh_pod, {"spec", field})) {
      pod["spec"][field] = *value;
    } else if (pod["spec"].contains(field)) {
      pod["spec"].erase(field);
    }
  }
}

// Jobs of a replicated job the JobSet no longer has (it changed while
// suspended) go.
Status DropOrphans(JobSetContext& ctx) {
  for (const Child& child : ctx.children) {
    bool known = std::any_of(ctx.spec.replicated_jobs.begin(), ctx.spec.replicated_jobs.end(),
                             [&](const api::ReplicatedJob& r) { return r.name == child.rjob; });
    if (!known) RETURN_IF_ERROR(DeleteChild(ctx, child));
  }
  std::erase_if(ctx.children, [&](const Child& child) {
    return std::none_of(ctx.spec.replicated_jobs.begin(), ctx.spec.replicated_jobs.end(),
                        [&](const api::ReplicatedJob& r) { return r.name == child.rjob; });
  });
  return OkStatus();
}

Status ApplySuspend(JobSetContext& ctx) {
  bool suspend = ctx.spec.suspend.value_or(false);
  RETURN_IF_ERROR(DropOrphans(ctx));
  for (Child& child : ctx.children) {
    if (child.complete || child.failed || child.suspended == suspend) continue;
    if (!suspend) RefreshPodTemplate(ctx, child);
    child.stored["spec"]["suspend"] = suspend;
    RETURN_IF_ERROR(ctx.options.store->Update(child.stored).status());
    child.suspended = suspend;
  }
  bool was = std::any_of(
      ctx.status.conditions.begin(), ctx.status.conditions.end(),
      [](const api::MetaCondition& c) { return c.type == "Suspended" && c.status == "True"; });
  if (suspend && !was) {
    PutCondition(ctx.status.conditions, "Suspended", "True", "SuspendedJobs", "jobset is suspended",
                 ctx.now_text);
    RETURN_IF_ERROR(ctx.Events().Event("Normal", "SuspendedJobs", "jobset is suspended"));
  } else if (!suspend && was) {
    PutCondition(ctx.status.conditions, "Suspended", "False", "ResumeJobs", "jobset is resumed",
                 ctx.now_text);
    RETURN_IF_ERROR(ctx.Events().Event("Normal", "ResumeJobs", "jobset is resumed"));
  }
  return OkStatus();
}

void CountChildren(JobSetContext& ctx) {
  ctx.status.replicated_jobs_status.clear();
  for (const api::ReplicatedJob& rjob : ctx.spec.replicated_jobs) {
    api::ReplicatedJobStatus s{.name = rjob.name};
    for (const Child* c : ChildrenOf(ctx, rjob.name)) {
      if (c->complete) {
        ++s.succeeded;
      } else if (c->failed) {
        ++s.failed;
      } else if (c->suspended) {
        ++s.suspended;
      } else {
        if (c->active > 0) ++s.active;
        if (c->ready >= c->parallelism) ++s.ready;
      }
    }
    ctx.status.replicated_jobs_status.push_back(std::move(s));
  }
  if (!ctx.status.restarts) ctx.status.restarts = 0;
}

// ttlSecondsAfterFinished: a finished JobSet (and so what it made) is
// deleted that long after it finished; until then, when to look again.
Result<ReconcileResult> ApplyTtl(JobSetContext& ctx) {
  if (!IsFinished(ctx.status)) return ReconcileResult{};
  std::string finished;
  for (const api::MetaCondition& c : ctx.status.conditions) {
    if ((c.type == "Completed" || c.type == "Failed") && c.status == "True") {
      finished = c.last_transition_time;
    }
  }
  ASSIGN_OR_RETURN(TtlStep ttl,
                   ExpireAfterTtl(ctx.spec.ttl_seconds_after_finished,
                                  ParseRfc3339(finished).value_or(ctx.now), ctx.now, [&] {
                                    return DeleteIfPresent(
                                        *ctx.options.store,
                                        {"JobSet", ctx.meta.namespace_, ctx.meta.name});
                                  }));
  return ReconcileResult{ttl.look_again};
}

Status Step(JobSetContext& ctx) {
  if (IsFinished(ctx.status)) return StopActiveChildren(ctx);
  auto failed = std::find_if(ctx.children.begin(), ctx.children.end(),
                             [](const Child& c) { return c.failed; });
  if (failed != ctx.children.end()) {
    Child copy = *failed;
    RETURN_IF_ERROR(HandleFailure(ctx, copy));
    if (IsFinished(ctx.status)) return OkStatus();
  } else if (!ctx.spec.replicated_jobs.empty() && Succeeded(ctx)) {
    return Finish(ctx, "Completed", "AllJobsCompleted", "jobset completed successfully");
  }
  RETURN_IF_ERROR(ApplySuspend(ctx));
  return CreateChildren(ctx);
}

}  // namespace

Result<ReconcileResult> JobSetReconciler::Reconcile(const store::ObjectKey& key) {
  ASSIGN_OR_RETURN(std::optional<Loaded<api::JobSet>> loaded,
                   LoadObject<api::JobSet>(*options_.store, key));
  if (!loaded) {
    RETURN_IF_ERROR(DeleteEventsOf(*options_.store, key));
    return ReconcileResult{};
  }
  api::JobSet& jobset = loaded->object;
  // Another controller's (Kueue's MultiKueue, say): not ours to run.
  if (!jobset.spec.managed_by.empty() && jobset.spec.managed_by != kJobSetController) {
    return ReconcileResult{};
  }
  JobSetContext ctx{.options = options_,
                    .stored = std::move(loaded->stored),
                    .meta = std::move(jobset.metadata),
                    .spec = std::move(jobset.spec),
                    .status = std::move(jobset.status),
                    .now = options_.clock->Now(),
                    .now_text = FormatRfc3339(options_.clock->Now())};
  RETURN_IF_ERROR(LoadChildren(ctx));
  RETURN_IF_ERROR(Step(ctx));
  CountChildren(ctx);
  RETURN_IF_ERROR(WriteStatusIfChanged(*options_.store, ctx.stored, api::Encode(ctx.status)));
  if (ctx.blocked) return ReconcileResult{kBlockedRecheck};
  return ApplyTtl(ctx);
}

}  // namespace trainyard::controller
