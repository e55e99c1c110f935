#include "controller/deployment_reconciler.h"

#include <fmt/format.h>

#include <algorithm>

#include "api/deployment.h"
#include "api/names.h"
#include "api/pod_object.h"
#include "api/well_known.h"
#include "controller/events.h"
#include "controller/owned.h"
#include "controller/reconcile_steps.h"

namespace trainyard::controller {
namespace {

struct DeploymentContext {
  const DeploymentReconcilerOptions& options;
  api::Json stored;
  api::CoreObject object;
  api::DeploymentFields fields;
  std::string hash;                    // the current template's
  std::vector<api::Pod> current, old;  // live pods of this template, of others
  EventRecorder Events() const {
    return {*options.store,
            *options.clock,
            {.api_version = std::string(api::kAppsGroupVersion),
             .kind = "Deployment",
             .meta = &object.metadata}};
  }
  int32_t replicas() const { return fields.spec.replicas.value_or(1); }
};

bool IsReady(const api::Pod& pod) {
  const auto& statuses = pod.status.container_statuses;
  return pod.status.phase == "Running" && !statuses.empty() &&
         std::all_of(statuses.begin(), statuses.end(), [](const auto& c) { return c.ready; });
}

bool IsTerminating(const api::Pod& pod) { return !pod.metadata.deletion_timestamp.empty(); }

api::Pod BuildPod(const DeploymentContext& ctx, std::mt19937& random) {
  const api::ObjectMeta& meta = ctx.object.metadata;
  const api::PodTemplateSpec& tmpl = ctx.fields.spec.template_;
  api::Pod pod;
  pod.metadata.namespace_ = meta.namespace_;
  pod.metadata.name = fmt::format("{}-{}-{}", meta.name, ctx.hash, api::RandomNameSuffix(random));
  pod.metadata.labels = tmpl.metadata.labels;
  pod.metadata.labels[std::string(api::kPodTemplateHashLabel)] = ctx.hash;
  pod.metadata.annotations = tmpl.metadata.annotations;
  api::OwnerReference owner;
  owner.api_version = std::string(api::kAppsGroupVersion);
  owner.kind = "Deployment";
  owner.name = meta.name;
  owner.uid = meta.uid;
  owner.controller = true;
  owner.block_owner_deletion = true;
  pod.metadata.owner_references.push_back(owner);
  pod.spec = tmpl.spec;
  return pod;
}

Status CreatePod(DeploymentContext& ctx, api::Pod pod) {
  // No job's MLflow run or output folder: a mark copied from the template
  // would hand it another's.
  pod.metadata.annotations.erase(std::string(api::kTrackedOwnerAnnotation));
  RETURN_IF_ERROR(ctx.options.store->Create(api::EncodePod(pod)).status());
  return ctx.Events().Event("Normal", "SuccessfulCreate",
                            fmt::format("Created pod: {}", pod.metadata.name));
}

Status DeletePod(DeploymentContext& ctx, const api::Pod& pod) {
  RETURN_IF_ERROR(
      DeleteIfPresent(*ctx.options.store, {"Pod", pod.metadata.namespace_, pod.metadata.name}));
  return ctx.Events().Event("Normal", "SuccessfulDelete",
                            fmt::format("Deleted pod: {}", pod.metadata.name));
}

// Sorts the pods: finished ones go (the node agent restarts containers in
// place; a pod that ended anyway is replaced, as a ReplicaSet replaces
// it), live ones are this template's or an older one's. Terminating pods
// count as old while they stop, so that Recreate waits for them.
Status SortPods(DeploymentContext& ctx, std::vector<api::Pod> pods, bool& old_terminating) {
  old_terminating = false;
  for (api::Pod& pod : pods) {
    if (IsTerminating(pod)) {
      old_terminating = old_terminating ||
                        pod.metadata.labels[std::string(api::kPodTemplateHashLabel)] != ctx.hash;
      continue;
    }
    if (api::HasFinished(pod)) {
      RETURN_IF_ERROR(DeletePod(ctx, pod));
      continue;
    }
    bool current = pod.metadata.labels[std::string(api::kPodTemplateHashLabel)] == ctx.hash;
    (current ? ctx.current : ctx.old).push_back(std::move(pod));
  }
  return OkStatus();
}

// Scales this template's pods to `replicas`: the not-ready and newest go
// first when there are too many.
Status ScaleCurrent(DeploymentContext& ctx, std::mt19937& random) {
  int32_t wanted = ctx.replicas();
  std::stable_sort(ctx.current.begin(), ctx.current.end(),
                   [](const api::Pod& a, const api::Pod& b) {
                     if (IsReady(a) != IsReady(b)) return IsReady(a);
                     return a.metadata.creation_timestamp < b.metadata.creation_timestamp;
                   });
  while (static_cast<int32_t>(ctx.current.size()) > wanted) {
    RETURN_IF_ERROR(DeletePod(ctx, ctx.current.back()));
    ctx.current.pop_back();
  }
  while (static_cast<int32_t>(ctx.current.size()) < wanted) {
    api::Pod pod = BuildPod(ctx, random);
    RETURN_IF_ERROR(CreatePod(ctx, pod));
    ctx.current.push_back(std::move(pod));
  }
  return OkStatus();
}

// Paused: no rollout, but scaling goes on, as Kubernetes scales a paused
// Deployment's ReplicaSets. Pods are made only of the current template
// while no older one runs; with older ones, extras go, older first.
Status ScalePaused(DeploymentContext& ctx, std::mt19937& random) {
  if (ctx.old.empty()) return ScaleCurrent(ctx, random);
  while (static_cast<int32_t>(ctx.old.size() + ctx.current.size()) > ctx.replicas()) {
    std::vector<api::Pod>& from = ctx.old.empty() ? ctx.current : ctx.old;
    RETURN_IF_ERROR(DeletePod(ctx, from.back()));
    from.pop_back();
  }
  return OkStatus();
}

Status Rollout(DeploymentContext& ctx, bool old_terminating, std::mt19937& random) {
  if (ctx.fields.spec.paused.value_or(false)) return ScalePaused(ctx, random);
  bool recreate = api::StringAt(ctx.fields.spec.strategy, "type") == "Recreate";
  if (recreate && (!ctx.old.empty() || old_terminating)) {
    for (const api::Pod& pod : ctx.old) RETURN_IF_ERROR(DeletePod(ctx, pod));
    ctx.old.clear();
    return OkStatus();  // the new ones once the old are gone
  }
  RETURN_IF_ERROR(ScaleCurrent(ctx, random));
  int32_t ready =
      static_cast<int32_t>(std::count_if(ctx.current.begin(), ctx.current.end(), IsReady));
  if (ready < ctx.replicas()) return OkStatus();
  for (const api::Pod& pod : ctx.old) RETURN_IF_ERROR(DeletePod(ctx, pod));
  ctx.old.clear();
  return OkStatus();
}

// A condition with Kubernetes' times: lastTransitionTime kept while its
// status stays, lastUpdateTime while its reason does too and `progressed`
// is false (a status rewritten only on change).
api::Json Condition(const api::Json& before, const std::string& type, const std::string& status,
                    const std::string& reason, const std::string& message, const std::string& now,
                    bool progressed = false) {
  std::string transition = now, updated = now;
  for (const api::Json& c : api::ArrayRefAt(before, {"conditions"})) {
    if (api::StringAt(c, "type") == type && api::StringAt(c, "status") == status) {
      transition = api::StringAt(c, "lastTransitionTime", now);
      if (api::StringAt(c, "reason") == reason && !progressed) {
        updated = api::StringAt(c, "lastUpdateTime", now);
      }
    }
  }
  return {{"type", type},
          {"status", status},
          {"lastUpdateTime", updated},
          {"lastTransitionTime", transition},
          {"reason", reason},
          {"message", message}};
}

// Progressing, as Kubernetes' deployment controller keeps it: True while
// pods of the new template are made ready (its lastUpdateTime moved by
// each step), False ProgressDeadlineExceeded once no step was made for
// progressDeadlineSeconds; `recheck` is when that would be.
api::Json Progressing(const DeploymentContext& ctx, const api::Json& status, TimePoint now,
                      std::optional<Duration>& recheck) {
  const api::Json& before = ctx.fields.status;
  std::string now_text = FormatRfc3339(now);
  std::string set = fmt::format("{}-{}", ctx.object.metadata.name, ctx.hash);
  if (ctx.fields.spec.paused.value_or(false)) {
    return Condition(before, "Progressing", "Unknown", "DeploymentPaused", "Deployment is paused",
                     now_text);
  }
  int64_t wanted = ctx.replicas();
  if (ctx.old.empty() && api::IntAt(status, {"updatedReplicas"}) == wanted &&
      api::IntAt(status, {"availableReplicas"}) >= wanted) {
    return Condition(before, "Progressing", "True", "NewReplicaSetAvailable",
                     fmt::format("ReplicaSet \"{}\" has successfully progressed.", set), now_text);
  }
  bool progressed = false;
  for (const char* count : {"updatedReplicas", "readyReplicas", "availableReplicas"}) {
    progressed = progressed || api::IntAt(before, {count}) != api::IntAt(status, {count});
  }
  api::Json going =
      Condition(before, "Progressing", "True", "ReplicaSetUpdated",
                fmt::format("ReplicaSet \"{}\" is progressing.", set), now_text, progressed);
  Duration deadline = std::chrono::seconds(ctx.fields.spec.progress_deadline_seconds.value_or(600));
  std::optional<TimePoint> last = ParseRfc3339(api::StringAt(going, "lastUpdateTime"));
  if (!last || now < *last + deadline) {
    recheck = last ? *last + deadline - now : deadline;
    return going;
  }
  return Condition(before, "Progressing", "False", "ProgressDeadlineExceeded",
                   fmt::format("ReplicaSet \"{}\" has timed out progressing.", set), now_text);
}

api::Json StatusOf(const DeploymentContext& ctx, TimePoint now_point,
                   std::optional<Duration>& recheck) {
  std::string now = FormatRfc3339(now_point);
  const api::Json& before = ctx.fields.status;
  int32_t replicas = ctx.replicas();
  auto ready_in = [](const std::vector<api::Pod>& pods) {
    return static_cast<int32_t>(std::count_if(pods.begin(), pods.end(), IsReady));
  };
  int32_t ready = ready_in(ctx.current) + ready_in(ctx.old);
  int32_t updated = static_cast<int32_t>(ctx.current.size());
  api::Json status = {{"observedGeneration", ctx.object.metadata.generation.value_or(1)},
                      {"replicas", updated + static_cast<int32_t>(ctx.old.size())},
                      {"updatedReplicas", updated},
                      {"readyReplicas", ready},
                      {"availableReplicas", ready}};
  if (replicas > ready) status["unavailableReplicas"] = replicas - ready;
  // Kubernetes' default maxUnavailable: a quarter of the replicas, rounded down.
  bool available = ready >= replicas - replicas / 4;
  api::Json conditions = api::Json::array();
  conditions.push_back(available
                           ? Condition(before, "Available", "True", "MinimumReplicasAvailable",
                                       "Deployment has minimum availability.", now)
                           : Condition(before, "Available", "False", "MinimumReplicasUnavailable",
                                       "Deployment does not have minimum availability.", now));
  conditions.push_back(Progressing(ctx, status, now_point, recheck));
  status["conditions"] = std::move(conditions);
  return status;
}

}  // namespace

std::string PodTemplateHash(const api::Json& pod_template) {
  uint32_t hash = 2166136261u;  // FNV-1a, as Kubernetes hashes templates
  for (unsigned char c : pod_template.dump()) hash = (hash ^ c) * 16777619u;
  return api::SafeEncode(std::to_string(hash));
}

Result<ReconcileResult> DeploymentReconciler::Reconcile(const store::ObjectKey& key) {
  ASSIGN_OR_RETURN(std::optional<Loaded<api::CoreObject>> loaded,
                   LoadObject<api::CoreObject>(*options_.store, key));
  if (!loaded) {
    RETURN_IF_ERROR(DeleteEventsOf(*options_.store, key));
    return ReconcileResult{};
  }
  DeploymentContext ctx{.options = options_,
                        .stored = std::move(loaded->stored),
                        .object = std::move(loaded->object)};
  if (!ctx.object.metadata.deletion_timestamp.empty()) return ReconcileResult{};
  ctx.fields = api::DeploymentFieldsOf(ctx.object);
  ctx.hash = PodTemplateHash(api::Encode(ctx.fields.spec.template_));
  ASSIGN_OR_RETURN(std::vector<api::Pod> pods,
                   ControlledPods(*options_.store, ctx.object.metadata.uid));
  bool old_terminating = false;
  RETURN_IF_ERROR(SortPods(ctx, std::move(pods), old_terminating));
  RETURN_IF_ERROR(Rollout(ctx, old_terminating, random_));
  ReconcileResult result;
  api::Json status = StatusOf(ctx, options_.clock->Now(), result.requeue_after);
  RETURN_IF_ERROR(WriteStatusIfChanged(*options_.store, ctx.stored, std::move(status)));
  return result;
}

}  // namespace trainyard::controller
