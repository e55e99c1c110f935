#include "api/validation.h"

#include <fmt/format.h>

#include "api/core_hooks.h"
#include "api/defaults.h"
#include "api/job_metrics.h"
#include "api/names.h"
#include "api/reflect.h"
#include "api/registry.h"
#include "api/trainer_kinds.h"
#include "api/validation_internal.h"
#include "api/well_known.h"
#include "common/strings.h"

namespace trainyard::api {
namespace internal {

namespace {
// Kubernetes caps the total size of an object's annotations at 256 KiB.
constexpr size_t kMaxAnnotationBytes = 256 * 1024;
}  // namespace

void ValidateLabels(const std::map<std::string, std::string>& labels, const FieldPath& path,
                    ValidationResult& out) {
  for (const auto& [key, value] : labels) {
    for (const std::string& p : QualifiedNameProblems(key)) {
      out.errors.push_back(FieldError::Invalid(path, key, p));
    }
    for (const std::string& p : LabelValueProblems(value)) {
      out.errors.push_back(FieldError::Invalid(path.Key(key), value, p));
    }
  }
}

void ValidateObjectMeta(const ObjectMeta& meta, NameRule rule, ValidationResult& out) {
  FieldPath path("metadata");
  auto name_problems = [&](std::string_view name) {
    return rule == NameRule::kDns1035Label ? Dns1035LabelProblems(name)
                                           : Dns1123SubdomainProblems(name);
  };
  if (meta.name.empty() && meta.generate_name.empty()) {
    out.errors.push_back(
        FieldError::Required(path.Child("name"), "name or generateName is required"));
  }
  if (!meta.name.empty()) {
    NameProblems problems = name_problems(meta.name);
    if (!problems.empty()) {
      out.errors.push_back(FieldError::Invalid(path.Child("name"), meta.name,
                                               "should match: " + Join(problems, ",")));
    }
  } else if (!meta.generate_name.empty()) {
    // A generated name appends five characters to the prefix.
    std::string sample = meta.generate_name + "abcde";
    NameProblems problems = name_problems(sample);
    if (!problems.empty()) {
      out.errors.push_back(FieldError::Invalid(path.Child("generateName"), meta.generate_name,
                                               "should match: " + Join(problems, ",")));
    }
  }
  if (!meta.namespace_.empty()) {
    for (const std::string& p : Dns1123LabelProblems(meta.namespace_)) {
      out.errors.push_back(FieldError::Invalid(path.Child("namespace"), meta.namespace_, p));
    }
  }
  ValidateLabels(meta.labels, path.Child("labels"), out);
  size_t annotation_bytes = 0;
  for (const auto& [key, value] : meta.annotations) {
    for (const std::string& p : QualifiedNameProblems(key)) {
      out.errors.push_back(FieldError::Invalid(path.Child("annotations"), key, p));
    }
    annotation_bytes += key.size() + value.size();
  }
  if (annotation_bytes > kMaxAnnotationBytes) {
    out.errors.push_back(FieldError::TooLong(path.Child("annotations"), kMaxAnnotationBytes));
  }
}

}  // namespace internal

namespace {

// trainyard.dev/metrics (and -filter) choose how a job's own metrics are
// collected (api/job_metrics.h): refused when unusable, and said to do
// nothing on a kind that is no job.
void CheckMetricsAnnotation(const ResourceType& type, const ObjectMeta& meta,
                            ValidationResult& out) {
  bool annotated = false;
  for (std::string_view key : {kJobMetricsAnnotation, kJobMetricsFilterAnnotation}) {
    if (!meta.annotations.contains(std::string(key))) continue;
    annotated = true;
    if (type.role != ResourceRole::kJob) {
      out.warnings.push_back(
          fmt::format("{}: not acted on: a {} is no job, and has no metrics of its own to collect",
                      FieldPath("metadata").Child("annotations").Key(key).ToString(), type.kind));
    }
  }
  if (annotated && type.role == ResourceRole::kJob) JobMetricsSpecOf(meta.annotations, &out.errors);
}

// trainyard.dev/root is read on a pod (from its template): anywhere else
// it would be ignored, so said.
void CheckRootAnnotation(const ResourceType& type, const ObjectMeta& meta, ValidationResult& out) {
  if (type.role == ResourceRole::kPod || !meta.annotations.contains(std::string(kRootAnnotation))) {
    return;
  }
  out.warnings.push_back(
      fmt::format("{}: not acted on: it is read on pods; put it on the pod template's metadata "
                  "(template.metadata.annotations)",
                  FieldPath("metadata").Child("annotations").Key(kRootAnnotation).ToString()));
}

}  // namespace

ValidationResult Validate(const Object& object) {
  ValidationResult out;
  const ResourceType& type = *ResourceTypeOfKind(KindName(object));
  internal::ValidateObjectMeta(
      Metadata(object),
      type.label_names ? internal::NameRule::kDns1035Label : internal::NameRule::kDns1123Subdomain,
      out);
  CheckMetricsAnnotation(type, Metadata(object), out);
  CheckRootAnnotation(type, Metadata(object), out);
  type.hooks.validate(object, out);
  return out;
}

namespace {
void CheckImmutable(const std::string& old_value, const std::string& new_value,
                    const FieldPath& path, FieldErrors& errors, std::string detail = "") {
  if (old_value != new_value) {
    errors.push_back(FieldError::Invalid(
        path, new_value, detail.empty() ? "field is immutable" : std::move(detail)));
  }
}
}  // namespace

namespace {

// The template without what a suspended Job that never ran may change
// (Kubernetes' mutable scheduling directives).
PodTemplateSpec WithoutSchedulingDirectives(PodTemplateSpec t) {
  t.metadata.labels.clear();
  t.metadata.annotations.clear();
  t.spec.node_selector.clear();
  t.spec.affinity.reset();
  t.spec.tolerations.clear();
  if (t.spec.extra.is_object()) t.spec.extra.erase("schedulingGates");
  return t;
}

// Kubernetes' ValidateJobSpecUpdate: what makes a Job's pods cannot change
// under them.
void ValidateBatchJobUpdate(const BatchJob& old_job, const BatchJob& new_job, FieldErrors& errors) {
  const BatchJobSpec& was = old_job.spec;
  const BatchJobSpec& now = new_job.spec;
  FieldPath spec("spec");
  auto immutable = [&](bool same, const char* field, std::string value) {
    if (!same)
      errors.push_back(FieldError::Invalid(spec.Child(field), value, "field is immutable"));
  };
  immutable(was.selector == now.selector, "selector", now.selector.dump());
  immutable(was.completion_mode == now.completion_mode, "completionMode",
            now.completion_mode.value_or(""));
  // An Indexed Job scales by completions and parallelism together.
  bool elastic = now.completion_mode == "Indexed" && now.completions == now.parallelism;
  immutable(was.completions == now.completions || elastic, "completions",
            now.completions ? std::to_string(*now.completions) : "null");
  immutable(was.pod_failure_policy == now.pod_failure_policy, "podFailurePolicy",
            now.pod_failure_policy.dump());
  immutable(was.backoff_limit_per_index == now.backoff_limit_per_index, "backoffLimitPerIndex",
            now.backoff_limit_per_index ? std::to_string(*now.backoff_limit_per_index) : "null");
  bool never_ran = was.suspend.value_or(false) && old_job.status.start_time.empty();
  bool same_template = never_ran ? WithoutSchedulingDirectives(was.template_) ==
                                       WithoutSchedulingDirectives(now.template_)
                                 : was.template_ == now.template_;
  immutable(same_template, "template", Encode(now.template_).dump());
}

}  // namespace

FieldErrors ValidateUpdate(const Object& old_object, const Object& new_object) {
  FieldErrors errors;
  CheckImmutable(std::string(KindName(old_object)), std::string(KindName(new_object)),
                 FieldPath("kind"), errors);
  CheckImmutable(Metadata(old_object).name, Metadata(new_object).name,
                 FieldPath("metadata").Child("name"), errors);
  CheckImmutable(Metadata(old_object).namespace_, Metadata(new_object).namespace_,
                 FieldPath("metadata").Child("namespace"), errors);
  const auto* old_experiment = std::get_if<Experiment>(&old_object);
  const auto* new_experiment = std::get_if<Experiment>(&new_object);
  if (old_experiment != nullptr && new_experiment != nullptr) {
    internal::ValidateExperimentUpdate(*old_experiment, *new_experiment, errors);
    return errors;
  }
  const ResourceType* type = ResourceTypeOfKind(KindName(new_object));
  if (KindName(old_object) == KindName(new_object) && type != nullptr &&
      type->hooks.validate_update) {
    type->hooks.validate_update(old_object, new_object, errors);
    return errors;
  }
  const auto* old_batch = std::get_if<BatchJob>(&old_object);
  const auto* new_batch = std::get_if<BatchJob>(&new_object);
  if (old_batch != nullptr && new_batch != nullptr) {
    ValidateBatchJobUpdate(*old_batch, *new_batch, errors);
    return errors;
  }
  const auto* old_job = std::get_if<TrainingJob>(&old_object);
  const auto* new_job = std::get_if<TrainingJob>(&new_object);
  if (old_job == nullptr || new_job == nullptr) return errors;
  RunPolicy old_run = old_job->spec.run_policy.value_or(RunPolicy{});
  RunPolicy new_run = new_job->spec.run_policy.value_or(RunPolicy{});
  FieldPath run_path = FieldPath("spec").Child("runPolicy");
  // Upstream's PyTorchJob webhook compared the new object with itself and so
  // never enforced this; here it holds for every kind.
  CheckImmutable(old_run.managed_by.value_or(""), new_run.managed_by.value_or(""),
                 run_path.Child("managedBy"), errors);
  CheckImmutable(old_run.scheduling_policy.value_or(SchedulingPolicy{}).queue,
                 new_run.scheduling_policy.value_or(SchedulingPolicy{}).queue,
                 run_path.Child("schedulingPolicy").Child("queue"), errors,
                 "spec.runPolicy.schedulingPolicy.queue is immutable");
  return errors;
}

CheckedObject DecodeAndValidate(const Json& document) {
  CheckedObject checked;
  DecodeResult decoded = DecodeObject(document);
  checked.result.errors = decoded.errors;
  if (!decoded.object) return checked;
  SetDefaults(*decoded.object);
  ValidationResult validation = Validate(*decoded.object);
  for (FieldError& e : validation.errors) {
    bool repeats_decode_error = false;
    for (const FieldError& d : decoded.errors) {
      if (d.type == FieldErrorType::kUnknownField) continue;  // nothing failed to decode
      repeats_decode_error = repeats_decode_error || e.path.IsWithin(d.path);
    }
    if (!repeats_decode_error) checked.result.errors.push_back(std::move(e));
  }
  checked.result.warnings = std::move(validation.warnings);
  checked.object = std::move(decoded.object);
  return checked;
}

}  // namespace trainyard::api
