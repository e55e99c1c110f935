#include "controller/mpi_launcher.h"

#include "api/json.h"
#include "api/reflect.h"
#include "controller/replica_pod.h"
#include "frameworks/framework.h"

namespace trainyard::controller {
namespace {

constexpr const char* kKubectlVolume = "mpi-job-kubectl";

std::string LauncherName(const api::TrainingJob& job) { return job.metadata.name + "-launcher"; }

api::Json Meta(const api::TrainingJob& job) {
  return {{"name", LauncherName(job)},
          {"namespace", job.metadata.namespace_},
          {"labels", {{"app", job.metadata.name}}},
          {"ownerReferences", api::Json::array({api::Encode(OwnerOf(job))})}};
}

// The account the launcher runs as: its template's, else upstream's own.
std::string AccountOf(const api::TrainingJob& job) {
  const api::ReplicaSpec* launcher = job.FindReplica("Launcher");
  std::string named = launcher != nullptr
                          ? api::StringAt(launcher->template_.spec.extra, "serviceAccountName")
                          : "";
  return named.empty() ? LauncherName(job) : named;
}

api::Json Role(const api::TrainingJob& job) {
  api::Json workers = api::Json::array();
  for (int32_t i = 0; i < job.Replicas("Worker"); ++i) {
    workers.push_back(frameworks::ReplicaName(job, {"Worker", i}));
  }
  return {{"apiVersion", "rbac.authorization.k8s.io/v1"},
          {"kind", "Role"},
          {"metadata", Meta(job)},
          {"rules",
           {{{"apiGroups", {""}}, {"resources", {"pods"}}, {"verbs", {"get", "list", "watch"}}},
            {{"apiGroups", {""}},
             {"resources", {"pods/exec"}},
             {"verbs", {"create"}},
             {"resourceNames", workers}}}}};
}

// Creates `want` unless it exists; with `compare`, brings that field of an
// existing one in step.
Status Ensure(store::ObjectStore& store, const api::Json& want, const char* compare) {
  store::ObjectKey key{api::StringAt(want, "kind"), api::StringAt(want, {"metadata", "namespace"}),
                       api::StringAt(want, {"metadata", "name"})};
  Result<api::Json> have = store.Get(key);
  if (have.status().code() == StatusCode::kNotFound) {
    Result<api::Json> created = store.Create(want);
    if (created.status().code() == StatusCode::kAlreadyExists) return OkStatus();
    return created.status();
  }
  RETURN_IF_ERROR(have.status());
  if (compare == nullptr || api::ValueAt(*have, compare) == want[compare]) return OkStatus();
  (*have)[compare] = want[compare];
  return store.Update(*have).status();
}

}  // namespace

Status ReconcileLauncherAccess(store::ObjectStore& store, const api::TrainingJob& job) {
  if (AccountOf(job) == LauncherName(job)) {
    RETURN_IF_ERROR(
        Ensure(store, {{"apiVersion", "v1"}, {"kind", "ServiceAccount"}, {"metadata", Meta(job)}},
               nullptr));
  }
  RETURN_IF_ERROR(Ensure(store, Role(job), "rules"));
  return Ensure(
      store,
      {{"apiVersion", "rbac.authorization.k8s.io/v1"},
       {"kind", "RoleBinding"},
       {"metadata", Meta(job)},
       {"roleRef",
        {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "Role"}, {"name", LauncherName(job)}}},
       {"subjects",
        {{{"kind", "ServiceAccount"},
          {"name", AccountOf(job)},
          {"namespace", job.metadata.namespace_}}}}},
      "subjects");
}

void PrepareLauncherPod(const api::TrainingJob& job, const std::string& delivery_image,
                        api::PodSpec& spec) {
  // serviceAccountName is one of the pod fields kept as written (extra).
  if (!spec.extra.is_object()) spec.extra = api::Json::object();
  if (api::StringAt(spec.extra, "serviceAccountName").empty()) {
    spec.extra["serviceAccountName"] = LauncherName(job);
  }
  api::Volume volume;
  volume.name = kKubectlVolume;
  volume.empty_dir.emplace();
  spec.volumes.push_back(std::move(volume));
  api::VolumeMount mount;
  mount.name = kKubectlVolume;
  mount.mount_path = std::string(kKubectlDir);
  api::Container delivery;
  delivery.name = "kubectl-delivery";
  delivery.image = delivery_image;
  delivery.env = {{.name = "TARGET_DIR", .value = std::string(kKubectlDir)},
                  {.name = "NAMESPACE", .value = job.metadata.namespace_}};
  delivery.volume_mounts = {mount};
  auto quantity = [](const char* text) { return *Quantity::Parse(text); };
  delivery.resources.limits = {{"cpu", quantity("100m")},
                               {"memory", quantity("512Mi")},
                               {"ephemeral-storage", quantity("5Gi")}};
  delivery.resources.requests = delivery.resources.limits;
  spec.init_containers.push_back(std::move(delivery));
  if (!spec.containers.empty()) spec.containers[0].volume_mounts.push_back(std::move(mount));
}

}  // namespace trainyard::controller
