// Per-kind validation of training jobs (upstream's webhook rules, applied to
// every kind alike) and of batch/v1 Jobs.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <set>

#include "api/names.h"
#include "api/reflect.h"
#include "api/validation_internal.h"

namespace trainyard::api::internal {
namespace {

const std::vector<std::string> kReplicaRestartPolicies = {"Always", "OnFailure", "Never",
                                                          "ExitCode"};
const std::vector<std::string> kCleanPodPolicies = {"All", "Running", "None"};
const std::vector<std::string> kManagedBy = {"kubeflow.org/training-operator",
                                             "kueue.x-k8s.io/multikueue"};

FieldPath ReplicasPath(const TrainingJob& job) {
  return FieldPath("spec").Child(job.info().replica_field);
}

void RequireExactlyOne(const TrainingJob& job, const std::string& type, ValidationResult& out) {
  const ReplicaSpec* spec = job.FindReplica(type);
  if (spec != nullptr && spec->replicas.value_or(1) != 1) {
    out.errors.push_back(
        FieldError::Forbidden(ReplicasPath(job).Key(type).Child("replicas"), "must be 1"));
  }
}

void RequirePresent(const TrainingJob& job, const std::string& type, ValidationResult& out) {
  if (job.FindReplica(type) == nullptr) {
    out.errors.push_back(FieldError::Required(ReplicasPath(job).Key(type), "must be present"));
  }
}

void ValidateReplicaSpec(const TrainingJob& job, const std::string& type, const ReplicaSpec& spec,
                         ValidationResult& out) {
  const KindInfo& info = job.info();
  FieldPath path = ReplicasPath(job).Key(type);
  const std::vector<std::string>& types = info.replica_types;
  if (std::find(types.begin(), types.end(), type) == types.end()) {
    std::string canonical = CanonicalReplicaType(job.kind, type);
    if (canonical != type && job.spec.replica_specs.contains(canonical)) {
      out.errors.push_back(FieldError::Duplicate(path, canonical));
    } else {
      out.errors.push_back(FieldError::NotSupported(path, type, types));
    }
  }
  CheckMin(spec.replicas, 0, path.Child("replicas"), out);
  // Empty only where defaulting skipped the type (MPIJob's unknown types),
  // which is reported above.
  if (!spec.restart_policy.empty() &&
      std::find(kReplicaRestartPolicies.begin(), kReplicaRestartPolicies.end(),
                spec.restart_policy) == kReplicaRestartPolicies.end()) {
    out.errors.push_back(FieldError::NotSupported(path.Child("restartPolicy"), spec.restart_policy,
                                                  kReplicaRestartPolicies));
  }
  FieldPath template_path = path.Child("template");
  FieldPath containers_path = template_path.Child("spec").Child("containers");
  const std::vector<Container>& containers = spec.template_.spec.containers;
  if (containers.empty()) {
    out.errors.push_back(FieldError::Required(containers_path, "must be specified"));
  }
  for (size_t i = 0; i < containers.size(); ++i) {
    if (containers[i].image.empty()) {
      out.errors.push_back(FieldError::Required(
          containers_path.Index(static_cast<int64_t>(i)).Child("image"), "must be required"));
    }
  }
  // MPIJob runs its first container whatever its name; the others need the
  // framework's container.
  bool has_default = std::any_of(containers.begin(), containers.end(), [&](const Container& c) {
    return c.name == info.default_container;
  });
  if (!info.mpi_launcher && !containers.empty() && !has_default) {
    out.errors.push_back(FieldError::Required(
        containers_path,
        fmt::format("must have at least one container with name {}", info.default_container)));
  }
  if (!spec.template_.spec.restart_policy.empty() &&
      spec.template_.spec.restart_policy != spec.restart_policy) {
    out.warnings.push_back(
        fmt::format("{}: {} is ignored: the replica's restartPolicy ({}) decides restarts",
                    template_path.Child("spec").Child("restartPolicy").ToString(),
                    spec.template_.spec.restart_policy, spec.restart_policy));
  }
  ValidatePodTemplate(spec.template_, template_path, {}, out);
}

void ValidateSchedulingPolicy(const SchedulingPolicy& policy, const FieldPath& path,
                              int64_t total_replicas, ValidationResult& out) {
  if (policy.min_available) {
    FieldPath p = path.Child("minAvailable");
    if (*policy.min_available < 1) {
      out.errors.push_back(
          FieldError::Invalid(p, *policy.min_available, "must be greater than or equal to 1"));
    } else if (*policy.min_available > total_replicas) {
      out.errors.push_back(FieldError::Invalid(
          p, *policy.min_available,
          fmt::format("must not exceed the job's total replicas ({}): the gang could never start",
                      total_replicas)));
    }
  }
  CheckMin(policy.schedule_timeout_seconds, 1, path.Child("scheduleTimeoutSeconds"), out);
  if (policy.min_resources)
    ValidateResourceList(*policy.min_resources, path.Child("minResources"), out);
  for (const auto& [field, value] :
       {std::pair{"queue", &policy.queue}, std::pair{"priorityClass", &policy.priority_class}}) {
    if (value->empty()) continue;
    for (const std::string& p : Dns1123SubdomainProblems(*value)) {
      out.errors.push_back(FieldError::Invalid(path.Child(field), *value, p));
    }
  }
}

void ValidateRunPolicy(const TrainingJob& job, ValidationResult& out) {
  if (!job.spec.run_policy) return;
  const RunPolicy& run = *job.spec.run_policy;
  FieldPath path = FieldPath("spec").Child("runPolicy");
  if (run.clean_pod_policy && std::find(kCleanPodPolicies.begin(), kCleanPodPolicies.end(),
                                        *run.clean_pod_policy) == kCleanPodPolicies.end()) {
    out.errors.push_back(FieldError::NotSupported(path.Child("cleanPodPolicy"),
                                                  *run.clean_pod_policy, kCleanPodPolicies));
  }
  CheckMin(run.ttl_seconds_after_finished, 0, path.Child("ttlSecondsAfterFinished"), out);
  CheckMin(run.active_deadline_seconds, 1, path.Child("activeDeadlineSeconds"), out);
  CheckMin(run.backoff_limit, 0, path.Child("backoffLimit"), out);
  // Upstream skips this check for JAXJob and MPIJob; it holds for all here.
  if (run.managed_by &&
      std::find(kManagedBy.begin(), kManagedBy.end(), *run.managed_by) == kManagedBy.end()) {
    out.errors.push_back(
        FieldError::NotSupported(path.Child("managedBy"), *run.managed_by, kManagedBy));
  }
  if (run.scheduling_policy) {
    ValidateSchedulingPolicy(*run.scheduling_policy, path.Child("schedulingPolicy"),
                             job.TotalReplicas(), out);
  }
}

bool IsPositiveInteger(std::string_view s) {
  int value = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  return ec == std::errc() && ptr == s.data() + s.size() && value > 0;
}

// The elastic replica range shared by PyTorchJob and PaddleJob.
template <class Policy>
void ValidateElasticRange(const TrainingJob& job, const Policy& policy, ValidationResult& out) {
  FieldPath path = FieldPath("spec").Child("elasticPolicy");
  CheckMin(policy.min_replicas, 1, path.Child("minReplicas"), out);
  CheckMin(policy.max_restarts, 0, path.Child("maxRestarts"), out);
  if (policy.min_replicas && policy.max_replicas && *policy.max_replicas < *policy.min_replicas) {
    out.errors.push_back(FieldError::Invalid(
        path.Child("maxReplicas"), *policy.max_replicas,
        fmt::format("must be greater than or equal to minReplicas ({})", *policy.min_replicas)));
    return;
  }
  const ReplicaSpec* worker = job.FindReplica("Worker");
  if (worker == nullptr || !policy.min_replicas || !policy.max_replicas) return;
  int32_t replicas = worker->replicas.value_or(1);
  if (replicas < *policy.min_replicas || replicas > *policy.max_replicas) {
    out.errors.push_back(FieldError::Invalid(
        ReplicasPath(job).Key("Worker").Child("replicas"), replicas,
        fmt::format("must be between elasticPolicy.minReplicas ({}) and maxReplicas ({})",
                    *policy.min_replicas, *policy.max_replicas)));
  }
}

void ValidatePyTorch(const TrainingJob& job, ValidationResult& out) {
  RequireExactlyOne(job, "Master", out);
  const ReplicaSpec* worker = job.FindReplica("Worker");
  if (worker != nullptr && worker->replicas.value_or(1) < 1) {
    out.errors.push_back(FieldError::Forbidden(ReplicasPath(job).Key("Worker").Child("replicas"),
                                               "must be at least 1"));
  }
  if (job.spec.nproc_per_node) {
    const std::string& n = *job.spec.nproc_per_node;
    if (n != "auto" && n != "cpu" && n != "gpu" && !IsPositiveInteger(n)) {
      out.errors.push_back(FieldError::Invalid(FieldPath("spec").Child("nprocPerNode"), n,
                                               "must be auto, cpu, gpu or a positive integer"));
    }
  }
  if (!job.spec.elastic_policy) return;
  const ElasticPolicy& elastic = *job.spec.elastic_policy;
  FieldPath path = FieldPath("spec").Child("elasticPolicy");
  if (worker == nullptr) {
    out.errors.push_back(FieldError::Required(ReplicasPath(job).Key("Worker"),
                                              "must be configured if elastic policy is used"));
  }
  if (elastic.n_proc_per_node) {
    out.warnings.push_back(
        "spec.elasticPolicy.nProcPerNode is deprecated, use spec.nprocPerNode instead");
    if (job.spec.nproc_per_node) {
      out.errors.push_back(FieldError::Forbidden(path.Child("nProcPerNode"),
                                                 "must not be used with spec.nprocPerNode"));
    }
    CheckMin(elastic.n_proc_per_node, 1, path.Child("nProcPerNode"), out);
  }
  if (!elastic.rdzv_backend.empty() && elastic.rdzv_backend != "c10d" &&
      elastic.rdzv_backend != "etcd" && elastic.rdzv_backend != "etcd-v2") {
    out.errors.push_back(FieldError::NotSupported(path.Child("rdzvBackend"), elastic.rdzv_backend,
                                                  {"c10d", "etcd", "etcd-v2"}));
  }
  if (elastic.rdzv_port && (*elastic.rdzv_port < 1 || *elastic.rdzv_port > 65535)) {
    out.errors.push_back(FieldError::Invalid(path.Child("rdzvPort"), *elastic.rdzv_port,
                                             "must be between 1 and 65535, inclusive"));
  }
  ValidateElasticRange(job, elastic, out);
}

void ValidateTensorFlow(const TrainingJob& job, ValidationResult& out) {
  if (job.FindReplica("Chief") != nullptr && job.FindReplica("Master") != nullptr) {
    out.errors.push_back(
        FieldError::Forbidden(ReplicasPath(job), "must not have more than 1 Chief or Master role"));
  }
  if (job.spec.success_policy && !job.spec.success_policy->empty() &&
      *job.spec.success_policy != "AllWorkers") {
    out.errors.push_back(FieldError::NotSupported(FieldPath("spec").Child("successPolicy"),
                                                  *job.spec.success_policy, {"", "AllWorkers"}));
  }
}

void ValidateMpi(const TrainingJob& job, ValidationResult& out) {
  RequirePresent(job, "Launcher", out);
  RequireExactlyOne(job, "Launcher", out);
  CheckMin(job.spec.slots_per_worker, 1, FieldPath("spec").Child("slotsPerWorker"), out);
  if (job.spec.mpi_clean_pod_policy &&
      std::find(kCleanPodPolicies.begin(), kCleanPodPolicies.end(),
                *job.spec.mpi_clean_pod_policy) == kCleanPodPolicies.end()) {
    out.errors.push_back(FieldError::NotSupported(FieldPath("spec").Child("cleanPodPolicy"),
                                                  *job.spec.mpi_clean_pod_policy,
                                                  kCleanPodPolicies));
  }
  const ReplicaSpec* worker = job.FindReplica("Worker");
  if (!job.spec.main_container.empty() && worker != nullptr) {
    const auto& containers = worker->template_.spec.containers;
    bool found = std::any_of(containers.begin(), containers.end(),
                             [&](const Container& c) { return c.name == job.spec.main_container; });
    if (!found) {
      out.errors.push_back(
          FieldError::NotFound(FieldPath("spec").Child("mainContainer"), job.spec.main_container,
                               "no container of this name in the Worker template"));
    }
  }
}

}  // namespace

void ValidateTrainingJob(const TrainingJob& job, ValidationResult& out) {
  if (job.spec.replica_specs.empty()) {
    out.errors.push_back(FieldError::Required(ReplicasPath(job), "must be required"));
  }
  for (const auto& [type, spec] : job.spec.replica_specs) ValidateReplicaSpec(job, type, spec, out);
  ValidateRunPolicy(job, out);
  switch (job.kind) {
    case JobKind::kPyTorchJob:
      ValidatePyTorch(job, out);
      break;
    case JobKind::kTFJob:
      ValidateTensorFlow(job, out);
      break;
    case JobKind::kXGBoostJob:
      RequirePresent(job, "Master", out);
      RequireExactlyOne(job, "Master", out);
      break;
    case JobKind::kMPIJob:
      ValidateMpi(job, out);
      break;
    case JobKind::kPaddleJob:
      if (job.spec.paddle_elastic_policy)
        ValidateElasticRange(job, *job.spec.paddle_elastic_policy, out);
      break;
    case JobKind::kJAXJob:
      break;
  }
}

namespace {

// podFailurePolicy as Kubernetes validates it, for the exit-code rules the
// local engine applies and the condition rules it accepts.
void ValidatePodFailurePolicy(const BatchJobSpec& spec, const FieldPath& path,
                              ValidationResult& out) {
  const Json& policy = spec.pod_failure_policy;
  if (policy.is_null()) return;
  const Json* rules = policy.is_object() && policy.contains("rules") ? &policy["rules"] : nullptr;
  if (rules == nullptr || !rules->is_array()) {
    out.errors.push_back(FieldError::Required(path.Child("rules"), "a list of rules"));
    return;
  }
  if (spec.template_.spec.restart_policy != "Never") {
    out.errors.push_back(FieldError::NotSupported(
        FieldPath("spec").Child("template").Child("spec").Child("restartPolicy"),
        spec.template_.spec.restart_policy, {"Never"}));
  }
  for (size_t i = 0; i < rules->size(); ++i) {
    FieldPath rule_path = path.Child("rules").Index(static_cast<int64_t>(i));
    const Json& rule = (*rules)[i];
    if (!rule.is_object()) {
      out.errors.push_back(
          FieldError::InvalidRendered(rule_path, RenderValue(rule), "must be an object"));
      continue;
    }
    std::string action = StringAt(rule, "action");
    if (action != "FailJob" && action != "Ignore" && action != "Count" && action != "FailIndex") {
      out.errors.push_back(FieldError::NotSupported(rule_path.Child("action"), action,
                                                    {"Count", "FailIndex", "FailJob", "Ignore"}));
    }
    bool exit_codes = rule.contains("onExitCodes"), conditions = rule.contains("onPodConditions");
    if (!exit_codes && !conditions) {
      out.errors.push_back(FieldError::Required(rule_path.Child("onExitCodes"),
                                                "specify onExitCodes or onPodConditions"));
    } else if (exit_codes && conditions) {
      out.errors.push_back(FieldError::Forbidden(rule_path.Child("onPodConditions"),
                                                 "may not be specified together with onExitCodes"));
    }
    if (!exit_codes) continue;
    FieldPath on_path = rule_path.Child("onExitCodes");
    const Json& on = rule["onExitCodes"];
    std::string op = StringAt(on, "operator");
    if (op != "In" && op != "NotIn") {
      out.errors.push_back(
          FieldError::NotSupported(on_path.Child("operator"), op, {"In", "NotIn"}));
    }
    const Json* values = on.is_object() && on.contains("values") ? &on["values"] : nullptr;
    if (values == nullptr || !values->is_array() || values->empty()) {
      out.errors.push_back(FieldError::Required(on_path.Child("values")));
      continue;
    }
    std::set<int64_t> seen;
    for (size_t j = 0; j < values->size(); ++j) {
      FieldPath value_path = on_path.Child("values").Index(static_cast<int64_t>(j));
      const Json& v = (*values)[j];
      if (!v.is_number_integer()) {
        out.errors.push_back(
            FieldError::InvalidRendered(value_path, RenderValue(v), "must be an integer"));
      } else if (v.get<int64_t>() == 0 && op == "In") {
        out.errors.push_back(
            FieldError::Invalid(value_path, int64_t{0}, "must not be 0 for the In operator"));
      } else if (!seen.insert(v.get<int64_t>()).second) {
        out.errors.push_back(FieldError::Duplicate(value_path, std::to_string(v.get<int64_t>())));
      }
    }
  }
}

}  // namespace

void ValidateBatchJob(const BatchJob& job, ValidationResult& out) {
  ValidateBatchJobSpec(
      job.spec, FieldPath("spec"),
      {.restart_policies = {"OnFailure", "Never"}, .restart_policy_required = true}, out);
}

void ValidateBatchJobSpec(const BatchJobSpec& spec, const FieldPath& path,
                          const PodTemplateRules& rules, ValidationResult& out) {
  CheckMin(spec.parallelism, 0, path.Child("parallelism"), out);
  CheckMin(spec.completions, 0, path.Child("completions"), out);
  CheckMin(spec.active_deadline_seconds, 1, path.Child("activeDeadlineSeconds"), out);
  CheckMin(spec.backoff_limit, 0, path.Child("backoffLimit"), out);
  CheckMin(spec.ttl_seconds_after_finished, 0, path.Child("ttlSecondsAfterFinished"), out);
  if (spec.completion_mode && *spec.completion_mode != "NonIndexed" &&
      *spec.completion_mode != "Indexed") {
    out.errors.push_back(FieldError::NotSupported(
        path.Child("completionMode"), *spec.completion_mode, {"NonIndexed", "Indexed"}));
  }
  if (spec.completion_mode == "Indexed" && !spec.completions) {
    out.errors.push_back(
        FieldError::Required(path.Child("completions"), "when completion mode is Indexed"));
  }
  // Kubernetes' bound on an Indexed Job, which also bounds what a
  // controller makes for it.
  if (spec.completion_mode == "Indexed") {
    for (const auto& [field, value] :
         {std::pair{"completions", spec.completions}, std::pair{"parallelism", spec.parallelism}}) {
      if (value && *value > kMaxIndexedPods) {
        out.errors.push_back(FieldError::Invalid(
            path.Child(field), *value,
            fmt::format("must be less than or equal to {} when completion mode is Indexed",
                        kMaxIndexedPods)));
      }
    }
  }
  FieldPath template_path = path.Child("template");
  FieldPath containers_path = template_path.Child("spec").Child("containers");
  const std::vector<Container>& containers = spec.template_.spec.containers;
  if (containers.empty()) out.errors.push_back(FieldError::Required(containers_path));
  for (size_t i = 0; i < containers.size(); ++i) {
    if (containers[i].image.empty()) {
      out.errors.push_back(
          FieldError::Required(containers_path.Index(static_cast<int64_t>(i)).Child("image")));
    }
  }
  ValidatePodTemplate(spec.template_, template_path, rules, out);
  ValidatePodFailurePolicy(spec, path.Child("podFailurePolicy"), out);
}

}  // namespace trainyard::api::internal
