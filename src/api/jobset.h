// JobSet (jobset.x-k8s.io/v1alpha2): a group of batch/v1 Jobs run as one
// workload, what Kubeflow Trainer v2 turns a TrainJob into. A
// TrainingRuntime's template carries a JobSetSpec; the TrainJob controller
// writes one JobSet named as the TrainJob; the JobSet controller (the
// local engine's, or a cluster's) runs its replicated jobs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "api/batch_job.h"
#include "api/meta.h"
#include "api/reflect.h"

namespace trainyard::api {

inline constexpr std::string_view kJobSetGroupVersion = "jobset.x-k8s.io/v1alpha2";

// The metadata a CRD lets an embedded template carry (controller-gen's
// EmbeddedObjectMeta): anything else is an unknown field.
struct EmbeddedMeta {
  static constexpr bool kReflected = true;
  std::string name;
  std::string namespace_;
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  std::vector<std::string> finalizers;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("name", s.name);
    v("namespace", s.namespace_);
    v("labels", s.labels);
    v("annotations", s.annotations);
    v("finalizers", s.finalizers);
  }
  bool operator==(const EmbeddedMeta&) const = default;
};

// batch/v1 JobTemplateSpec.
struct JobTemplate {
  static constexpr bool kReflected = true;
  EmbeddedMeta metadata;
  BatchJobSpec spec;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("metadata", s.metadata);
    v("spec", s.spec);
  }
  bool operator==(const JobTemplate&) const = default;
};

struct DependsOn {
  static constexpr bool kReflected = true;
  std::string name;    // an earlier replicated job
  std::string status;  // Ready | Complete
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("name", s.name);
    v("status", s.status);
  }
  bool operator==(const DependsOn&) const = default;
};

struct ReplicatedJob {
  static constexpr bool kReflected = true;
  std::string name;
  std::string group_name;           // "default" by default
  std::optional<int32_t> replicas;  // Jobs made of `template`; 1 by default
  std::vector<DependsOn> depends_on;
  JobTemplate template_;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("name", s.name);
    v("groupName", s.group_name);
    v("replicas", s.replicas);
    v("dependsOn", s.depends_on);
    v("template", s.template_);
  }
  bool operator==(const ReplicatedJob&) const = default;
};

struct JobSetNetwork {
  static constexpr bool kReflected = true;
  std::optional<bool> enable_dns_hostnames;  // true by default
  std::optional<bool> publish_not_ready_addresses;
  std::string subdomain;  // the JobSet's name by default
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("enableDNSHostnames", s.enable_dns_hostnames);
    v("publishNotReadyAddresses", s.publish_not_ready_addresses);
    v("subdomain", s.subdomain);
  }
  bool operator==(const JobSetNetwork&) const = default;
};

struct JobSetSuccessPolicy {
  static constexpr bool kReflected = true;
  std::string operator_;                            // All | Any
  std::vector<std::string> target_replicated_jobs;  // every one when empty
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("operator", s.operator_);
    v("targetReplicatedJobs", s.target_replicated_jobs);
  }
  bool operator==(const JobSetSuccessPolicy&) const = default;
};

struct JobSetFailureRule {
  static constexpr bool kReflected = true;
  std::string name;
  std::string action;  // FailJobSet | RestartJobSet | RestartJobSetAndIgnoreMaxRestarts | ...
  std::vector<std::string> on_job_failure_reasons;
  std::vector<std::string> on_job_failure_message_patterns;
  std::vector<std::string> target_replicated_jobs;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("name", s.name);
    v("action", s.action);
    v("onJobFailureReasons", s.on_job_failure_reasons);
    v("onJobFailureMessagePatterns", s.on_job_failure_message_patterns);
    v("targetReplicatedJobs", s.target_replicated_jobs);
  }
  bool operator==(const JobSetFailureRule&) const = default;
};

struct JobSetFailurePolicy {
  static constexpr bool kReflected = true;
  std::optional<int32_t> max_restarts;
  std::string restart_strategy;  // Recreate by default
  std::vector<JobSetFailureRule> rules;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("maxRestarts", s.max_restarts);
    v("restartStrategy", s.restart_strategy);
    v("rules", s.rules);
  }
  bool operator==(const JobSetFailurePolicy&) const = default;
};

struct JobSetStartupPolicy {
  static constexpr bool kReflected = true;
  std::string startup_policy_order;  // AnyOrder | InOrder
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("startupPolicyOrder", s.startup_policy_order);
  }
  bool operator==(const JobSetStartupPolicy&) const = default;
};

struct JobSetCoordinator {
  static constexpr bool kReflected = true;
  std::string replicated_job;
  std::optional<int32_t> job_index;
  std::optional<int32_t> pod_index;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("replicatedJob", s.replicated_job);
    v("jobIndex", s.job_index);
    v("podIndex", s.pod_index);
  }
  bool operator==(const JobSetCoordinator&) const = default;
};

