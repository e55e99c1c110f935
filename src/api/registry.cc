#include "api/registry.h"

#include <algorithm>
#include <set>

#include "api/core_kinds.h"
#include "api/defaults.h"
#include "api/deployment.h"
#include "api/kinds.h"
#include "api/object_codec.h"
#include "api/optimization_job.h"
#include "api/trainer_kinds.h"
#include "api/validation_internal.h"
#include "common/strings.h"

namespace trainyard::api {
namespace {

const std::vector<std::string> kAllVerbs = {"create", "delete", "get",  "list",
                                            "patch",  "update", "watch"};
const std::vector<std::string> kReadVerbs = {"get", "list", "watch"};

// The hooks of a kind with its own C++ type `T`.
template <class T>
ObjectHooks TypedHooks(std::function<T(const Json&, FieldErrors&)> decode,
                       void (*validate)(const T&, ValidationResult&), Json (*encode)(const T&)) {
  ObjectHooks hooks;
  hooks.decode = [decode = std::move(decode)](const Json& doc, FieldErrors& errors) -> Object {
    return decode(doc, errors);
  };
  hooks.set_defaults = [](Object& object) { SetDefaults(std::get<T>(object)); };
  hooks.validate = [validate](const Object& object, ValidationResult& out) {
    validate(std::get<T>(object), out);
  };
  hooks.encode = [encode](const Object& object) { return encode(std::get<T>(object)); };
  return hooks;
}

template <class Obj>
ResourceType KatibType(std::vector<PrinterColumn> (*columns)()) {
  std::string kind(Obj::kKind);
  std::string lower = AsciiLower(kind);
  return {
      .group = "kubeflow.org",
      .version = "v1beta1",
      .kind = kind,
      .plural = lower + "s",
      .singular = lower,
      .has_status = true,
      .verbs = kAllVerbs,
      .role = ResourceRole::kTuning,
      .hooks = TypedHooks<Obj>(
          internal::DecodeKatibDocument<Obj>,
          [](const Obj& o, ValidationResult& out) {
            if constexpr (std::is_same_v<Obj, Experiment>) {
              internal::ValidateExperiment(o, out);
            } else if constexpr (std::is_same_v<Obj, Trial>) {
              internal::ValidateTrial(o, out);
            } else {
              internal::ValidateSuggestion(o, out);
            }
          },
          internal::EncodeKatib<Obj>),
      .columns = columns,
      // A trial's code may push its observations; Katib's log is its.
      .strategy = {.tracking = std::is_same_v<Obj, Trial> ? Tracking::kPushed : Tracking::kNone}};
}

ResourceType CoreType(std::string kind, std::string plural, std::vector<std::string> short_names,
                      ObjectHooks hooks, std::vector<PrinterColumn> (*columns)(),
                      bool label_names = false) {
  return {.version = "v1",
          .kind = kind,
          .plural = std::move(plural),
          .singular = AsciiLower(kind),
          .verbs = kAllVerbs,
          .short_names = std::move(short_names),
          .role = ResourceRole::kConfig,
          .hooks = std::move(hooks),
          .label_names = label_names,
          .columns = columns};
}

// The core/v1 kinds.
std::vector<ResourceType> CoreTypes() {
  return {
      {.version = "v1",
       .kind = "Namespace",
       .plural = "namespaces",
       .singular = "namespace",
       .namespaced = false,
       .verbs = {"create", "delete", "get", "list", "patch", "update", "watch"},
       .short_names = {"ns"},
       .role = ResourceRole::kCluster,
       .columns = NamespaceColumns},
      {.version = "v1",
       .kind = "Node",
       .plural = "nodes",
       .singular = "node",
       .namespaced = false,
       .verbs = kReadVerbs,
       .short_names = {"no"},
       .role = ResourceRole::kCluster,
       .columns = NodeColumns},
      {.version = "v1",
       .kind = "Pod",
       .plural = "pods",
       .singular = "pod",
       .has_status = true,
       .has_log = true,
       .verbs = {"delete", "get", "list", "watch"},
       .short_names = {"po"},
       .role = ResourceRole::kPod,
       .columns = PodColumns},
      CoreType("ConfigMap", "configmaps", {"cm"},
               TypedHooks<ConfigMap>(internal::DecodeConfigMapDocument, internal::ValidateConfigMap,
                                     internal::EncodeConfigMap),
               ConfigMapColumns),
      CoreType("Secret", "secrets", {}, SecretHooks(), SecretColumns),
      CoreType("Service", "services", {"svc"}, ServiceHooks(), ServiceColumns, true),
      CoreType("PersistentVolumeClaim", "persistentvolumeclaims", {"pvc"},
               PersistentVolumeClaimHooks(), PersistentVolumeClaimColumns),
      {.version = "v1",
       .kind = "Event",
       .plural = "events",
       .singular = "event",
       .verbs = kReadVerbs,
       .short_names = {"ev"},
       .role = ResourceRole::kRecord,
       .columns = EventColumns},
  };
}

// Kueue's, and the scheduling and quota kinds of Kubernetes.
void AddPolicyTypes(std::vector<ResourceType>& out) {
  struct Names {
    std::vector<std::string> short_names;
    std::vector<PrinterColumn> (*columns)();
  };
  const std::map<std::string, Names> names = {
      {"ClusterQueue", {{"cq"}, ClusterQueueColumns}},
      {"LocalQueue", {{"queue", "queues", "lq"}, LocalQueueColumns}},
      {"ResourceFlavor", {{"flavor", "flavors", "rf"}, NameAgeColumns}},
      {"PriorityClass", {{"pc"}, PriorityClassColumns}},
      {"ResourceQuota", {{"quota"}, ResourceQuotaColumns}}};
  for (const PolicyKindInfo& info : AllPolicyKinds()) {
    std::string kind(info.name);
    std::string gv(info.group_version);
    size_t slash = gv.find('/');
    PolicyKind policy = info.kind;
    out.push_back({.group = slash == std::string::npos ? "" : gv.substr(0, slash),
                   .version = slash == std::string::npos ? gv : gv.substr(slash + 1),
                   .kind = kind,
                   .plural = AsciiLower(kind) + (kind.ends_with("s") ? "es" : "s"),
                   .singular = AsciiLower(kind),
                   .namespaced = info.namespaced,
                   .has_status = true,
                   .verbs = kAllVerbs,
                   .short_names = names.at(kind).short_names,
                   .role = ResourceRole::kPolicy,
                   .hooks = TypedHooks<PolicyObject>(
                       [policy](const Json& doc, FieldErrors& errors) {
                         return internal::DecodePolicyDocument(doc, policy, errors);
                       },
                       internal::ValidatePolicyObject, EncodePolicyObject),
                   .columns = names.at(kind).columns});
  }
}

// The Kubeflow job kinds, then batch/v1 Job: messages that list the job
// kinds name upstream's first.
void AddJobTypes(std::vector<ResourceType>& out) {
  for (const KindInfo& info : AllKinds()) {
    JobKind job = info.kind;
    out.push_back({.group = "kubeflow.org",
                   .version = "v1",
                   .kind = std::string(info.name),
                   .plural = std::string(info.plural),
                   .singular = AsciiLower(info.name),
                   .has_status = true,
                   .verbs = kAllVerbs,
                   .role = ResourceRole::kJob,
                   .hooks = TypedHooks<TrainingJob>(
                       [job](const Json& doc, FieldErrors& errors) {
                         return internal::DecodeTrainingJobDocument(doc, job, errors);
                       },
                       internal::ValidateTrainingJob, internal::EncodeTrainingJob),
                   .label_names = true,
                   .columns = TrainingJobColumns,
                   // Upstream's label is the default container's name.
                   .framework = std::string(info.default_container),
                   .job_shape = TrainingJobShape(info)});
    if (info.scales_by_workers) {
      // Upstream's CRD: Workers' replicas, active pods and selector.
      out.back().scale = ScaleSubresource{
          .spec_replicas = {"spec", std::string(info.replica_field), "Worker", "replicas"},
          .status_replicas = {"status", "replicaStatuses", "Worker", "active"},
          .selector = [](const Json& job) {
            return StringAt(job, {"status", "replicaStatuses", "Worker", "selector"});
          }};
    }
  }
  out.push_back(
      {.group = "batch",
       .version = "v1",
       .kind = "Job",
       .plural = "jobs",
       .singular = "job",
       .has_status = true,
       .verbs = kAllVerbs,
       .role = ResourceRole::kJob,
       .hooks = TypedHooks<BatchJob>(internal::DecodeBatchJobDocument, internal::ValidateBatchJob,
                                     internal::EncodeBatchJob),
       .label_names = true,
       .columns = BatchJobColumns,
       .create_defaults = internal::SetBatchJobCreateDefaults,
       .job_shape = BatchJobShape()});
}

// coordination.k8s.io's Lease: what operators elect a leader with. Kept
// as sent, as kube-apiserver keeps it.
ResourceType LeaseType() {
  return {.group = "coordination.k8s.io",
          .version = "v1",
          .kind = "Lease",
          .plural = "leases",
          .singular = "lease",
          .verbs = kAllVerbs,
          .role = ResourceRole::kRecord,
          .columns = LeaseColumns};
}

ResourceType InstallType(std::string group, std::string kind, std::string plural, bool namespaced,
                         std::vector<std::string> short_names = {}, bool has_status = false,
                         std::string version = "v1") {
  std::string singular = AsciiLower(kind);
  return {.group = std::move(group),
          .version = std::move(version),
          .kind = std::move(kind),
          .plural = std::move(plural),
          .singular = std::move(singular),
          .namespaced = namespaced,
          .has_status = has_status,
          .verbs = kAllVerbs,
          .short_names = std::move(short_names),
          .role = ResourceRole::kInstall,
          .columns = NameAgeColumns};
}

void AddInstallTypes(std::vector<ResourceType>& out) {
  out.push_back(InstallType("apiextensions.k8s.io", "CustomResourceDefinition",
                            "customresourcedefinitions", false, {"crd", "crds"}, true));
  ResourceType account = InstallType("", "ServiceAccount", "serviceaccounts", true, {"sa"});
  account.strategy.token_request = true;
  out.push_back(std::move(account));
  ResourceType deployment =
      InstallType("apps", "Deployment", "deployments", true, {"deploy"}, true);
  deployment.role = ResourceRole::kWorkload;
  deployment.hooks = DeploymentHooks();
  deployment.columns = DeploymentColumns;
  deployment.scale =
      ScaleSubresource{.spec_replicas = {"spec", "replicas"},
                       .status_replicas = {"status", "replicas"},
                       .selector = [](const Json& d) {
                         return FormatLabelSelector(ObjectAt(d, {"spec", "selector"}));
                       }};
  out.push_back(std::move(deployment));
  for (const char* kind : {"ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"}) {
    std::string k = kind;
    out.push_back(InstallType("rbac.authorization.k8s.io", k, AsciiLower(k) + "s",
                              !k.starts_with("Cluster")));
  }
  // What `trainyard operator --gang-scheduler-name` makes: Volcano's
  // PodGroups for volcano, scheduler-plugins' for any other scheduler.
  out.push_back(
      InstallType("scheduling.volcano.sh", "PodGroup", "podgroups", true, {"pg"}, true, "v1beta1"));
  out.push_back(
      InstallType("scheduling.x-k8s.io", "PodGroup", "podgroups", true, {"pgs"}, true, "v1alpha1"));
  for (const char* kind : {"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"}) {
    std::string k = kind;
    out.push_back(InstallType("admissionregistration.k8s.io", k, AsciiLower(k) + "s", false));
  }
}

// Kubeflow Trainer v2: TrainJob runs replicas through the JobSet its
// runtime makes; the runtimes configure it.
void AddTrainerTypes(std::vector<ResourceType>& out) {
  out.push_back({.group = std::string(kTrainerGroup),
                 .version = "v1alpha1",
                 .kind = "TrainJob",
                 .plural = "trainjobs",
                 .singular = "trainjob",
                 .has_status = true,
                 .verbs = kAllVerbs,
                 .role = ResourceRole::kJob,
                 .hooks = TrainJobHooks(),
                 .label_names = true,
                 .columns = TrainJobColumns,
                 .retried_failure_reasons = {std::string(kRuntimeNotSupportedReason)},
                 .job_shape = TrainJobShape()});
  out.back().strategy.trainer_status_push = true;
  for (bool cluster : {false, true}) {
    std::string kind = cluster ? "ClusterTrainingRuntime" : "TrainingRuntime";
    out.push_back({.group = std::string(kTrainerGroup),
                   .version = "v1alpha1",
                   .kind = kind,
                   .plural = AsciiLower(kind) + "s",
                   .singular = AsciiLower(kind),
                   .namespaced = !cluster,
                   .verbs = kAllVerbs,
                   .role = ResourceRole::kConfig,
                   .hooks = TrainingRuntimeHooks(kind),
                   .columns = NameAgeColumns});
  }
  // Tuning over TrainJobs (Trainer v2.3's CRD): no short names, no
  // categories, as upstream's.
  out.push_back({.group = std::string(kTrainerGroup),
                 .version = "v1alpha1",
                 .kind = "OptimizationJob",
                 .plural = "optimizationjobs",
                 .singular = "optimizationjob",
                 .has_status = true,
                 .verbs = kAllVerbs,
                 .role = ResourceRole::kTuning,
                 .hooks = OptimizationJobHooks(),
                 .columns = OptimizationJobColumns});
  out.push_back({.group = "jobset.x-k8s.io",
                 .version = "v1alpha2",
                 .kind = "JobSet",
                 .plural = "jobsets",
                 .singular = "jobset",
                 .has_status = true,
                 .verbs = kAllVerbs,
                 .role = ResourceRole::kJob,
                 .hooks = JobSetHooks(),
                 .label_names = true,
                 .columns = JobSetColumns,
                 .job_shape = JobSetShape()});
}

// The categories kubectl expands (`kubectl get all`): Kubernetes puts its
// pods, services, jobs and deployments in "all"; Katib's CRDs declare all,
// kubeflow and katib; the training operator's and Trainer's declare none.
void SetCategories(std::vector<ResourceType>& out) {
  for (ResourceType& t : out) {
    bool core_all = t.group.empty() && (t.kind == "Pod" || t.kind == "Service");
    if (core_all || (t.group == "batch" && t.kind == "Job") ||
        (t.group == "apps" && t.kind == "Deployment")) {
      t.categories = {"all"};
    }
    if (t.role == ResourceRole::kTuning && t.group == "kubeflow.org") {
      t.categories = {"all", "kubeflow", "katib"};
    }
  }
}

// What the API server does with each kind beyond storing it, keyed by
// qualified resource name.
void SetStrategies(std::vector<ResourceType>& out) {
  const std::map<std::string, ApiStrategy (*)()> strategies = {
      {"namespaces", NamespaceStrategy},
      {"nodes", NodeStrategy},
      {"pods", PodStrategy},
      {"events", EventStrategy},
      {"leases.coordination.k8s.io", LeaseStrategy},
      {"customresourcedefinitions.apiextensions.k8s.io", CrdStrategy},
      {"mutatingwebhookconfigurations.admissionregistration.k8s.io", WebhookConfigurationStrategy},
      {"validatingwebhookconfigurations.admissionregistration.k8s.io",
       WebhookConfigurationStrategy}};
  for (ResourceType& t : out) {
    t.secret_values = t.Qualified() == "secrets";
    auto it = strategies.find(t.Qualified());
    if (it != strategies.end()) t.strategy = it->second();
    if (t.role == ResourceRole::kJob) t.strategy.tracking = Tracking::kOwnOutput;
  }
}

std::vector<ResourceType> MakeTypes() {
  std::vector<ResourceType> out = CoreTypes();
  out.push_back(LeaseType());
  AddInstallTypes(out);
  AddPolicyTypes(out);
  AddJobTypes(out);
  AddTrainerTypes(out);
  out.push_back(KatibType<Experiment>(ExperimentColumns));
  out.push_back(KatibType<Trial>(TrialColumns));
  out.push_back(KatibType<Suggestion>(SuggestionColumns));
  SetCategories(out);
  SetStrategies(out);
  std::set<std::string> taken;
  for (ResourceType& t : out) {
    t.store_kind = taken.insert(t.kind).second ? t.kind : t.kind + "." + t.group;
  }
  return out;
}

}  // namespace

bool ResourceType::Allows(std::string_view verb) const {
  return std::find(verbs.begin(), verbs.end(), verb) != verbs.end();
}

std::string ResourceType::GroupVersion() const {
  return group.empty() ? version : group + "/" + version;
}

std::string ResourceType::Qualified() const {
  return group.empty() ? plural : plural + "." + group;
}

const std::vector<ResourceType>& AllResourceTypes() {
  static const std::vector<ResourceType> types = MakeTypes();
  return types;
}

const ResourceType* ResourceTypeOfKind(std::string_view kind) {
  for (const ResourceType& t : AllResourceTypes()) {
    if (t.store_kind == kind) return &t;
  }
  return nullptr;
}

const ResourceType* ResourceTypeOf(const Json& object) {
  std::string kind = StringAt(object, "kind");
  std::string api_version = StringAt(object, "apiVersion");
  std::string_view group = api_version.find('/') == std::string::npos
                               ? std::string_view()
                               : std::string_view(api_version).substr(0, api_version.find('/'));
  const ResourceType* same_kind = nullptr;
  for (const ResourceType& t : AllResourceTypes()) {
    if (t.kind != kind) continue;
    if (t.group == group) return &t;
    if (same_kind == nullptr) same_kind = &t;
  }
  // An object whose apiVersion names no served group keeps the first type
  // of its kind, as stores keyed it before kinds were qualified.
  return same_kind;
}

std::string StoreKindOf(const Json& object) {
  const ResourceType* type = ResourceTypeOf(object);
  return type != nullptr ? type->store_kind : StringAt(object, "kind");
}

const ResourceType* FindResourceType(std::string_view group, std::string_view version,
                                     std::string_view plural) {
  for (const ResourceType& t : AllResourceTypes()) {
    if (t.group == group && t.version == version && t.plural == plural) return &t;
  }
  return nullptr;
}

const ResourceType* ResolveResourceType(std::string_view word) {
  std::string w = AsciiLower(word);
  for (const ResourceType& t : AllResourceTypes()) {
    bool short_name =
        std::find(t.short_names.begin(), t.short_names.end(), w) != t.short_names.end();
    if (w == t.plural || w == t.singular || w == AsciiLower(t.kind) || short_name) return &t;
    if (!t.group.empty() && w == t.Qualified()) return &t;  // "podgroups.scheduling.x-k8s.io"
  }
  return nullptr;
}

bool IsJobKind(std::string_view kind) {
  const ResourceType* type = ResourceTypeOfKind(kind);
  return type != nullptr && type->role == ResourceRole::kJob;
}

bool IsWorkloadKind(std::string_view kind) {
  const ResourceType* type = ResourceTypeOfKind(kind);
  return type != nullptr && type->role == ResourceRole::kWorkload;
}

std::vector<std::string> JobKindNames() {
  std::vector<std::string> kinds;
  for (const ResourceType& t : AllResourceTypes()) {
    if (t.role == ResourceRole::kJob) kinds.push_back(t.kind);
  }
  return kinds;
}

bool HoldsSecrets(std::string_view kind) {
  const ResourceType* type = ResourceTypeOfKind(kind);
  return type != nullptr && type->secret_values;
}

Tracking TrackingOf(std::string_view kind) {
  const ResourceType* type = ResourceTypeOfKind(kind);
  return type != nullptr ? type->strategy.tracking : Tracking::kNone;
}

const JobShape* JobShapeOf(std::string_view kind) {
  const ResourceType* type = ResourceTypeOfKind(kind);
  return type != nullptr && type->job_shape ? &*type->job_shape : nullptr;
}

}  // namespace trainyard::api
