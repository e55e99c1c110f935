#include "controller/job_reconciler.h"

#include <fmt/format.h>

#include <ctime>
#include <map>

#include "api/defaults.h"
#include "api/json.h"
#include "api/object.h"
#include "api/pod_object.h"
#include "api/validation.h"
#include "common/strings.h"
#include "controller/conditions.h"
#include "controller/events.h"
#include "controller/mpi_config.h"
#include "controller/mpi_launcher.h"
#include "controller/owned.h"
#include "controller/pod_groups.h"
#include "controller/pod_state.h"
#include "controller/reconcile_steps.h"
#include "controller/replica_pod.h"
#include "controller/replica_services.h"
#include "controller/tracked_owner.h"
#include "controller/ttl.h"
#include "frameworks/framework.h"

namespace trainyard::controller {
namespace {

using frameworks::ReplicaPhase;
using frameworks::ReplicaRef;

// Everything one Reconcile works on.
struct Context {
  const JobReconcilerOptions& options;
  api::Json stored;      // the job as stored
  api::TrainingJob job;  // decoded and defaulted
  std::map<ReplicaRef, api::Pod> pods;
  std::vector<api::Pod> strays;  // pods of the job that no replica owns
  TimePoint now;
  std::string now_text;

  const std::string Kind() const { return std::string(job.info().name); }
  api::JobStatus& status() { return job.status; }
  EventRecorder Events() const {
    return {*options.store,
            *options.clock,
            {.api_version = std::string(api::kKubeflowGroupVersion),
             .kind = Kind(),
             .meta = &job.metadata}};
  }
};

store::ObjectKey PodKey(const api::Pod& pod) {
  return {"Pod", pod.metadata.namespace_, pod.metadata.name};
}

Status LoadPods(Context& ctx) {
  ASSIGN_OR_RETURN(std::vector<api::Pod> owned,
                   ControlledPods(*ctx.options.store, ctx.job.metadata.uid));
  for (api::Pod& pod : owned) {
    std::optional<ReplicaRef> replica = ReplicaOf(ctx.job, pod);
    bool in_range = replica && replica->index < ctx.job.Replicas(replica->type);
    if (in_range) {
      ctx.pods.emplace(*replica, std::move(pod));
    } else {
      ctx.strays.push_back(std::move(pod));
    }
  }
  return OkStatus();
}

Status DeletePod(Context& ctx, const api::Pod& pod) {
  RETURN_IF_ERROR(DeleteIfPresent(*ctx.options.store, PodKey(pod)));
  return ctx.Events().Event("Normal", "SuccessfulDeletePod",
                            fmt::format("Deleted pod: {}", pod.metadata.name));
}

bool Gang(const Context& ctx) {
  return ctx.options.replicas.cluster && !ctx.options.replicas.cluster->gang_scheduler.empty();
}

// A replica's pod, and on Kubernetes its Service.
Status DeleteReplica(Context& ctx, const api::Pod& pod) {
  RETURN_IF_ERROR(DeletePod(ctx, pod));
  if (!ctx.options.replicas.cluster) return OkStatus();
  return DeleteServiceOf(*ctx.options.store, ctx.job, pod.metadata.name,
                         [&](const std::string& reason, const std::string& message) {
                           return ctx.Events().Event("Normal", reason, message);
                         });
}

// On a cluster without a gang scheduler nothing reads schedulingPolicy (on
// one machine trainyard's own scheduler does), and a scheduler-plugins
// PodGroup has no queue or priority class: said once, when the job is
// first seen, rather than dropped in silence.
Status WarnUnusedSchedulingPolicy(Context& ctx) {
  if (!ctx.options.replicas.cluster || !ctx.job.spec.run_policy->scheduling_policy)
    return OkStatus();
  const std::string& scheduler = ctx.options.replicas.cluster->gang_scheduler;
  if (scheduler.empty()) {
    return ctx.Events().Event(
        "Warning", "SchedulingPolicyIgnored",
        "spec.runPolicy.schedulingPolicy is not acted on: the operator runs without "
        "--gang-scheduler-name, so the default scheduler places each pod alone");
  }
  const api::SchedulingPolicy& policy = *ctx.job.spec.run_policy->scheduling_policy;
  std::vector<std::string> unread;
  if (scheduler != kVolcano && !policy.queue.empty()) unread.push_back("queue");
  if (scheduler != kVolcano && !policy.priority_class.empty()) unread.push_back("priorityClass");
  if (scheduler == kVolcano && policy.schedule_timeout_seconds) {
    unread.push_back("scheduleTimeoutSeconds");
  }
  std::string why = "the PodGroups of --gang-scheduler-name " + scheduler + " have no such field";
  // trainyard's scheduler on a cluster evicts no gang that waits too long
  // (it deletes no pod): its group's timeout is not acted on.
  if (scheduler == "trainyard" && policy.schedule_timeout_seconds) {
    unread.push_back("scheduleTimeoutSeconds");
    why =
        "trainyard's scheduler on a cluster has no queues or priority classes of its own and "
        "evicts no gang that waits";
  }
  if (unread.empty()) return OkStatus();
  return ctx.Events().Event("Warning", "SchedulingPolicyIgnored",
                            fmt::format("spec.runPolicy.schedulingPolicy.{} is not acted on: {}",
                                        fmt::join(unread, ", "), why));
}

// Ends a replica that still runs but keeps its pod, state and logs, as
// cleanPodPolicy None asks: its activeDeadlineSeconds is set to what it
// has run, so its kubelet (or trainyard's node agent) stops it and marks
// it Failed, DeadlineExceeded. Upstream leaves such pods running (a
// crash-looping replica restarts forever); a pod that never started has
// nothing to keep and is deleted. Returns whether the pod is kept.
Result<bool> EndInPlace(Context& ctx, api::Pod& pod) {
  std::optional<TimePoint> start = ParseRfc3339(pod.status.start_time);
  if (!start) {
    RETURN_IF_ERROR(DeleteReplica(ctx, pod));
    return false;
  }
  if (pod.spec.extra.is_object() && pod.spec.extra.contains("activeDeadlineSeconds")) {
    const api::Json& set = pod.spec.extra["activeDeadlineSeconds"];
    if (set.is_number_integer() && *start + std::chrono::seconds(set.get<int64_t>()) <= ctx.now) {
      return true;  // ending already
    }
  }
  auto ran = std::chrono::duration_cast<std::chrono::seconds>(ctx.now - *start).count();
  pod.spec.extra["activeDeadlineSeconds"] = std::max<int64_t>(1, ran);
  Result<api::Json> updated = ctx.options.store->Update(api::EncodePod(pod));
  if (updated.ok()) return true;
  if (updated.status().code() == StatusCode::kAborted) return updated.status();  // raced: again
  // An API server that refuses the change (a pod's spec is mostly
  // immutable there) must not keep the job from finishing: nothing of it
  // may keep running, so the pod goes, as before.
  RETURN_IF_ERROR(DeleteReplica(ctx, pod));
  return false;
}

// Nothing of a finished job keeps running; the cleanPodPolicy decides which
// pods stay for their state and logs (None: all, stopped where they run).
Status CleanUp(Context& ctx) {
  std::string policy = api::EffectiveCleanPodPolicy(ctx.job);
  for (auto it = ctx.pods.begin(); it != ctx.pods.end();) {
    bool kept = true;
    if (policy == "None" && !api::HasFinished(it->second)) {
      ASSIGN_OR_RETURN(kept, EndInPlace(ctx, it->second));
    } else if (policy == "All" || !api::HasFinished(it->second)) {
      RETURN_IF_ERROR(DeleteReplica(ctx, it->second));
      kept = false;
    }
    it = kept ? std::next(it) : ctx.pods.erase(it);
  }
  for (auto& [type, rs] : ctx.status().replica_statuses) rs.active = std::nullopt;
  if (Gang(ctx))
    RETURN_IF_ERROR(
        DeletePodGroup(*ctx.options.store, ctx.job, ctx.options.replicas.cluster->gang_scheduler));
  return OkStatus();
}

// {"Worker-0": 31000, ...} from the job's ports annotation; {} if none.
api::Json PortsOf(const api::TrainingJob& job) {
  auto it = job.metadata.annotations.find(std::string(api::kPortsAnnotation));
  if (it == job.metadata.annotations.end()) return api::Json::object();
  api::Json ports = api::Json::parse(it->second, nullptr, /*allow_exceptions=*/false);
  return ports.is_object() ? ports : api::Json::object();
}

// Whole GPUs a replica's first container asks for (extended resources
// are requested as limits).
int GpusOf(const api::ReplicaSpec& spec) {
  if (spec.template_.spec.containers.empty()) return 0;
  const api::ResourceRequirements& r = spec.template_.spec.containers[0].resources;
  for (const api::ResourceList* list : {&r.limits, &r.requests}) {
    auto it = list->find("nvidia.com/gpu");
    if (it != list->end()) return static_cast<int>(it->second.Value());
  }
  return 0;
}

// The framework's port in `type`'s template, else the kind's default.
int TemplatePort(const api::TrainingJob& job, const std::string& type) {
  if (const api::Container* c = frameworks::DefaultContainer(job, type); c != nullptr) {
    for (const api::ContainerPort& p : c->ports) {
      if (p.name == job.info().port_name && p.container_port) return *p.container_port;
    }
  }
  return job.info().port;
}

// The ports each replica listens on, kept on the job so that a re-created
// replica gets its old port back and every other replica's env stays true.
// On Kubernetes every replica has an address of its own: its template's
// port serves.
Result<frameworks::Placement> PlacementOf(Context& ctx) {
  frameworks::Placement placement;
  placement.host = ctx.options.replicas.host;
  if (ctx.job.info().mpi_launcher) {
    placement.mpi_hostfile = std::string(kMpiConfigDir) + "/hostfile";
    placement.mpi_rsh_agent = std::string(kMpiConfigDir) + "/kubexec.sh";
  }
  if (ctx.options.replicas.cluster) {
    placement.service_dns = true;
    placement.cluster_domain = ctx.options.replicas.cluster->domain;
    for (const ReplicaRef& r : frameworks::AllReplicas(ctx.job)) {
      placement.ports[r] = TemplatePort(ctx.job, r.type);
      placement.gpus[r] = GpusOf(ctx.job.spec.replica_specs.at(r.type));
    }
    return placement;
  }
  api::Json ports = PortsOf(ctx.job);
  auto& annotations = ctx.job.metadata.annotations;
  bool allocated = false;
  for (const ReplicaRef& r : frameworks::AllReplicas(ctx.job)) {
    std::string key = fmt::format("{}-{}", r.type, r.index);
    if (!ports.contains(key) || !ports[key].is_number_integer()) {
      ASSIGN_OR_RETURN(int port, ctx.options.replicas.ports->Allocate(store::ObjectKey{
                                     std::string(ctx.job.info().name), ctx.job.metadata.namespace_,
                                     ctx.job.metadata.name}
                                                                          .ToString()));
      ports[key] = port;
      allocated = true;
    }
    placement.ports[r] = ports[key].get<int>();
    placement.gpus[r] = GpusOf(ctx.job.spec.replica_specs.at(r.type));
  }
  if (allocated) {
    ctx.stored["metadata"]["annotations"][std::string(api::kPortsAnnotation)] = ports.dump();
    ASSIGN_OR_RETURN(ctx.stored, ctx.options.store->Update(ctx.stored));
    annotations[std::string(api::kPortsAnnotation)] = ports.dump();
    ctx.job.metadata.resource_version = api::StringAt(ctx.stored, {"metadata", "resourceVersion"});
  }
  return placement;
}

Status CreatePod(Context& ctx, const ReplicaRef& replica, const frameworks::Placement& placement,
                 int32_t recreations) {
  ASSIGN_OR_RETURN(api::Pod pod, BuildReplicaPod(ctx.job, replica, placement));
  if (ctx.options.replicas.cluster && ctx.job.info().mpi_launcher && replica.type == "Launcher") {
    PrepareLauncherPod(ctx.job, ctx.options.replicas.cluster->mpi_kubectl_delivery_image, pod.spec);
  }
  if (Gang(ctx)) {
    if (std::optional<std::string> warning =
            DecorateGangPod(ctx.job, replica, pod, ctx.options.replicas.cluster->gang_scheduler)) {
      RETURN_IF_ERROR(ctx.Events().Event("Warning", "SetPodTemplateSchedulerName", *warning));
    }
  }
  const auto& cluster = ctx.options.replicas.cluster;
  if (cluster && ctx.job.info().workers_wait_for_master && replica.type == "Worker" &&
      ctx.job.FindReplica("Master") != nullptr) {
    pod.spec.init_containers.push_back(PyTorchInitContainer(ctx.job, cluster->pytorch_init_image,
                                                            cluster->pytorch_init_max_tries));
  }
  if (recreations > 0) {
    pod.metadata.annotations[std::string(api::kRecreationsAnnotation)] =
        std::to_string(recreations);
  }
  // Tracking (the job's MLflow run and output folder) is this machine's.
  if (!cluster) MarkTrackedOwner(*ctx.options.store, pod);
  Result<api::Json> created = ctx.options.store->Create(api::EncodePod(pod));
  if (!created.ok()) return created.status();
  RETURN_IF_ERROR(ctx.Events().Event("Normal", "SuccessfulCreatePod",
                                     fmt::format("Created pod: {}", pod.metadata.name)));
  // The pod as stored is the one built plus what the store maintains.
  const api::Json& meta = (*created)["metadata"];
  pod.metadata.uid = api::StringAt(meta, "uid");
  pod.metadata.resource_version = api::StringAt(meta, "resourceVersion");
  pod.metadata.creation_timestamp = api::StringAt(meta, "creationTimestamp");
  if (meta.contains("generation") && meta["generation"].is_number_integer()) {
    pod.metadata.generation = meta["generation"].get<int64_t>();
  }
  ctx.pods[replica] = std::move(pod);
  return OkStatus();
}

int32_t Recreations(const api::Pod& pod) {
  auto it = pod.metadata.annotations.find(std::string(api::kRecreationsAnnotation));
  return it == pod.metadata.annotations.end() ? 0 : std::stoi(it->second);
}

store::ObjectKey MpiConfigKey(const api::ObjectMeta& job) {
  return {"ConfigMap", job.namespace_, job.name + "-config"};
}

// An MPIJob's /etc/mpi: created before its pods, kept in step with its
// replica counts.
Status ReconcileMpiConfig(Context& ctx) {
  if (!ctx.job.info().mpi_launcher) return OkStatus();
  if (ctx.options.replicas.cluster)
    RETURN_IF_ERROR(ReconcileLauncherAccess(*ctx.options.store, ctx.job));
  std::vector<std::string> running;
  for (const auto& [replica, pod] : ctx.pods) {
    if (replica.type == "Worker" && pod.status.phase == "Running")
      running.push_back(pod.metadata.name);
  }
  api::Json want = api::EncodeObject(
      ctx.options.replicas.cluster ? MpiClusterConfigMap(ctx.job, std::move(running))
                                   : MpiConfigMap(ctx.job, ctx.options.replicas.exec_command));
  Result<api::Json> have = ctx.options.store->Get(MpiConfigKey(ctx.job.metadata));
  if (have.status().code() == StatusCode::kNotFound)
    return ctx.options.store->Create(want).status();
  if (!have.ok()) return have.status();
  if (api::ObjectAt(*have, "data") == want["data"]) return OkStatus();
  (*have)["data"] = want["data"];
  return ctx.options.store->Update(*have).status();
}

// Whether every MPI worker runs. Upstream's launcher waits for that in its
// kubectl-delivery init container; here the launcher is created only then,
// so that mpirun never reaches for a worker not yet there.
bool WorkersRunning(const Context& ctx) {
  for (int32_t i = 0; i < ctx.job.Replicas("Worker"); ++i) {
    auto it = ctx.pods.find({"Worker", i});
    if (it == ctx.pods.end() || it->second.status.phase != "Running") return false;
  }
  return true;
}

// Creates missing replicas, re-creates replicas whose pods failed where
// their policy restarts them (a retryable code under ExitCode; eviction
// under OnFailure or Always), and removes pods no replica owns (scale
// down).
Status ReconcilePods(Context& ctx) {
  // With a gang scheduler every replica's pod is made at once (a launcher
  // held back would leave the gang short for good); with Volcano, only once
  // it has let the group in.
  bool may_create = true;
  if (Gang(ctx)) {
    ASSIGN_OR_RETURN(may_create, ReconcilePodGroup(*ctx.options.store, ctx.job,
                                                   ctx.options.replicas.cluster->gang_scheduler));
  }
  for (const api::Pod& stray : ctx.strays) RETURN_IF_ERROR(DeletePod(ctx, stray));
  ctx.strays.clear();
  RETURN_IF_ERROR(ReconcileMpiConfig(ctx));
  if (ctx.options.replicas.cluster) {
    RETURN_IF_ERROR(ReconcileServices(
        *ctx.options.store, ctx.job, [&](const std::string& reason, const std::string& message) {
          return ctx.Events().Event(reason.starts_with("Failed") ? "Warning" : "Normal", reason,
                                    message);
        }));
  }
  ASSIGN_OR_RETURN(frameworks::Placement placement, PlacementOf(ctx));
  for (const ReplicaRef& r : frameworks::AllReplicas(ctx.job)) {
    auto it = ctx.pods.find(r);
    if (it == ctx.pods.end()) {
      if (!may_create) continue;
      if (r.type == "Launcher" && !Gang(ctx) && !WorkersRunning(ctx)) continue;
      RETURN_IF_ERROR(CreatePod(ctx, r, placement, 0));
      continue;
    }
    const std::string& policy = ctx.job.spec.replica_specs.at(r.type).restart_policy;
    if (it->second.status.phase == "Failed" && RestartsWhenFailed(it->second, policy)) {
      int32_t recreations = Recreations(it->second) + 1;
      if (policy != "ExitCode") {
        RETURN_IF_ERROR(ctx.Events().Event(
            "Warning", "JobRestarting",
            fmt::format(
                "job {} is restarting because {} replica(s) failed: pod {} ended {}{}",
                ctx.job.metadata.name, r.type, it->second.metadata.name, it->second.status.phase,
                it->second.status.reason.empty() ? "" : " (" + it->second.status.reason + ")")));
      }
      RETURN_IF_ERROR(DeletePod(ctx, it->second));
      ctx.pods.erase(it);
      RETURN_IF_ERROR(CreatePod(ctx, r, placement, recreations));
    }
  }
  return OkStatus();
}

// The job's side of its pods' scheduling: Scheduled False with the
// scheduler's reason while any replica waits for room (Created is all
// upstream would say), True once none waits; and the reason it could never
// fit, when the scheduler says so.
std::optional<std::string> ReflectScheduling(Context& ctx) {
  const api::PodCondition* waiting = nullptr;
  for (const auto& [replica, pod] : ctx.pods) {
    for (const api::PodCondition& c : pod.status.conditions) {
      if (c.type != "PodScheduled" || c.status != "False") continue;
      if (c.reason == api::kExceedsCapacityReason) return c.message;
      waiting = waiting != nullptr ? waiting : &c;
    }
  }
  auto& conditions = ctx.status().conditions;
  if (waiting != nullptr) {
    SetCondition(conditions, "Scheduled", "False", waiting->reason,
                 fmt::format("{} {} is waiting for room: {}", ctx.Kind(), ctx.job.metadata.name,
                             waiting->message),
                 ctx.now_text);
  } else if (const api::JobCondition* c = FindCondition(conditions, "Scheduled");
             c != nullptr && c->status == "False") {
    SetCondition(conditions, "Scheduled", "True", "Scheduled",
                 fmt::format("every replica of {} {} has room", ctx.Kind(), ctx.job.metadata.name),
                 ctx.now_text);
  }
  return std::nullopt;
}

frameworks::ReplicaStates StatesOf(const Context& ctx) {
  frameworks::ReplicaStates states;
  for (const auto& [replica, pod] : ctx.pods) {
    states[replica] = StateOf(pod, ctx.job.spec.replica_specs.at(replica.type).restart_policy);
  }
  return states;
}

// Failures so far: every restart made, plus every one about to be made.
int32_t Failures(const Context& ctx, const frameworks::ReplicaStates& states) {
  int32_t failures = 0;
  for (const auto& [replica, pod] : ctx.pods) failures += RestartsOf(pod);
  for (const auto& [replica, state] : states) {
    if (state.phase == ReplicaPhase::kRestarting) ++failures;
  }
  return failures;
}

void UpdateReplicaStatuses(Context& ctx, const frameworks::ReplicaStates& states) {
  std::map<std::string, api::ReplicaStatus> statuses;
  for (const auto& [type, spec] : ctx.job.spec.replica_specs) statuses[type];
  for (const auto& [replica, state] : states) {
    api::ReplicaStatus& rs = statuses[replica.type];
    auto bump = [](std::optional<int32_t>& n) { n = n.value_or(0) + 1; };
    if (state.phase == ReplicaPhase::kRunning || state.phase == ReplicaPhase::kRestarting) {
      bump(rs.active);
    } else if (state.phase == ReplicaPhase::kSucceeded) {
      bump(rs.succeeded);
    } else if (state.phase == ReplicaPhase::kFailed) {
      bump(rs.failed);
    }
  }
  // The scale subresource's label selector, on the kinds whose CRD has one.
  if (ctx.job.info().scales_by_workers) {
    for (auto& [type, rs] : statuses) {
      rs.selector =
          fmt::format("{}={},{}={}-controller,{}={}", api::kLabelJobName, ctx.job.metadata.name,
                      api::kLabelOperatorName, AsciiLower(ctx.job.info().name),
                      api::kLabelReplicaType, AsciiLower(type));
    }
  }
  ctx.status().replica_statuses = std::move(statuses);
}

// A failed job's message, with the container failure that ended it:
// what a user looks at first.
std::string WithLatestFailure(const Context& ctx, std::string message) {
  std::vector<const api::Pod*> pods;
  for (const auto& [replica, pod] : ctx.pods) pods.push_back(&pod);
  std::string failure = LatestContainerFailure(pods);
  if (failure.empty()) return message;
  bool period = message.ends_with('.');
  if (period) message.pop_back();
  return fmt::format("{} (last failure: {}){}", message, failure, period ? "." : "");
}

void Finish(Context& ctx, const std::string& type, const std::string& message) {
  SetCondition(ctx.status().conditions, type, "True", ctx.Kind() + type, message, ctx.now_text);
  if (ctx.status().completion_time.empty()) ctx.status().completion_time = ctx.now_text;
}

// Deletes the job, with its pods, once its TTL after completion has passed.
Result<TtlStep> ApplyTtl(Context& ctx) {
  return ExpireAfterTtl(ctx.job.spec.run_policy->ttl_seconds_after_finished,
                        ParseRfc3339(ctx.status().completion_time), ctx.now, [&]() -> Status {
                          for (auto& [replica, pod] : ctx.pods)
                            RETURN_IF_ERROR(DeletePod(ctx, pod));
                          return DeleteIfPresent(
                              *ctx.options.store,
                              {ctx.Kind(), ctx.job.metadata.namespace_, ctx.job.metadata.name});
                        });
}

// An event for each condition the job reaches (True, with a reason it did
// not have): how `kubectl describe` tells a job's story.
Status RecordConditions(Context& ctx) {
  for (const api::JobCondition& c : ctx.status().conditions) {
    if (c.status != "True") continue;
    std::optional<StoredCondition> before = StoredConditionOf(ctx.stored, c.type);
    if (before && before->status == "True" && before->reason == c.reason) continue;
    bool bad = c.type == "Failed" || c.type == "Restarting";
    RETURN_IF_ERROR(ctx.Events().Event(bad ? "Warning" : "Normal", c.reason, c.message));
  }
  return OkStatus();
}

Status WriteStatus(Context& ctx) {
  return WriteStatusIfChanged(*ctx.options.store, ctx.stored, api::Encode(ctx.job.status),
                              [&] { return RecordConditions(ctx); });
}

// A finished job: nothing runs, its ports go back; TTL may delete it.
Result<ReconcileResult> ReconcileFinished(Context& ctx) {
  RETURN_IF_ERROR(CleanUp(ctx));
  api::Json ports = PortsOf(ctx.job);  // held: items() does not keep a temporary alive
  for (const auto& [replica, port] : ports.items()) {
    if (port.is_number_integer()) ctx.options.replicas.ports->Release(port.get<int>());
  }
  ASSIGN_OR_RETURN(TtlStep ttl, ApplyTtl(ctx));
  if (!ttl.deleted) RETURN_IF_ERROR(WriteStatus(ctx));
  return ReconcileResult{ttl.look_again};
}

Result<ReconcileResult> ReconcileSuspended(Context& ctx) {
  for (auto& [replica, pod] : ctx.pods) RETURN_IF_ERROR(DeleteReplica(ctx, pod));
  if (Gang(ctx))
    RETURN_IF_ERROR(
        DeletePodGroup(*ctx.options.store, ctx.job, ctx.options.replicas.cluster->gang_scheduler));
  ctx.pods.clear();
  for (auto& [type, rs] : ctx.status().replica_statuses) rs.active = std::nullopt;
  std::string message = fmt::format("{} {} is suspended.", ctx.Kind(), ctx.job.metadata.name);
  if (IsTrue(ctx.status().conditions, "Running")) {
    SetCondition(ctx.status().conditions, "Running", "False", ctx.Kind() + "Suspended", message,
                 ctx.now_text);
  }
  SetCondition(ctx.status().conditions, "Suspended", "True", ctx.Kind() + "Suspended", message,
               ctx.now_text);
  RETURN_IF_ERROR(WriteStatus(ctx));
  return ReconcileResult{};
}

Result<ReconcileResult> ReconcileActive(Context& ctx) {
  const api::RunPolicy& run = *ctx.job.spec.run_policy;
  if (IsTrue(ctx.status().conditions, "Suspended")) {
    std::string message = fmt::format("{} {} is resumed.", ctx.Kind(), ctx.job.metadata.name);
    SetCondition(ctx.status().conditions, "Suspended", "False", ctx.Kind() + "Resumed", message,
                 ctx.now_text);
    // As upstream: a condition gone False records no event of its own.
    RETURN_IF_ERROR(ctx.Events().Event("Normal", ctx.Kind() + "Resumed", message));
    ctx.status().start_time = ctx.now_text;  // the deadline counts from the resume
  }
  if (ctx.status().start_time.empty()) ctx.status().start_time = ctx.now_text;

  frameworks::ReplicaStates states = StatesOf(ctx);
  // A run-policy limit fails the job, whatever its replicas say.
  auto fail = [&](std::string_view why) {
    Finish(ctx, "Failed",
           WithLatestFailure(
               ctx, fmt::format("Job {} has failed because {}", ctx.job.metadata.name, why)));
    UpdateReplicaStatuses(ctx, states);
    return ReconcileFinished(ctx);
  };
  if (run.backoff_limit && Failures(ctx, states) > *run.backoff_limit) {
    return fail("it has reached the specified backoff limit");
  }
  std::optional<Duration> deadline_left;
  if (run.active_deadline_seconds) {
    std::optional<TimePoint> start = ParseRfc3339(ctx.status().start_time);
    TimePoint deadline =
        start.value_or(ctx.now) + std::chrono::seconds(*run.active_deadline_seconds);
    if (ctx.now >= deadline) return fail("it was active longer than specified deadline");
    deadline_left = deadline - ctx.now;
  }

  const frameworks::Framework& framework = frameworks::FrameworkFor(ctx.job.kind);
  // A replica failing with a retryable exit code is made again below, in
  // this same step: the job says it is Restarting, as upstream does.
  frameworks::Verdict before = framework.Evaluate(ctx.job, states);
  RETURN_IF_ERROR(ReconcilePods(ctx));
  states = StatesOf(ctx);
  UpdateReplicaStatuses(ctx, states);
  if (std::optional<std::string> never = ReflectScheduling(ctx)) {
    return fail(fmt::format("it can never fit: {}", *never));
  }
  frameworks::Verdict verdict = framework.Evaluate(ctx.job, states);
  if (before.phase == frameworks::JobPhase::kRestarting &&
      (verdict.phase == frameworks::JobPhase::kCreated ||
       verdict.phase == frameworks::JobPhase::kRunning)) {
    verdict = before;
  }
  switch (verdict.phase) {
    case frameworks::JobPhase::kSucceeded:
    case frameworks::JobPhase::kFailed: {
      bool succeeded = verdict.phase == frameworks::JobPhase::kSucceeded;
      Finish(ctx, succeeded ? "Succeeded" : "Failed",
             succeeded ? verdict.message : WithLatestFailure(ctx, verdict.message));
      return ReconcileFinished(ctx);
    }
    case frameworks::JobPhase::kRunning:
      SetCondition(ctx.status().conditions, "Running", "True", verdict.reason, verdict.message,
                   ctx.now_text);
      break;
    case frameworks::JobPhase::kRestarting:
      SetCondition(ctx.status().conditions, "Restarting", "True", verdict.reason, verdict.message,
                   ctx.now_text);
      break;
    case frameworks::JobPhase::kCreated:
      break;
  }
  RETURN_IF_ERROR(WriteStatus(ctx));
  return ReconcileResult{deadline_left};
}

// The job is gone: so are its events. (Its pods and an MPIJob's config
// name it as owner: the garbage collector takes them, controller/owned.h.)
Status DeleteOrphans(const JobReconcilerOptions& options, const store::ObjectKey& key) {
  return DeleteEventsOf(*options.store, key);
}

// The event a job nothing is made for gets: every error, each with its
// field path.
}  // namespace

std::vector<std::string> JobReconciler::Kinds() const {
  std::vector<std::string> kinds;
  for (const api::KindInfo& info : api::AllKinds()) kinds.emplace_back(info.name);
  return kinds;
}

Result<ReconcileResult> JobReconciler::Reconcile(const store::ObjectKey& key) {
  ASSIGN_OR_RETURN(std::optional<Loaded<api::TrainingJob>> loaded,
                   LoadObject<api::TrainingJob>(*options_.store, key));
  if (!loaded) {
    if (options_.replicas.ports != nullptr) options_.replicas.ports->ReleaseAll(key.ToString());
    RETURN_IF_ERROR(DeleteOrphans(options_, key));
    return ReconcileResult{};
  }
  api::TrainingJob* job = &loaded->object;
  // Being deleted, held by someone's finalizer: left alone, as upstream
  // does, until it goes (then its pods go with it).
  if (!job->metadata.deletion_timestamp.empty()) return ReconcileResult{};
  // MultiKueue (or any other manager) runs this job elsewhere.
  const auto& managed_by = job->spec.run_policy->managed_by;
  if (managed_by && *managed_by != "kubeflow.org/training-operator") return ReconcileResult{};

  // On a cluster whose API server calls no webhook of ours, a job can be
  // stored that `trainyard validate` refuses: it is said, as an event with
  // every error, and nothing is made for it (upstream v1.7's
  // <Kind>FailedValidation). A change to the job is looked at again.
  if (options_.replicas.cluster) {
    api::ValidationResult checked = api::Validate(api::Object(*job));
    if (!checked.ok()) {
      std::string kind(job->info().name);
      RETURN_IF_ERROR(RecordFailedValidation(
          *options_.store, *options_.clock,
          {std::string(api::kKubeflowGroupVersion), kind, &job->metadata}, checked.errors));
      return ReconcileResult{};
    }
  }
  Context ctx{options_, std::move(loaded->stored), std::move(*job), {}, {}, options_.clock->Now(),
              ""};
  ctx.now_text = FormatRfc3339(ctx.now);
  RETURN_IF_ERROR(LoadPods(ctx));
  if (FindCondition(ctx.status().conditions, "Created") == nullptr) {
    SetCondition(ctx.status().conditions, "Created", "True", ctx.Kind() + "Created",
                 fmt::format("{} {} is created.", ctx.Kind(), ctx.job.metadata.name), ctx.now_text);
    RETURN_IF_ERROR(WarnUnusedSchedulingPolicy(ctx));
  }
  if (IsFinished(ctx.status().conditions)) return ReconcileFinished(ctx);
  if (ctx.job.spec.run_policy->suspend.value_or(false)) return ReconcileSuspended(ctx);
  return ReconcileActive(ctx);
}

}  // namespace trainyard::controller
