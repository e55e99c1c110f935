// batch/v1 Job: one role, `completions` pods of one template. Katib trials
// run as these; trainyard runs them like any other job.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "api/meta.h"
#include "api/pod.h"
#include "api/reflect.h"

namespace trainyard::api {

// Every batch/v1 JobSpec field is modelled, so an unknown one is a typo.
struct BatchJobSpec {
  static constexpr bool kReflected = true;
  std::optional<int32_t> parallelism;
  std::optional<int32_t> completions;
  std::optional<int64_t> active_deadline_seconds;
  std::optional<int32_t> backoff_limit;
  std::optional<int32_t> backoff_limit_per_index;
  std::optional<int32_t> max_failed_indexes;
  std::optional<int32_t> ttl_seconds_after_finished;
  std::optional<std::string> completion_mode;  // NonIndexed | Indexed
  std::optional<bool> suspend;
  PodTemplateSpec template_;
  Json selector;  // metav1.LabelSelector
  std::optional<bool> manual_selector;
  Json pod_failure_policy;
  std::string pod_replacement_policy;
  Json success_policy;
  std::optional<std::string> managed_by;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("parallelism", s.parallelism);
    v("completions", s.completions);
    v("activeDeadlineSeconds", s.active_deadline_seconds);
    v("backoffLimit", s.backoff_limit);
    v("backoffLimitPerIndex", s.backoff_limit_per_index);
    v("maxFailedIndexes", s.max_failed_indexes);
    v("ttlSecondsAfterFinished", s.ttl_seconds_after_finished);
    v("completionMode", s.completion_mode);
    v("suspend", s.suspend);
    v("template", s.template_);
    v("selector", s.selector);
    v("manualSelector", s.manual_selector);
    v("podFailurePolicy", s.pod_failure_policy);
    v("podReplacementPolicy", s.pod_replacement_policy);
    v("successPolicy", s.success_policy);
    v("managedBy", s.managed_by);
  }
  bool operator==(const BatchJobSpec&) const = default;
};

struct BatchJobCondition {
  static constexpr bool kReflected = true;
  std::string type;  // Complete | Failed | Suspended | FailureTarget | SuccessCriteriaMet
  std::string status;
  std::string last_probe_time;
  std::string last_transition_time;
  std::string reason;
  std::string message;
  Json extra;  // fields Kubernetes has that trainyard does not model
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("type", s.type);
    v("status", s.status);
    v("lastProbeTime", s.last_probe_time);
    v("lastTransitionTime", s.last_transition_time);
    v("reason", s.reason);
    v("message", s.message);
  }
  bool operator==(const BatchJobCondition&) const = default;
};

struct BatchJobStatus {
  static constexpr bool kReflected = true;
  std::vector<BatchJobCondition> conditions;
  std::string start_time;
  std::string completion_time;
  std::optional<int32_t> active;
  std::optional<int32_t> succeeded;
  std::optional<int32_t> failed;
  std::optional<int32_t> ready;
  // trainyard's, not Kubernetes': the progress its output declares
  // (KEP-2779's shape, engine/metrics_collector.h), as for every job.
  Json trainer_status;
  Json extra;  // terminating, completedIndexes, uncountedTerminatedPods, ...
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("conditions", s.conditions);
    v("startTime", s.start_time);
    v("completionTime", s.completion_time);
    v("active", s.active);
    v("succeeded", s.succeeded);
    v("failed", s.failed);
    v("ready", s.ready);
    v("trainerStatus", s.trainer_status);
  }
  bool operator==(const BatchJobStatus&) const = default;
};

struct BatchJob {
  ObjectMeta metadata;
  BatchJobSpec spec;
  BatchJobStatus status;
  bool operator==(const BatchJob&) const = default;
};

}  // namespace trainyard::api
