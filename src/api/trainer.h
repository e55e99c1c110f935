// Kubeflow Trainer v2 (trainer.kubeflow.org/v1alpha1): the TrainJob a data
// scientist writes, and the TrainingRuntime (namespaced) or
// ClusterTrainingRuntime a platform team provides: an ML policy, a gang
// policy and a JobSet template. The fields are upstream's current ones
// (v2.2 on: runtimePatches, activeDeadlineSeconds), plus the torch
// policy's numProcPerNode and elasticPolicy of v2.0 and v2.1 runtimes.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "api/jobset.h"
#include "api/pod.h"
#include "api/reflect.h"

namespace trainyard::api {

inline constexpr std::string_view kTrainerGroup = "trainer.kubeflow.org";
inline constexpr std::string_view kTrainerGroupVersion = "trainer.kubeflow.org/v1alpha1";

struct NameReference {
  static constexpr bool kReflected = true;
  std::string name;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("name", s.name);
  }
  bool operator==(const NameReference&) const = default;
};

struct RuntimeRef {
  static constexpr bool kReflected = true;
  std::string name;
  std::string api_group;  // trainer.kubeflow.org by default
  std::string kind;       // ClusterTrainingRuntime by default
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("name", s.name);
    v("apiGroup", s.api_group);
    v("kind", s.kind);
  }
  bool operator==(const RuntimeRef&) const = default;
};

// Where a dataset or model comes from (STORAGE_URI), for its initializer.
struct InitializerSource {
  static constexpr bool kReflected = true;
  std::string storage_uri;
  std::vector<EnvVar> env;
  std::optional<NameReference> secret_ref;  // a Secret whose keys become env
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("storageUri", s.storage_uri);
    v("env", s.env);
    v("secretRef", s.secret_ref);
  }
  bool operator==(const InitializerSource&) const = default;
};

struct TrainJobInitializer {
  static constexpr bool kReflected = true;
  std::optional<InitializerSource> dataset;
  std::optional<InitializerSource> model;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("dataset", s.dataset);
    v("model", s.model);
  }
  bool operator==(const TrainJobInitializer&) const = default;
};

struct TrainerSpec {
  static constexpr bool kReflected = true;
  std::string image;
  std::vector<std::string> command;
  std::vector<std::string> args;
  std::vector<EnvVar> env;
  std::optional<int32_t> num_nodes;
  std::optional<ResourceRequirements> resources_per_node;
  // An integer (v2.2 on), or "auto", "cpu", "gpu" as v2.0 and v2.1 took.
  Json num_proc_per_node;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("image", s.image);
    v("command", s.command);
    v("args", s.args);
    v("env", s.env);
    v("numNodes", s.num_nodes);
    v("resourcesPerNode", s.resources_per_node);
    v("numProcPerNode", s.num_proc_per_node);
  }
  bool operator==(const TrainerSpec&) const = default;
};

// What a runtime patch may set on a container: the rest is the runtime's.
struct ContainerPatch {
  static constexpr bool kReflected = true;
  std::string name;
  std::vector<EnvVar> env;
  std::vector<VolumeMount> volume_mounts;
  Json security_context;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("name", s.name);
    v("env", s.env);
    v("volumeMounts", s.volume_mounts);
    v("securityContext", s.security_context);
  }
  bool operator==(const ContainerPatch&) const = default;
};

struct PodSpecPatch {
  static constexpr bool kReflected = true;
  std::string service_account_name;
  std::vector<Volume> volumes;
  std::vector<ContainerPatch> init_containers;
  std::vector<ContainerPatch> containers;
  Json image_pull_secrets;
  Json security_context;
  std::map<std::string, std::string> node_selector;
  Json affinity;
  std::vector<Toleration> tolerations;
  Json scheduling_gates;
  std::optional<int64_t> termination_grace_period_seconds;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("serviceAccountName", s.service_account_name);
    v("volumes", s.volumes);
    v("initContainers", s.init_containers);
    v("containers", s.containers);
    v("imagePullSecrets", s.image_pull_secrets);
    v("securityContext", s.security_context);
    v("nodeSelector", s.node_selector);
    v("affinity", s.affinity);
    v("tolerations", s.tolerations);
    v("schedulingGates", s.scheduling_gates);
    v("terminationGracePeriodSeconds", s.termination_grace_period_seconds);
  }
  bool operator==(const PodSpecPatch&) const = default;
};

struct PodTemplatePatch {
  static constexpr bool kReflected = true;
  EmbeddedMeta metadata;
  std::optional<PodSpecPatch> spec;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("metadata", s.metadata);
    v("spec", s.spec);
  }
  bool operator==(const PodTemplatePatch&) const = default;
};

