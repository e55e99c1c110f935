// The trial template and metrics collector of a Katib Experiment: upstream's
// webhook rules, then the template rendered with sample values and checked
// as the job it will become.
#include <fmt/format.h>

#include <set>

#include "api/defaults.h"
#include "api/job_metrics.h"
#include "api/json.h"
#include "api/katib_template.h"
#include "api/kinds.h"
#include "api/registry.h"
#include "api/validation_internal.h"
#include "api/well_known.h"
#include "common/strings.h"
#include "tune/metrics.h"
#include "tune/space.h"

namespace trainyard::api::internal {
namespace {

const FieldPath kTemplate = FieldPath("spec").Child("trialTemplate");

bool HasBraces(std::string_view name) {
  return name.find('{') != std::string_view::npos || name.find('}') != std::string_view::npos;
}

void ValidateTrialParameters(const ExperimentSpec& spec, ValidationResult& out) {
  const TrialTemplate& t = *spec.trial_template;
  FieldPath path = kTemplate.Child("trialParameters");
  if (t.trial_parameters.empty()) {
    Error(out, FieldError::Required(path, "must be specified"));
    return;
  }
  std::vector<std::string> parameter_names;
  for (const ParameterSpec& p : spec.parameters) parameter_names.push_back(p.name);
  std::set<std::string> names;
  std::set<std::string> references;
  for (size_t i = 0; i < t.trial_parameters.size(); ++i) {
    const TrialParameterSpec& p = t.trial_parameters[i];
    FieldPath at = path.Index(i);
    if (p.name.empty() || p.reference.empty() || HasBraces(p.name)) {
      Error(out, FieldError::Invalid(at, p.name,
                                     "name and reference must be specified and name must not "
                                     "contain '{' or '}'"));
      continue;
    }
    if (!names.insert(p.name).second) {
      Error(out, FieldError::Invalid(at.Child("name"), p.name,
                                     fmt::format("parameter name {} can't be duplicated in "
                                                 "spec.trialTemplate.trialParameters",
                                                 p.name)));
    }
    if (!references.insert(p.reference).second) {
      Error(out, FieldError::Invalid(at.Child("reference"), p.reference,
                                     fmt::format("parameter reference {} can't be duplicated in "
                                                 "spec.trialTemplate.trialParameters",
                                                 p.reference)));
    }
    bool known = IsMetadataReference(p.reference) ||
                 std::find(parameter_names.begin(), parameter_names.end(), p.reference) !=
                     parameter_names.end();
    if (!known) {
      Error(out, FieldError::Invalid(
                     at.Child("reference"), p.reference,
                     fmt::format("parameter reference {} does not exist in spec.parameters: [{}]",
                                 p.reference, Join(parameter_names, " "))));
    }
  }
}

// Where an experiment is created: its own namespace, or the default one
// that a manifest without one goes to.
std::string NamespaceOf(const Experiment& experiment) {
  return experiment.metadata.namespace_.empty() ? "default" : experiment.metadata.namespace_;
}

bool ValidateSource(const TrialTemplate& t, const std::string& namespace_, ValidationResult& out) {
  bool inline_spec = !t.trial_spec.is_null();
  if (!inline_spec && !t.config_map) {
    Error(out,
          FieldError::Required(
              kTemplate,
              "spec.trialTemplate.trialSpec or spec.trialTemplate.configMap must be specified"));
    return false;
  }
  if (inline_spec && t.config_map) {
    Error(out, FieldError::Invalid(kTemplate, "",
                                   "only one of spec.trialTemplate.trialSpec or "
                                   "spec.trialTemplate.configMap can be specified"));
    return false;
  }
  if (t.config_map &&
      (t.config_map->config_map_name.empty() || t.config_map->config_map_namespace.empty() ||
       t.config_map->template_path.empty())) {
    Error(out, FieldError::Required(
                   kTemplate.Child("configMap"),
                   "configMapName, configMapNamespace and templatePath must be specified"));
    return false;
  }
  // Katib reads the ConfigMap with its controller's rights, whatever
  // namespace it names: a user could read another namespace's template
  // (and the secrets it holds) through an experiment. Only the
  // experiment's own namespace is read here.
  if (t.config_map && t.config_map->config_map_namespace != namespace_) {
    Error(out, FieldError::Forbidden(
                   kTemplate.Child("configMap").Child("configMapNamespace"),
                   fmt::format("must be the experiment's own namespace, {:?}: an experiment reads "
                               "its trial template from no other; put the ConfigMap in {}",
                               namespace_, namespace_)));
    return false;
  }
  return true;
}

// The job kinds a trial may run: those Katib has default conditions for
// (a JobSet is none of them).
std::vector<std::string> TrialKindNames() {
  std::vector<std::string> kinds = JobKindNames();
  std::erase_if(
      kinds, [](const std::string& k) { return JobShapeOf(k)->trial_success_condition.empty(); });
  return kinds;
}

// A TrainJob's pods are its runtime's: what a trial would mount into them
// (a metrics file or folder, a pbt trial's directory) has no way in yet.
void CheckTrainJobTrial(const ExperimentSpec& spec, const FieldPath& path, ValidationResult& out) {
  const auto& mc = spec.metrics_collector_spec;
  std::string collector = mc && mc->collector ? mc->collector->kind : "StdOut";
  if (collector == "File" || collector == "TensorFlowEvent") {
    Error(out, FieldError::Invalid(
                   FieldPath("spec").Child("metricsCollectorSpec").Child("collector").Child("kind"),
                   collector,
                   "a TrainJob trial's pods come from its runtime, into which trainyard mounts no "
                   "metrics folder yet: collect with StdOut or Push"));
  }
  if (spec.algorithm && spec.algorithm->algorithm_name == "pbt") {
    Error(out, FieldError::Invalid(path.Child("kind"), "TrainJob",
                                   "pbt hands checkpoints on through a folder trainyard mounts "
                                   "into the trial's pods, which a TrainJob's runtime makes: use "
                                   "another kind of trial for pbt"));
  }
}

}  // namespace

// Upstream's checks on a template document, inline or from a ConfigMap:
// metadata left to the trial, apiVersion and kind set, every trial parameter
// used and every placeholder declared. Then trainyard's own: a kind it runs.
void ValidateTemplateDocument(const ExperimentSpec& spec, const Json& document,
                              const FieldPath& path, ValidationResult& out) {
  if (!document.is_object()) {
    Error(out, FieldError::InvalidRendered(path, "",
                                           "unable to parse spec.trialTemplate: not an object"));
    return;
  }
  const Json& meta = ObjectAt(document, "metadata");
  if (meta.contains("name") || meta.contains("namespace")) {
    Error(out, FieldError::Invalid(
                   path.Child("metadata"), "",
                   "metadata.name and metadata.namespace in spec.trialTemplate must be omitted"));
  }
  auto kind = document.find("kind");
  if (!document.contains("apiVersion") || kind == document.end() || !kind->is_string()) {
    Error(out, FieldError::Required(path,
                                    "APIVersion and Kind in spec.trialTemplate must be specified"));
  } else {
    std::vector<std::string> kinds = TrialKindNames();
    // A kind whose pods come from elsewhere (a TrainJob's runtime).
    const JobShape* shape = JobShapeOf(kind->get<std::string>());
    if (shape != nullptr && !shape->trial_env_path.empty()) CheckTrainJobTrial(spec, path, out);
    if (std::find(kinds.begin(), kinds.end(), kind->get<std::string>()) == kinds.end()) {
      Error(out,
            FieldError::Invalid(path.Child("kind"), kind->get<std::string>(),
                                fmt::format("trainyard cannot run a {} as a trial; use one of: {}",
                                            kind->get<std::string>(), Join(kinds, ", "))));
    }
  }
  std::set<std::string> placeholders = TemplatePlaceholders(document);
  std::set<std::string> declared;
  const std::vector<TrialParameterSpec>& params = spec.trial_template->trial_parameters;
  for (size_t i = 0; i < params.size(); ++i) {
    declared.insert(params[i].name);
    if (!params[i].name.empty() && !placeholders.contains(params[i].name)) {
      Error(out, FieldError::Invalid(
                     kTemplate.Child("trialParameters").Index(i).Child("name"), params[i].name,
                     fmt::format("parameter name: {} in spec.trialParameters not found in "
                                 "spec.trialTemplate",
                                 params[i].name)));
    }
  }
  for (const std::string& name : placeholders) {
    if (!declared.contains(name)) {
      Error(out,
            FieldError::Invalid(path, "${trialParameters." + name + "}",
                                fmt::format("parameters: {} in spec.trialTemplate not found in "
                                            "spec.trialParameters",
                                            name)));
    }
  }
}

void ValidateRenderedJob(const Experiment& experiment, const tune::Space& space,
                         const Json& document, const FieldPath& path, ValidationResult& out);

void ValidateTrialTemplate(const Experiment& experiment, const std::optional<tune::Space>& space,
                           ValidationResult& out) {
  const ExperimentSpec& spec = experiment.spec;
  if (!spec.trial_template) {
    Error(out, FieldError::Required(kTemplate, "must be specified"));
    return;
  }
  const TrialTemplate& t = *spec.trial_template;
  if (t.primary_container_name.empty()) {
    Error(out, FieldError::Required(kTemplate.Child("primaryContainerName"), "must be specified"));
  }
  if (t.success_condition.empty() || t.failure_condition.empty()) {
    Error(out, FieldError::Required(kTemplate,
                                    "successCondition and failureCondition must be specified"));
  }
  ValidateTrialParameters(spec, out);
  if (!ValidateSource(t, NamespaceOf(experiment), out) || t.trial_spec.is_null()) return;
  // The ConfigMap source is read when the experiment starts; its document is
  // checked then, by the same rules.
  FieldPath path = kTemplate.Child("trialSpec");
  // A trial's job has no collector of its own: the experiment's reads it.
  for (std::string_view key : {kJobMetricsAnnotation, kJobMetricsFilterAnnotation}) {
    if (!ObjectAt(t.trial_spec, {"metadata", "annotations"}).contains(std::string(key))) continue;
    out.warnings.push_back(fmt::format(
        "{}: not acted on: a trial's metrics are collected as spec.metricsCollectorSpec says",
        path.Child("metadata").Child("annotations").Key(key).ToString()));
  }
  size_t before = out.errors.size();
  ValidateTemplateDocument(spec, t.trial_spec, path, out);
  if (out.errors.size() == before && space) {
    ValidateRenderedJob(experiment, *space, t.trial_spec, path, out);
  }
}

}  // namespace trainyard::api::internal

