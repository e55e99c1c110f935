// The kubeflow.org/v1 training jobs: PyTorchJob, TFJob, XGBoostJob, MPIJob,
// PaddleJob and JAXJob share one shape (replica specs keyed by role, a run
// policy, a status); the few framework-specific fields live beside them and
// are read only for the kind that defines them.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "api/kinds.h"
#include "api/meta.h"
#include "api/pod.h"
#include "api/reflect.h"

namespace trainyard::api {

struct ReplicaSpec {
  static constexpr bool kReflected = true;
  std::optional<int32_t> replicas;
  PodTemplateSpec template_;
  std::string restart_policy;  // Always | OnFailure | Never | ExitCode
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("replicas", s.replicas);
    v("template", s.template_);
    v("restartPolicy", s.restart_policy);
  }
  bool operator==(const ReplicaSpec&) const = default;
};

struct SchedulingPolicy {
  static constexpr bool kReflected = true;
  std::optional<int32_t> min_available;
  std::string queue;
  std::optional<ResourceList> min_resources;
  std::string priority_class;
  std::optional<int32_t> schedule_timeout_seconds;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("minAvailable", s.min_available);
    v("queue", s.queue);
    v("minResources", s.min_resources);
    v("priorityClass", s.priority_class);
    v("scheduleTimeoutSeconds", s.schedule_timeout_seconds);
  }
  bool operator==(const SchedulingPolicy&) const = default;
};

struct RunPolicy {
  static constexpr bool kReflected = true;
  std::optional<std::string> clean_pod_policy;  // All | Running | None
  std::optional<int32_t> ttl_seconds_after_finished;
  std::optional<int64_t> active_deadline_seconds;
  std::optional<int32_t> backoff_limit;
  std::optional<SchedulingPolicy> scheduling_policy;
  std::optional<bool> suspend;
  std::optional<std::string> managed_by;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("cleanPodPolicy", s.clean_pod_policy);
    v("ttlSecondsAfterFinished", s.ttl_seconds_after_finished);
    v("activeDeadlineSeconds", s.active_deadline_seconds);
    v("backoffLimit", s.backoff_limit);
    v("schedulingPolicy", s.scheduling_policy);
    v("suspend", s.suspend);
    v("managedBy", s.managed_by);
  }
  bool operator==(const RunPolicy&) const = default;
};

struct RdzvConf {
  static constexpr bool kReflected = true;
  std::string key;
  std::string value;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("key", s.key);
    v("value", s.value);
  }
  bool operator==(const RdzvConf&) const = default;
};

// PyTorchJob's spec.elasticPolicy.
struct ElasticPolicy {
  static constexpr bool kReflected = true;
  std::optional<int32_t> min_replicas;
  std::optional<int32_t> max_replicas;
  std::string rdzv_backend;  // c10d | etcd | etcd-v2
  std::optional<int32_t> rdzv_port;
  std::string rdzv_host;
  std::string rdzv_id;
  std::vector<RdzvConf> rdzv_conf;
  std::optional<bool> standalone;
  std::optional<int32_t> n_proc_per_node;  // deprecated: spec.nprocPerNode
  std::optional<int32_t> max_restarts;
  Json metrics;  // autoscaling/v2 MetricSpec list, kept verbatim
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("minReplicas", s.min_replicas);
    v("maxReplicas", s.max_replicas);
    v("rdzvBackend", s.rdzv_backend);
    v("rdzvPort", s.rdzv_port);
    v("rdzvHost", s.rdzv_host);
    v("rdzvId", s.rdzv_id);
    v("rdzvConf", s.rdzv_conf);
    v("standalone", s.standalone);
    v("nProcPerNode", s.n_proc_per_node);
    v("maxRestarts", s.max_restarts);
    v("metrics", s.metrics);
  }
  bool operator==(const ElasticPolicy&) const = default;
};

// PaddleJob's spec.elasticPolicy: a subset of PyTorch's.
struct PaddleElasticPolicy {
  static constexpr bool kReflected = true;
  std::optional<int32_t> min_replicas;
  std::optional<int32_t> max_replicas;
  std::optional<int32_t> max_restarts;
  Json metrics;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("minReplicas", s.min_replicas);
    v("maxReplicas", s.max_replicas);
    v("maxRestarts", s.max_restarts);
    v("metrics", s.metrics);
  }
  bool operator==(const PaddleElasticPolicy&) const = default;
};