struct JobSpecPatch {
  static constexpr bool kReflected = true;
  std::optional<PodTemplatePatch> template_;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("template", s.template_);
  }
  bool operator==(const JobSpecPatch&) const = default;
};

struct JobTemplatePatch {
  static constexpr bool kReflected = true;
  EmbeddedMeta metadata;
  std::optional<JobSpecPatch> spec;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("metadata", s.metadata);
    v("spec", s.spec);
  }
  bool operator==(const JobTemplatePatch&) const = default;
};

struct ReplicatedJobPatch {
  static constexpr bool kReflected = true;
  std::string name;
  std::optional<JobTemplatePatch> template_;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("name", s.name);
    v("template", s.template_);
  }
  bool operator==(const ReplicatedJobPatch&) const = default;
};

struct JobSetSpecPatch {
  static constexpr bool kReflected = true;
  std::vector<ReplicatedJobPatch> replicated_jobs;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("replicatedJobs", s.replicated_jobs);
  }
  bool operator==(const JobSetSpecPatch&) const = default;
};

struct JobSetTemplatePatch {
  static constexpr bool kReflected = true;
  EmbeddedMeta metadata;
  std::optional<JobSetSpecPatch> spec;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("metadata", s.metadata);
    v("spec", s.spec);
  }
  bool operator==(const JobSetTemplatePatch&) const = default;
};

struct RuntimeSpecPatch {
  static constexpr bool kReflected = true;
  std::optional<JobSetTemplatePatch> template_;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("template", s.template_);
  }
  bool operator==(const RuntimeSpecPatch&) const = default;
};

// One owner's changes to the runtime's JobSet for this TrainJob, keyed by
// `manager` so that a user, Kueue and a webhook each keep their own.
struct RuntimePatch {
  static constexpr bool kReflected = true;
  std::string manager;
  std::string time;
  std::optional<RuntimeSpecPatch> training_runtime_spec;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("manager", s.manager);
    v("time", s.time);
    v("trainingRuntimeSpec", s.training_runtime_spec);
  }
  bool operator==(const RuntimePatch&) const = default;
};

struct TrainJobSpec {
  static constexpr bool kReflected = true;
  RuntimeRef runtime_ref;
  std::optional<TrainJobInitializer> initializer;
  std::optional<TrainerSpec> trainer;
  std::vector<RuntimePatch> runtime_patches;
  std::optional<bool> suspend;
  std::optional<std::string> managed_by;
  std::optional<int64_t> active_deadline_seconds;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("runtimeRef", s.runtime_ref);
    v("initializer", s.initializer);
    v("trainer", s.trainer);
    v("runtimePatches", s.runtime_patches);
    v("suspend", s.suspend);
    v("managedBy", s.managed_by);
    v("activeDeadlineSeconds", s.active_deadline_seconds);
  }
  bool operator==(const TrainJobSpec&) const = default;
};

struct TrainJobStatus {
  static constexpr bool kReflected = true;
  std::vector<MetaCondition> conditions;
  std::vector<ReplicatedJobStatus> jobs_status;
  Json trainer_status;  // progress and metrics, written by the trainer
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("conditions", s.conditions);
    v("jobsStatus", s.jobs_status);
    v("trainerStatus", s.trainer_status);
  }
  bool operator==(const TrainJobStatus&) const = default;
};

// A TrainJob. Its metadata is decoded apart; `Fields` lists what follows it.
struct TrainJob {
  static constexpr bool kReflected = true;
  static constexpr std::string_view kKind = "TrainJob";
  static constexpr std::string_view kGroupVersion = kTrainerGroupVersion;
  ObjectMeta metadata;
  TrainJobSpec spec;
  TrainJobStatus status;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("spec", s.spec);
    v("status", s.status);
  }
  bool operator==(const TrainJob&) const = default;
};

struct TorchEnvTarget {
  static constexpr bool kReflected = true;
  std::string job_name;
  std::vector<std::string> container_names;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("jobName", s.job_name);
    v("containerNames", s.container_names);
  }
  bool operator==(const TorchEnvTarget&) const = default;
};

struct TorchEnvInjection {
  static constexpr bool kReflected = true;
  std::vector<TorchEnvTarget> targets;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("targets", s.targets);
  }
  bool operator==(const TorchEnvInjection&) const = default;
};

