#include "controller/trainjob_reconciler.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "api/json.h"
#include "api/trainer_kinds.h"
#include "api/validation.h"
#include "api/well_known.h"
#include "controller/conditions.h"
#include "controller/events.h"
#include "controller/owned.h"
#include "controller/reconcile_steps.h"
#include "controller/ssh_auth_secret.h"
#include "controller/trainjob_admission.h"
#include "controller/trainjob_build.h"
#include "controller/trainjob_pod_group.h"

namespace trainyard::controller {
namespace {

using api::Json;

// How often a TrainJob whose runtime is missing looks for it again.
constexpr Duration kRuntimeRecheck = std::chrono::seconds(5);
constexpr const char* kRendezvousKey = "rendezvous";
constexpr int64_t kCenturySeconds = int64_t{100} * 365 * 24 * 3600;

struct TrainJobContext {
  const TrainJobReconcilerOptions& options;
  Json stored;
  api::ObjectMeta meta;
  api::TrainJobSpec spec;
  api::TrainJobStatus status;
  TimePoint now;
  std::string now_text;
  std::vector<std::string> unknown_fields;  // of the stored job, each said
  EventRecorder Events() const {
    return {
        *options.store,
        *options.clock,
        {.api_version = std::string(api::kTrainerGroupVersion), .kind = "TrainJob", .meta = &meta}};
  }
};

api::MetaCondition* FindCondition(api::TrainJobStatus& status, std::string_view type) {
  auto it = std::find_if(status.conditions.begin(), status.conditions.end(),
                         [&](const api::MetaCondition& c) { return c.type == type; });
  return it == status.conditions.end() ? nullptr : &*it;
}

bool IsTrue(api::TrainJobStatus& status, std::string_view type) {
  api::MetaCondition* c = FindCondition(status, type);
  return c != nullptr && c->status == "True";
}

// Sets a condition; an event says so when its status changes.
Status SetCondition(TrainJobContext& ctx, const std::string& type, const std::string& status,
                    const std::string& reason, const std::string& message) {
  if (!PutCondition(ctx.status.conditions, type, status, reason, message, ctx.now_text)) {
    return OkStatus();
  }
  return ctx.Events().Event(type == "Failed" ? "Warning" : "Normal", reason, message);
}

bool IsFinished(TrainJobContext& ctx) {
  api::MetaCondition* failed = FindCondition(ctx.status, "Failed");
  bool failed_for_good = failed != nullptr && failed->status == "True" &&
                         api::FailedForGood("TrainJob", failed->reason);
  return IsTrue(ctx.status, "Complete") || failed_for_good;
}

// The port of the job's rendezvous on this machine, kept on the job so
// that a rebuilt JobSet keeps it.
Result<int> RendezvousPort(TrainJobContext& ctx) {
  std::string text = ctx.meta.annotations[std::string(api::kPortsAnnotation)];
  Json ports = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (int64_t kept = api::IntAt(ports, kRendezvousKey, -1); kept >= 0)
    return static_cast<int>(kept);
  ASSIGN_OR_RETURN(
      int port, ctx.options.replicas.ports->Allocate(
                    store::ObjectKey{"TrainJob", ctx.meta.namespace_, ctx.meta.name}.ToString()));
  Json annotation = {{kRendezvousKey, port}};
  ctx.stored["metadata"]["annotations"][std::string(api::kPortsAnnotation)] = annotation.dump();
  ASSIGN_OR_RETURN(ctx.stored, ctx.options.store->Update(ctx.stored));
  ctx.meta.annotations[std::string(api::kPortsAnnotation)] = annotation.dump();
  return port;
}

void ReleasePort(TrainJobContext& ctx) {
  auto it = ctx.meta.annotations.find(std::string(api::kPortsAnnotation));
  if (it == ctx.meta.annotations.end() || ctx.options.replicas.ports == nullptr) return;
  Json ports = Json::parse(it->second, nullptr, /*allow_exceptions=*/false);
  if (int64_t kept = api::IntAt(ports, kRendezvousKey, -1); kept >= 0) {
    ctx.options.replicas.ports->Release(static_cast<int>(kept));
  }
}

// Suspended, as upstream words it; the start of the deadline's clock.
Status ApplySuspendCondition(TrainJobContext& ctx) {
  if (ctx.spec.suspend.value_or(false)) {
    return SetCondition(ctx, "Suspended", "True", "Suspended", "TrainJob is suspended");
  }
  if (IsTrue(ctx.status, "Suspended")) {
    return SetCondition(ctx, "Suspended", "False", "Resumed", "TrainJob is resumed");
  }
  return OkStatus();
}

// How long until activeDeadlineSeconds, counted from creation or the last
// resume; nullopt when none applies. Zero or less: past it.
std::optional<Duration> DeadlineLeft(TrainJobContext& ctx) {
  if (!ctx.spec.active_deadline_seconds || ctx.spec.suspend.value_or(false)) return std::nullopt;
  std::string start = ctx.meta.creation_timestamp;
  if (api::MetaCondition* s = FindCondition(ctx.status, "Suspended"); s && s->status == "False") {
    start = s->last_transition_time;
  }
  TimePoint begin = ParseRfc3339(start).value_or(ctx.now);
  // Past a century is never: int64 nanoseconds hold about 292 years.
  int64_t seconds = std::min<int64_t>(*ctx.spec.active_deadline_seconds, kCenturySeconds);
  return begin + std::chrono::seconds(seconds) - ctx.now;
}

Status DeleteJobSet(TrainJobContext& ctx) {
  return DeleteIfPresent(*ctx.options.store, {"JobSet", ctx.meta.namespace_, ctx.meta.name});
}

// The JobSet of the TrainJob's name: ours (its controller is the job), or
// another's (a user's, or one of an earlier job of that name not yet
// collected), which the job waits for.
struct JobSetState {
  std::optional<Json> ours;
  bool foreign = false;
};

Result<JobSetState> ReadJobSet(TrainJobContext& ctx) {
  Result<Json> jobset = ctx.options.store->Get({"JobSet", ctx.meta.namespace_, ctx.meta.name});
  if (jobset.status().code() == StatusCode::kNotFound) return JobSetState{};
  if (!jobset.ok()) return jobset.status();
  for (const Json& owner : api::ArrayRefAt(*jobset, {"metadata", "ownerReferences"})) {
    if (api::BoolAt(owner, "controller") && api::StringAt(owner, "uid") == ctx.meta.uid) {
      return JobSetState{.ours = std::move(*jobset)};
    }
  }
  return JobSetState{.foreign = true};
}

bool Suspended(const Json& jobset) {
  const Json* suspend = api::FindAt(jobset, {"spec", "suspend"});
  return suspend != nullptr && *suspend == true;
}

// Writes the JobSet (and ConfigMaps) the runtime makes: created when
// missing; rebuilt while the job or the JobSet is suspended, as upstream.
// The runtime's PodGroup, made before the JobSet whose pods wait for it;
// changed only while the job is suspended, as upstream leaves a running
// gang's group alone.
Status ApplyPodGroup(TrainJobContext& ctx, const Json& group) {
  Result<Json> created = ctx.options.store->Create(group);
  if (created.ok() || created.status().code() != StatusCode::kAlreadyExists) {
    if (created.status().code() == StatusCode::kNotFound) {
      // Said on the job, and tried again: the CRDs may come.
      std::string why = fmt::format(
          "the runtime's podGroupPolicy needs {} PodGroups, which this cluster does not serve: "
          "install its scheduler's CRDs",
          api::StringAt(group, "apiVersion"));
      RETURN_IF_ERROR(ctx.Events().Event("Warning", "PodGroupCreationFailed", why));
      return FailedPreconditionError(why);
    }
    return created.status();
  }
  if (!ctx.spec.suspend.value_or(false)) return OkStatus();
  std::string kind = api::StringAt(group, "apiVersion").starts_with("scheduling.x-k8s.io")
                         ? "PodGroup.scheduling.x-k8s.io"
                         : "PodGroup";
  ASSIGN_OR_RETURN(Json stored, ctx.options.store->Get({kind, ctx.meta.namespace_, ctx.meta.name}));
  if (!ControlledBy(stored, ctx.meta.uid)) {
    return ctx.Events().Event(
        "Warning", "PodGroupCreationFailed",
        fmt::format("PodGroup {} exists and is not this TrainJob's: its pods wait for "
                    "it to go",
                    ctx.meta.name));
  }
  // Only what the runtime sets: the scheduler's own fields (Volcano's
  // queue) stay as they are.
  Json spec = stored["spec"];
  for (const auto& [field, value] : group["spec"].items()) spec[field] = value;
  if (spec == stored["spec"]) return OkStatus();
  stored["spec"] = std::move(spec);
  return ctx.options.store->Update(std::move(stored)).status();
}

// An MPI runtime's SSH key Secret on a cluster, made once: it is
// immutable, and the running pods hold its key.
Status EnsureSshAuthSecret(TrainJobContext& ctx) {
  TrainJobSource job{.meta = ctx.meta, .spec = ctx.spec};
  Result<Json> stored =
      ctx.options.store->Get({"Secret", ctx.meta.namespace_, SshAuthSecretName(job)});
  if (stored.ok() || stored.status().code() != StatusCode::kNotFound) return stored.status();
  ASSIGN_OR_RETURN(Json secret, BuildSshAuthSecret(job));
  Result<Json> created = ctx.options.store->Create(std::move(secret));
  if (created.ok() || created.status().code() == StatusCode::kAlreadyExists) return OkStatus();
  return created.status();
}

// Made, or brought up to date when the job's own (the status server's CA
// was renewed before the job's JobSet was made). One of someone else's (a
// TrainJob of the same name deleted just before, whose dependents the
// garbage collector has not removed yet) is waited for: its pods would
// mount the wrong one, or none once it goes.
Status ApplyConfigMap(TrainJobContext& ctx, const Json& config_map) {
  Result<Json> created = ctx.options.store->Create(config_map);
  if (created.ok() || created.status().code() != StatusCode::kAlreadyExists) {
    return created.status();
  }
  std::string name = api::StringAt(config_map, {"metadata", "name"});
  ASSIGN_OR_RETURN(Json stored, ctx.options.store->Get({"ConfigMap", ctx.meta.namespace_, name}));
  if (!ControlledBy(stored, ctx.meta.uid)) {
    return UnavailableError(
        fmt::format("ConfigMap {} exists and is not this TrainJob's: waiting for it to go", name));
  }
  if (stored["data"] == config_map["data"]) return OkStatus();
  stored["data"] = config_map["data"];
  return ctx.options.store->Update(std::move(stored)).status();
}

Status ApplyObjects(TrainJobContext& ctx, const TrainJobObjects& objects,
                    const std::optional<Json>& existing) {
  for (const Json& config_map : objects.config_maps) {
    RETURN_IF_ERROR(ApplyConfigMap(ctx, config_map));
  }
  if (objects.pod_group) RETURN_IF_ERROR(ApplyPodGroup(ctx, *objects.pod_group));
  if (!existing) {
    RETURN_IF_ERROR(ctx.options.store->Create(objects.jobset).status());
    return ctx.Events().Event("Normal", "Created", fmt::format("Created JobSet {}", ctx.meta.name));
  }
  if ((*existing)["spec"] == objects.jobset["spec"]) return OkStatus();
  Json updated = *existing;
  updated["spec"] = objects.jobset["spec"];
  return ctx.options.store->Update(std::move(updated)).status();
}

// Complete and Failed from the JobSet, reason and message as they are;
// jobsStatus from its replicatedJobsStatus.
Status MirrorJobSet(TrainJobContext& ctx, const Json& jobset) {
  ctx.status.jobs_status.clear();
  for (const Json& s : api::ArrayRefAt(jobset, {"status", "replicatedJobsStatus"})) {
    api::ReplicatedJobStatus status;
    FieldErrors ignored;
    api::Decode(s, FieldPath(), status, ignored);
    ctx.status.jobs_status.push_back(std::move(status));
  }
  for (const Json& c : api::ArrayRefAt(jobset, {"status", "conditions"})) {
    std::string type = api::StringAt(c, "type");
    if (api::StringAt(c, "status") != "True" || (type != "Completed" && type != "Failed")) continue;
    RETURN_IF_ERROR(SetCondition(ctx, type == "Completed" ? "Complete" : "Failed", "True",
                                 api::StringAt(c, "reason"), api::StringAt(c, "message")));
  }
  return OkStatus();
}

Result<BuildOptions> OptionsFor(TrainJobContext& ctx, const RuntimeSource& runtime) {
  TrainJobSource job{.meta = ctx.meta, .spec = ctx.spec};
  if (ctx.options.replicas.cluster) {
    const ReplicaOptions::Cluster& cluster = *ctx.options.replicas.cluster;
    return BuildOptions{.rendezvous_host = ClusterRendezvousHost(job, runtime),
                        .status_server_url = cluster.trainer_status_url,
                        .status_server_ca = cluster.trainer_status_ca};
  }
  ASSIGN_OR_RETURN(int port, RendezvousPort(ctx));
  return BuildOptions{.rendezvous_host = ctx.options.replicas.host,
                      .rendezvous_port = port,
                      .mpi_rsh_agent = "/etc/mpi/kubexec.sh",
                      .mpi_exec_command = ctx.options.replicas.exec_command,
                      .initializer_program = ctx.options.trainyard_program,
                      .mark_trainer_step = true};
}

// What the runtime cannot do for the job, each said as a line.
std::vector<std::string> Problems(TrainJobContext& ctx, const RuntimeSource& runtime) {
  std::vector<std::string> lines;
  for (const FieldError& e : CheckAgainstRuntime({.meta = ctx.meta, .spec = ctx.spec}, runtime)) {
    lines.push_back(e.ToString());
  }
  return lines;
}

// What the JobSet built for the job breaks (a name too long, too many pods).
std::vector<std::string> Problems(const TrainJobObjects& built) {
  std::vector<std::string> lines;
  for (const FieldError& e : api::DecodeAndValidate(built.jobset).result.errors) {
    lines.push_back("the JobSet it makes: " + e.ToString());
  }
  return lines;
}

// Fails the job for good: what its runtime makes of it cannot run.
Status FailForProblems(TrainJobContext& ctx, const std::vector<std::string>& lines) {
  RETURN_IF_ERROR(DeleteJobSet(ctx));
  return SetCondition(
      ctx, "Failed", "True", "TrainJobResourcesCreationFailed",
      "TrainJob resources reconciliation failed: " + fmt::format("{}", fmt::join(lines, "; ")));
}

// The job's runtime, read and checked, and what it makes written.
Result<ReconcileResult> Build(TrainJobContext& ctx, const std::optional<Json>& existing) {
  ASSIGN_OR_RETURN(std::optional<RuntimeSource> runtime,
                   ReadRuntime(*ctx.options.store, ctx.spec.runtime_ref, ctx.meta.namespace_));
  const api::RuntimeRef& ref = ctx.spec.runtime_ref;
  if (!runtime) {
    RETURN_IF_ERROR(SetCondition(
        ctx, "Failed", "True", std::string(api::kRuntimeNotSupportedReason),
        fmt::format("unsupported runtime: {} {} was not found: create it, or name one that exists",
                    ref.kind, ref.name)));
    return ReconcileResult{kRuntimeRecheck};
  }
  // The runtime came: the job goes on, as upstream clears the condition.
  std::erase_if(ctx.status.conditions,
                [](const api::MetaCondition& c) { return c.type == "Failed"; });
  if (std::vector<std::string> problems = Problems(ctx, *runtime); !problems.empty()) {
    RETURN_IF_ERROR(FailForProblems(ctx, problems));
    return ReconcileResult{};
  }
  ASSIGN_OR_RETURN(BuildOptions options, OptionsFor(ctx, *runtime));
  TrainJobObjects built =
      BuildTrainJobObjects({.meta = ctx.meta, .spec = ctx.spec}, *runtime, options);
  if (ctx.options.replicas.cluster) {
    built.pod_group =
        BuildTrainJobPodGroup({.meta = ctx.meta, .spec = ctx.spec}, runtime->spec, built.jobset);
  }
  std::vector<std::string> problems = Problems(built);
  for (std::string& line : LocalInitializerProblems(built.jobset, options.initializer_program)) {
    problems.push_back(std::move(line));
  }
  if (!problems.empty()) {
    RETURN_IF_ERROR(FailForProblems(ctx, problems));
    return ReconcileResult{};
  }
  for (const std::string& field : existing ? std::vector<std::string>() : ctx.unknown_fields) {
    // Said, not failed for: an event that cannot be written now is no
    // reason to hold the job back.
    (void)ctx.Events().Event("Warning", "FieldNotActedOn",
                             field + ": trainyard does not act on it");
  }
  if (!existing && !ctx.options.replicas.cluster && runtime->spec.ml_policy &&
      runtime->spec.ml_policy->mpi) {
    RETURN_IF_ERROR(
        ctx.Events().Event("Normal", "MpiThroughTrainyardExec",
                           "on one machine mpirun reaches the nodes through trainyard exec "
                           "(/etc/mpi/kubexec.sh), not ssh: the nodes' sshd is not run"));
  }
  if (ctx.options.replicas.cluster && runtime->spec.ml_policy && runtime->spec.ml_policy->mpi) {
    RETURN_IF_ERROR(EnsureSshAuthSecret(ctx));
  }
  RETURN_IF_ERROR(ApplyObjects(ctx, built, existing));
  return ReconcileResult{};
}

// What admission would have refused in the job as stored. On a cluster no
// webhook of trainyard's judges TrainJobs, and the CRD's schema checks
// less than upstream's rules: such a job fails saying which field, rather
// than being retried for ever. Fields trainyard does not know (a newer
// upstream CRD's) are not failed for: they go to `unknown_fields`, said
// once the JobSet is first made.
std::vector<std::string> InvalidFields(TrainJobContext& ctx) {
  std::vector<std::string> lines;
  for (const FieldError& e : api::DecodeAndValidate(ctx.stored).result.errors) {
    (e.type == FieldErrorType::kUnknownField ? ctx.unknown_fields : lines).push_back(e.ToString());
  }
  return lines;
}

Result<ReconcileResult> Step(TrainJobContext& ctx) {
  if (IsFinished(ctx)) return ReconcileResult{};
  if (std::vector<std::string> invalid = InvalidFields(ctx); !invalid.empty()) {
    RETURN_IF_ERROR(FailForProblems(ctx, invalid));
    return ReconcileResult{};
  }
  RETURN_IF_ERROR(ApplySuspendCondition(ctx));
  ASSIGN_OR_RETURN(JobSetState jobset, ReadJobSet(ctx));
  if (jobset.foreign) {
    RETURN_IF_ERROR(
        ctx.Events().Event("Warning", "TrainJobResourcesCreationFailed",
                           fmt::format("JobSet {} exists and is not this TrainJob's: the job "
                                       "waits for the name",
                                       ctx.meta.name)));
    return ReconcileResult{kRuntimeRecheck};
  }
  // The JobSet's end first: one that ended in time is not past the deadline.
  if (jobset.ours) RETURN_IF_ERROR(MirrorJobSet(ctx, *jobset.ours));
  if (IsFinished(ctx)) return ReconcileResult{};
  std::optional<Duration> left = DeadlineLeft(ctx);
  if (left && *left <= Duration::zero()) {
    RETURN_IF_ERROR(DeleteJobSet(ctx));
    RETURN_IF_ERROR(SetCondition(ctx, "Failed", "True", "DeadlineExceeded",
                                 "TrainJob exceeded its active deadline"));
    return ReconcileResult{};
  }
  ReconcileResult result;
  // A running JobSet is the job's: its runtime is not read again, so a
  // runtime edited or deleted meanwhile changes nothing under it.
  bool running = jobset.ours && !ctx.spec.suspend.value_or(false) && !Suspended(*jobset.ours);
  if (!running) {
    ASSIGN_OR_RETURN(result, Build(ctx, jobset.ours));
  }
  if (left && (!result.requeue_after || *left < *result.requeue_after)) {
    result.requeue_after = *left;
  }
  return result;
}

}  // namespace

Result<ReconcileResult> TrainJobReconciler::Reconcile(const store::ObjectKey& key) {
  ASSIGN_OR_RETURN(std::optional<Loaded<api::TrainJob>> loaded,
                   LoadObject<api::TrainJob>(*options_.store, key));
  if (!loaded) {
    // Deleted while it ran: the annotation that named its port went too.
    if (options_.replicas.ports != nullptr) options_.replicas.ports->ReleaseAll(key.ToString());
    RETURN_IF_ERROR(DeleteEventsOf(*options_.store, key));
    return ReconcileResult{};
  }
  // MultiKueue's, say: another controller runs it.
  api::TrainJob& job = loaded->object;
  if (job.spec.managed_by.value_or(std::string(api::kTrainJobController)) !=
      api::kTrainJobController) {
    return ReconcileResult{};
  }
  TimePoint now = options_.clock->Now();
  TrainJobContext ctx{.options = options_,
                      .stored = std::move(loaded->stored),
                      .meta = std::move(job.metadata),
                      .spec = std::move(job.spec),
                      .status = std::move(job.status),
                      .now = now,
                      .now_text = FormatRfc3339(now)};
  bool was_finished = IsFinished(ctx);
  ASSIGN_OR_RETURN(ReconcileResult result, Step(ctx));
  RETURN_IF_ERROR(WriteStatusIfChanged(*options_.store, ctx.stored, api::Encode(ctx.status)));
  // Given back once, when the finish is stored: by then another job may hold it.
  if (!was_finished && IsFinished(ctx)) ReleasePort(ctx);
  return result;
}

}  // namespace trainyard::controller