namespace trainyard::api::internal {
namespace {

std::vector<std::string> ContainerNames(const Object& job) {
  std::vector<std::string> names;
  auto add = [&](const PodTemplateSpec& pod) {
    for (const Container& c : pod.spec.containers) names.push_back(c.name);
  };
  if (const auto* batch = std::get_if<BatchJob>(&job)) add(batch->spec.template_);
  if (const auto* training = std::get_if<TrainingJob>(&job)) {
    for (const auto& [type, replica] : training->spec.replica_specs) add(replica.template_);
  }
  return names;
}

}  // namespace

// Renders the template with each parameter's middle value and checks the
// result as the job it becomes, so a template error is reported now rather
// than when the first trial fails.
void ValidateRenderedJob(const Experiment& experiment, const tune::Space& space,
                         const Json& document, const FieldPath& path, ValidationResult& out) {
  std::map<std::string, std::string> sample;
  for (size_t i = 0; i < space.size(); ++i) {
    sample[space[i].name] = space.Format(i, space.FromUnit(i, 0.5));
  }
  const TrialTemplate& t = *experiment.spec.trial_template;
  std::string name = experiment.metadata.name.empty() ? "trial" : experiment.metadata.name;
  Result<Json> job =
      RenderTrialJob(document, t.trial_parameters, sample,
                     {.name = name + "-sample00", .namespace_ = experiment.metadata.namespace_});
  if (!job.ok()) {
    out.errors.push_back(FieldError::InvalidRendered(path, "", job.status().message()));
    return;
  }
  CheckedObject checked = DecodeAndValidate(*job);
  for (FieldError e : checked.result.errors) {
    e.path = path.Concat(e.path);
    for (FieldPath& place : e.belongs_at) place = path.Concat(place);
    out.errors.push_back(std::move(e));
  }
  if (!checked.object || t.primary_container_name.empty()) return;
  // A TrainJob's containers are its runtime's; its trainer's is `node`.
  const JobShape* shape = JobShapeOf(KindName(*checked.object));
  if (shape != nullptr && !shape->fixed_primary_container.empty()) {
    if (t.primary_container_name != shape->fixed_primary_container) {
      out.errors.push_back(FieldError::Invalid(
          kTemplate.Child("primaryContainerName"), t.primary_container_name,
          fmt::format("a {}'s trainer runs in its runtime's container {}: name that one",
                      KindName(*checked.object), shape->fixed_primary_container)));
    }
    return;
  }
  std::vector<std::string> containers = ContainerNames(*checked.object);
  if (std::find(containers.begin(), containers.end(), t.primary_container_name) ==
      containers.end()) {
    out.errors.push_back(FieldError::Invalid(
        kTemplate.Child("primaryContainerName"), t.primary_container_name,
        fmt::format("no container of spec.trialTemplate.trialSpec has this name; its containers "
                    "are: {}",
                    Join(containers, ", "))));
  }
}

}  // namespace trainyard::api::internal

namespace trainyard::api {

FieldErrors ValidateTrialTemplateDocument(const ExperimentSpec& spec, const Json& document) {
  ValidationResult out;
  internal::ValidateTemplateDocument(spec, document, internal::kTemplate.Child("configMap"), out);
  return out.errors;
}

}  // namespace trainyard::api