struct TrainingJobSpec {
  // Replica specs keyed by replica type ("Master", "Worker", ...).
  std::map<std::string, ReplicaSpec> replica_specs;
  std::optional<RunPolicy> run_policy;
  // PyTorchJob
  std::optional<ElasticPolicy> elastic_policy;
  std::optional<std::string> nproc_per_node;  // auto | cpu | gpu | <int>
  // PaddleJob
  std::optional<PaddleElasticPolicy> paddle_elastic_policy;
  // TFJob
  std::optional<std::string> success_policy;  // "" | AllWorkers
  std::optional<bool> enable_dynamic_worker;
  // MPIJob
  std::optional<int32_t> slots_per_worker;
  std::optional<std::string> mpi_clean_pod_policy;  // legacy spec.cleanPodPolicy
  std::string main_container;

  // The wire fields of `kind`'s spec; other kinds' fields are unknown there.
  template <class S, class V>
  static void Fields(S& s, V& v, JobKind kind) {
    v(InfoFor(kind).replica_field.data(), s.replica_specs);
    v("runPolicy", s.run_policy);
    switch (kind) {
      case JobKind::kPyTorchJob:
        v("elasticPolicy", s.elastic_policy);
        v("nprocPerNode", s.nproc_per_node);
        break;
      case JobKind::kPaddleJob:
        v("elasticPolicy", s.paddle_elastic_policy);
        break;
      case JobKind::kTFJob:
        v("successPolicy", s.success_policy);
        v("enableDynamicWorker", s.enable_dynamic_worker);
        break;
      case JobKind::kMPIJob:
        v("slotsPerWorker", s.slots_per_worker);
        v("cleanPodPolicy", s.mpi_clean_pod_policy);
        v("mainContainer", s.main_container);
        break;
      case JobKind::kXGBoostJob:
      case JobKind::kJAXJob:
        break;
    }
  }
  bool operator==(const TrainingJobSpec&) const = default;
};

struct JobCondition {
  static constexpr bool kReflected = true;
  std::string type;    // Created | Running | Restarting | Succeeded | Suspended | Failed
  std::string status;  // True | False | Unknown
  std::string reason;
  std::string message;
  std::string last_update_time;
  std::string last_transition_time;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("type", s.type);
    v("status", s.status);
    v("reason", s.reason);
    v("message", s.message);
    v("lastUpdateTime", s.last_update_time);
    v("lastTransitionTime", s.last_transition_time);
  }
  bool operator==(const JobCondition&) const = default;
};

struct ReplicaStatus {
  static constexpr bool kReflected = true;
  std::optional<int32_t> active;
  std::optional<int32_t> succeeded;
  std::optional<int32_t> failed;
  Json label_selector;  // deprecated metav1.LabelSelector
  std::string selector;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("active", s.active);
    v("succeeded", s.succeeded);
    v("failed", s.failed);
    v("labelSelector", s.label_selector);
    v("selector", s.selector);
  }
  bool operator==(const ReplicaStatus&) const = default;
};

struct JobStatus {
  static constexpr bool kReflected = true;
  std::vector<JobCondition> conditions;
  std::map<std::string, ReplicaStatus> replica_statuses;
  std::string start_time;
  std::string completion_time;
  std::string last_reconcile_time;
  Json extra;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("conditions", s.conditions);
    v("replicaStatuses", s.replica_statuses);
    v("startTime", s.start_time);
    v("completionTime", s.completion_time);
    v("lastReconcileTime", s.last_reconcile_time);
  }
  bool operator==(const JobStatus&) const = default;
};

struct TrainingJob {
  JobKind kind = JobKind::kPyTorchJob;
  ObjectMeta metadata;
  TrainingJobSpec spec;
  JobStatus status;

  const KindInfo& info() const { return InfoFor(kind); }
  // The spec of replica type `type`, or null.
  const ReplicaSpec* FindReplica(std::string_view type) const;
  // Replicas of `type`: 0 when the type is absent, 1 when its count is unset.
  int32_t Replicas(std::string_view type) const;
  int32_t TotalReplicas() const;
  bool operator==(const TrainingJob&) const = default;
};

}  // namespace trainyard::api