struct TorchElasticPolicy {
  static constexpr bool kReflected = true;
  std::optional<int32_t> max_restarts;
  std::optional<int32_t> min_nodes;
  std::optional<int32_t> max_nodes;
  Json metrics;  // autoscaling/v2 metrics, for an HPA trainyard does not make
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("maxRestarts", s.max_restarts);
    v("minNodes", s.min_nodes);
    v("maxNodes", s.max_nodes);
    v("metrics", s.metrics);
  }
  bool operator==(const TorchElasticPolicy&) const = default;
};

struct TorchPolicy {
  static constexpr bool kReflected = true;
  std::optional<TorchEnvInjection> env_injection;
  Json num_proc_per_node;                            // v2.0, v2.1: auto | cpu | gpu | an integer
  std::optional<TorchElasticPolicy> elastic_policy;  // v2.0, v2.1
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("envInjection", s.env_injection);
    v("numProcPerNode", s.num_proc_per_node);
    v("elasticPolicy", s.elastic_policy);
  }
  bool operator==(const TorchPolicy&) const = default;
};

struct MpiPolicy {
  static constexpr bool kReflected = true;
  std::optional<int32_t> num_proc_per_node;  // 1 by default
  std::string mpi_implementation;            // OpenMPI by default
  std::string ssh_auth_mount_path;           // /root/.ssh by default
  std::optional<bool> run_launcher_as_node;  // false by default
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("numProcPerNode", s.num_proc_per_node);
    v("mpiImplementation", s.mpi_implementation);
    v("sshAuthMountPath", s.ssh_auth_mount_path);
    v("runLauncherAsNode", s.run_launcher_as_node);
  }
  bool operator==(const MpiPolicy&) const = default;
};

struct FluxPolicy {
  static constexpr bool kReflected = true;
  std::optional<int32_t> num_proc_per_node;  // 1 by default
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("numProcPerNode", s.num_proc_per_node);
  }
  bool operator==(const FluxPolicy&) const = default;
};

// jax: {} and xgboost: {}: a policy with no settings, named by presence.
struct EmptyPolicy {
  static constexpr bool kReflected = true;
  template <class S, class V>
  static void Fields(S&, V&) {}
  bool operator==(const EmptyPolicy&) const = default;
};

struct MlPolicy {
  static constexpr bool kReflected = true;
  std::optional<int32_t> num_nodes;
  std::optional<TorchPolicy> torch;
  std::optional<MpiPolicy> mpi;
  std::optional<EmptyPolicy> jax;
  std::optional<EmptyPolicy> xgboost;
  std::optional<FluxPolicy> flux;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("numNodes", s.num_nodes);
    v("torch", s.torch);
    v("mpi", s.mpi);
    v("jax", s.jax);
    v("xgboost", s.xgboost);
    v("flux", s.flux);
  }
  bool operator==(const MlPolicy&) const = default;
};

struct CoschedulingPolicy {
  static constexpr bool kReflected = true;
  std::optional<int32_t> schedule_timeout_seconds;  // 60 by default
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("scheduleTimeoutSeconds", s.schedule_timeout_seconds);
  }
  bool operator==(const CoschedulingPolicy&) const = default;
};

struct VolcanoPolicy {
  static constexpr bool kReflected = true;
  Json network_topology;  // {mode, highestTierAllowed}: placement across network tiers
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("networkTopology", s.network_topology);
  }
  bool operator==(const VolcanoPolicy&) const = default;
};

struct PodGroupPolicy {
  static constexpr bool kReflected = true;
  std::optional<CoschedulingPolicy> coscheduling;
  std::optional<VolcanoPolicy> volcano;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("coscheduling", s.coscheduling);
    v("volcano", s.volcano);
  }
  bool operator==(const PodGroupPolicy&) const = default;
};

struct JobSetTemplate {
  static constexpr bool kReflected = true;
  EmbeddedMeta metadata;
  JobSetSpec spec;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("metadata", s.metadata);
    v("spec", s.spec);
  }
  bool operator==(const JobSetTemplate&) const = default;
};

struct TrainingRuntimeSpec {
  static constexpr bool kReflected = true;
  std::optional<MlPolicy> ml_policy;
  std::optional<PodGroupPolicy> pod_group_policy;
  JobSetTemplate template_;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("mlPolicy", s.ml_policy);
    v("podGroupPolicy", s.pod_group_policy);
    v("template", s.template_);
  }
  bool operator==(const TrainingRuntimeSpec&) const = default;
};

// A TrainingRuntime's or ClusterTrainingRuntime's fields past its metadata.
struct TrainingRuntimeFields {
  static constexpr bool kReflected = true;
  TrainingRuntimeSpec spec;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("spec", s.spec);
  }
};

}  // namespace trainyard::api