// A PersistentVolumeClaim template of a volumeClaimPolicy: one claim
// named `<name>-<jobset name>` that every pod mounting `<name>` shares.
struct ClaimTemplate {
  static constexpr bool kReflected = true;
  std::string api_version;
  std::string kind;
  EmbeddedMeta metadata;
  Json spec;  // core/v1 PersistentVolumeClaimSpec
  Json status;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("apiVersion", s.api_version);
    v("kind", s.kind);
    v("metadata", s.metadata);
    v("spec", s.spec);
    v("status", s.status);
  }
  bool operator==(const ClaimTemplate&) const = default;
};

struct VolumeClaimPolicy {
  static constexpr bool kReflected = true;
  std::vector<ClaimTemplate> templates;
  Json retention_policy;  // {whenDeleted: Delete | Retain}
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("templates", s.templates);
    v("retentionPolicy", s.retention_policy);
  }
  bool operator==(const VolumeClaimPolicy&) const = default;
};

struct JobSetSpec {
  static constexpr bool kReflected = true;
  std::vector<ReplicatedJob> replicated_jobs;
  std::optional<JobSetNetwork> network;
  std::optional<JobSetSuccessPolicy> success_policy;
  std::optional<JobSetFailurePolicy> failure_policy;
  std::optional<JobSetStartupPolicy> startup_policy;
  std::optional<bool> suspend;
  std::optional<JobSetCoordinator> coordinator;
  std::string managed_by;
  std::optional<int32_t> ttl_seconds_after_finished;
  std::vector<VolumeClaimPolicy> volume_claim_policies;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("replicatedJobs", s.replicated_jobs);
    v("network", s.network);
    v("successPolicy", s.success_policy);
    v("failurePolicy", s.failure_policy);
    v("startupPolicy", s.startup_policy);
    v("suspend", s.suspend);
    v("coordinator", s.coordinator);
    v("managedBy", s.managed_by);
    v("ttlSecondsAfterFinished", s.ttl_seconds_after_finished);
    v("volumeClaimPolicies", s.volume_claim_policies);
  }
  bool operator==(const JobSetSpec&) const = default;
};

// metav1.Condition, as the v1alpha2 and trainer APIs use it.
struct MetaCondition {
  static constexpr bool kReflected = true;
  std::string type;
  std::string status;  // True | False | Unknown
  std::optional<int64_t> observed_generation;
  std::string last_transition_time;
  std::string reason;
  std::string message;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("type", s.type);
    v("status", s.status);
    v("observedGeneration", s.observed_generation);
    v("lastTransitionTime", s.last_transition_time);
    v("reason", s.reason);
    v("message", s.message);
  }
  bool operator==(const MetaCondition&) const = default;
};

// How the Jobs of one replicated job stand; TrainJob's jobsStatus mirrors it.
struct ReplicatedJobStatus {
  static constexpr bool kReflected = true;
  std::string name;
  int32_t ready = 0;
  int32_t succeeded = 0;
  int32_t failed = 0;
  int32_t active = 0;
  int32_t suspended = 0;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("name", s.name);
    v("ready", s.ready);
    v("succeeded", s.succeeded);
    v("failed", s.failed);
    v("active", s.active);
    v("suspended", s.suspended);
  }
  bool operator==(const ReplicatedJobStatus&) const = default;
};

struct JobSetStatus {
  static constexpr bool kReflected = true;
  std::vector<MetaCondition> conditions;
  std::optional<int32_t> restarts;
  std::optional<int32_t> restarts_count_towards_max;
  std::string terminal_state;  // Completed | Failed
  std::vector<ReplicatedJobStatus> replicated_jobs_status;
  // trainyard's, not JobSet's: the progress its output declares
  // (KEP-2779's shape, engine/metrics_collector.h), as for every job.
  Json trainer_status;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("conditions", s.conditions);
    v("restarts", s.restarts);
    v("restartsCountTowardsMax", s.restarts_count_towards_max);
    v("terminalState", s.terminal_state);
    v("replicatedJobsStatus", s.replicated_jobs_status);
    v("trainerStatus", s.trainer_status);
  }
  bool operator==(const JobSetStatus&) const = default;
};

// A JobSet. Its metadata is decoded apart; `Fields` lists what follows it.
struct JobSet {
  static constexpr bool kReflected = true;
  static constexpr std::string_view kKind = "JobSet";
  static constexpr std::string_view kGroupVersion = kJobSetGroupVersion;
  ObjectMeta metadata;
  JobSetSpec spec;
  JobSetStatus status;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("spec", s.spec);
    v("status", s.status);
  }
  bool operator==(const JobSet&) const = default;
};

}  // namespace trainyard::api
