// Pieces of validation shared between validation*.cc; not a public API.
#pragma once

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "api/object.h"
#include "api/validation.h"

namespace trainyard::api::internal {

inline void Error(ValidationResult& out, FieldError e) { out.errors.push_back(std::move(e)); }

// Job names are DNS-1035 labels (upstream's rule, as they name services);
// other objects' names DNS-1123 subdomains.
enum class NameRule { kDns1035Label, kDns1123Subdomain };
void ValidateObjectMeta(const ObjectMeta& meta, NameRule rule, ValidationResult& out);
// Label-style maps (labels, nodeSelector): qualified-name keys, label values.
void ValidateLabels(const std::map<std::string, std::string>& labels, const FieldPath& path,
                    ValidationResult& out);

struct PodTemplateRules {
  // restartPolicy values the pod template itself may carry; empty: any.
  std::vector<std::string> restart_policies;
  bool restart_policy_required = false;
};
void ValidatePodTemplate(const PodTemplateSpec& pod, const FieldPath& path,
                         const PodTemplateRules& rules, ValidationResult& out);
void ValidateResourceList(const ResourceList& list, const FieldPath& path, ValidationResult& out);
// A container's env: names valid and unique, one source each.
void ValidateEnv(const std::vector<EnvVar>& env, const FieldPath& path, ValidationResult& out);
// A pod's volumes: names valid and unique (collected into `names`), one source each.
void ValidateVolumes(const std::vector<Volume>& volumes, const FieldPath& path,
                     std::set<std::string>& names, ValidationResult& out);
void ValidateTolerations(const std::vector<Toleration>& tolerations, const FieldPath& path,
                         ValidationResult& out);
// Kubernetes' most completions and parallelism of an Indexed Job.
inline constexpr int32_t kMaxIndexedPods = 100'000;
// A batch/v1 JobSpec at `path` (spec of a Job, or of a JobSet's job template).
void ValidateBatchJobSpec(const BatchJobSpec& spec, const FieldPath& path,
                          const PodTemplateRules& rules, ValidationResult& out);

void ValidateTrainingJob(const TrainingJob& job, ValidationResult& out);
void ValidateBatchJob(const BatchJob& job, ValidationResult& out);
void ValidateConfigMap(const ConfigMap& map, ValidationResult& out);
// Kubernetes' rule for a ConfigMap's or Secret's keys ('[-._a-zA-Z0-9]+').
std::vector<std::string> ConfigKeyProblems(const std::string& key);
void ValidatePolicyObject(const PolicyObject& object, ValidationResult& out);
void ValidateExperiment(const Experiment& experiment, ValidationResult& out);
void ValidateTrial(const Trial& trial, ValidationResult& out);
// Katib's update rules: only the three counts change, and a finished
// experiment only to resume (LongRunning or FromVolume, past its trials).
void ValidateExperimentUpdate(const Experiment& old_experiment, const Experiment& new_experiment,
                              FieldErrors& errors);
void ValidateSuggestion(const Suggestion& suggestion, ValidationResult& out);
// A trial template's document (inline, or read from its ConfigMap) by
// upstream's rules; errors at `path`.
void ValidateTemplateDocument(const ExperimentSpec& spec, const Json& document,
                              const FieldPath& path, ValidationResult& out);

// Helpers for "must be greater than or equal to N" style bounds.
template <class Int>
void CheckMin(const std::optional<Int>& value, int64_t min, const FieldPath& path,
              ValidationResult& out) {
  if (value && *value < min) {
    out.errors.push_back(
        FieldError::Invalid(path, static_cast<int64_t>(*value),
                            "must be greater than or equal to " + std::to_string(min)));
  }
}

// A CRD's maxItems, in kube-apiserver's words.
inline void CheckMaxItems(size_t size, size_t max, const FieldPath& path, ValidationResult& out) {
  if (size > max) {
    out.errors.push_back(FieldError::InvalidRendered(path, "",
                                                     "Too many: " + std::to_string(size) +
                                                         ": must have at most " +
                                                         std::to_string(max) + " items"));
  }
}

}  // namespace trainyard::api::internal
