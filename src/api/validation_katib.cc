// Katib's Experiment webhook rules (validator.go), with upstream's messages,
// and the checks it leaves to later stages done here, at admission: bounds
// that parse, algorithm and early-stopping settings, a trial template that
// renders into a job trainyard can run, and metric filters that compile.
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <regex>
#include <set>

#include "api/katib_space.h"
#include "api/katib_template.h"
#include "api/kinds.h"
#include "api/validation_internal.h"
#include "common/strings.h"
#include "tune/median_stop.h"
#include "tune/metrics.h"
#include "tune/sampler.h"

namespace trainyard::api::internal {
namespace {

const FieldPath kSpec("spec");

void ValidateExperimentName(const ObjectMeta& meta, ValidationResult& out) {
  // Upstream leaves the pattern open at the end (its defect); anchored here.
  static const std::regex kName("^[a-z]([-a-z0-9]*[a-z0-9])?$");
  if (meta.name.empty()) return;
  if (!std::regex_match(meta.name, kName) || meta.name.size() > 40) {
    Error(out, FieldError::Invalid(
                   FieldPath("metadata").Child("name"), meta.name,
                   "name must consist of lower case alphanumeric characters or '-', start with an "
                   "alphabetic character, and end with an alphanumeric character (e.g. 'my-name', "
                   "or 'abc-123', regex used for validation is '^[a-z]([-a-z0-9]*[a-z0-9])?)') "
                   "and may not be longer than 40 characters"));
  }
}

void ValidateCounts(const ExperimentSpec& spec, ValidationResult& out) {
  if (spec.max_failed_trial_count && *spec.max_failed_trial_count < 0) {
    Error(out, FieldError::Invalid(kSpec.Child("maxFailedTrialCount"), *spec.max_failed_trial_count,
                                   "should not be less than 0"));
  }
  if (spec.max_trial_count && *spec.max_trial_count <= 0) {
    Error(out, FieldError::Invalid(kSpec.Child("maxTrialCount"), *spec.max_trial_count,
                                   "must be greater than 0"));
  }
  if (spec.parallel_trial_count && *spec.parallel_trial_count <= 0) {
    Error(out, FieldError::Invalid(kSpec.Child("parallelTrialCount"), *spec.parallel_trial_count,
                                   "must be greater than 0"));
  }
  if (!spec.max_trial_count) return;
  if (spec.max_failed_trial_count && *spec.max_failed_trial_count > *spec.max_trial_count) {
    Error(out, FieldError::Invalid(kSpec.Child("maxFailedTrialCount"), *spec.max_failed_trial_count,
                                   "should be less than or equal to spec.maxTrialCount"));
  }
  if (spec.parallel_trial_count && *spec.parallel_trial_count > *spec.max_trial_count) {
    Error(out, FieldError::Invalid(kSpec.Child("parallelTrialCount"), *spec.parallel_trial_count,
                                   "should be less than or equal to spec.maxTrialCount"));
  }
}

void ValidateObjective(const ExperimentSpec& spec, ValidationResult& out) {
  FieldPath path = kSpec.Child("objective");
  if (!spec.objective) {
    Error(out, FieldError::Required(path, "must be specified"));
    return;
  }
  const ObjectiveSpec& o = *spec.objective;
  if (o.type != "minimize" && o.type != "maximize") {
    Error(out, FieldError::Invalid(path.Child("type"), o.type, "must be minimize or maximize"));
  }
  if (o.objective_metric_name.empty()) {
    Error(out, FieldError::Required(path.Child("objectiveMetricName"), "must be specified"));
  }
  if (std::count(o.additional_metric_names.begin(), o.additional_metric_names.end(),
                 o.objective_metric_name) > 0) {
    Error(out, FieldError::Invalid(path.Child("additionalMetricNames"), o.objective_metric_name,
                                   "should not contain spec.objective.objectiveMetricName"));
  }
  for (size_t i = 0; i < o.metric_strategies.size(); ++i) {
    const std::string& value = o.metric_strategies[i].value;
    if (value != "min" && value != "max" && value != "latest") {
      Error(out, FieldError::NotSupported(path.Child("metricStrategies").Index(i).Child("value"),
                                          value, {"min", "max", "latest"}));
    }
  }
}

// The index of the setting an algorithm's error is about, by the form
// tune::SettingsReader gives its errors ("<name> must be ...", "unknown
// setting <name> ..."); nullopt when it is about no one setting (a
// required one missing, a grid too small).
std::optional<size_t> SettingOfError(const tune::Settings& settings, std::string_view message) {
  for (size_t i = 0; i < settings.size(); ++i) {
    const std::string& name = settings[i].first;
    if (message.starts_with(name + " must be ") ||
        message.starts_with("unknown setting " + name + " ")) {
      return i;
    }
  }
  return std::nullopt;
}

// Checks algorithm settings with `check` (what the algorithm itself
// accepts), reporting every bad setting at its own index: an error about
// one setting is reported there, that setting is left out (its default
// stands in), and the rest are checked again, until they pass or an error
// is about no one setting, which is reported at the list.
void CheckSettings(const std::vector<AlgorithmSetting>& settings, const FieldPath& path,
                   const std::function<Status(tune::Settings)>& check, ValidationResult& out) {
  FieldPath list = path.Child("algorithmSettings");
  tune::Settings remaining;
  std::vector<size_t> index;  // remaining[k] is settings[index[k]]
  for (size_t i = 0; i < settings.size(); ++i) {
    remaining.emplace_back(settings[i].name, settings[i].value);
    index.push_back(i);
  }
  std::map<size_t, FieldError> found;  // by index, reported in order
  std::optional<FieldError> overall;
  while (true) {
    Status status = check(remaining);
    if (status.ok()) break;
    std::optional<size_t> bad = SettingOfError(remaining, status.message());
    if (!bad) {
      overall = FieldError::InvalidRendered(list, "", status.message());
      break;
    }
    bool unknown = status.message().starts_with("unknown setting ");
    size_t i = index[*bad];
    FieldPath at = list.Index(static_cast<int64_t>(i)).Child(unknown ? "name" : "value");
    found.emplace(i, FieldError::Invalid(at, unknown ? settings[i].name : settings[i].value,
                                         status.message()));
    remaining.erase(remaining.begin() + static_cast<ptrdiff_t>(*bad));
    index.erase(index.begin() + static_cast<ptrdiff_t>(*bad));
  }
  for (auto& [i, e] : found) Error(out, std::move(e));
  if (overall) Error(out, std::move(*overall));
}

bool IsNotSupportedAlgorithm(std::string_view name) { return name == "enas" || name == "darts"; }

void ValidateAlgorithm(const ExperimentSpec& spec, const std::optional<tune::Space>& space,
                       ValidationResult& out) {
  FieldPath path = kSpec.Child("algorithm");
  if (!spec.algorithm || spec.algorithm->algorithm_name.empty()) {
    Error(out, FieldError::Required(path.Child("algorithmName"), "must be specified"));
    return;
  }
  const std::string& name = spec.algorithm->algorithm_name;
  if (IsNotSupportedAlgorithm(name)) {
    Error(out, FieldError::Invalid(path.Child("algorithmName"), name,
                                   fmt::format("algorithm {} is not supported by trainyard "
                                               "(it runs no neural architecture search); use one "
                                               "of: {}",
                                               name, Join(tune::SamplerNames(), ", "))));
    return;
  }
  const std::vector<std::string>& known = tune::SamplerNames();
  if (std::find(known.begin(), known.end(), name) == known.end()) {
    Error(out, FieldError::Invalid(
                   path.Child("algorithmName"), name,
                   fmt::format("unable to get Suggestion config data for algorithm {}: trainyard "
                               "knows {}",
                               name, Join(known, ", "))));
    return;
  }
  if (!space) return;  // the parameters' own errors come first
  auto check = [&](tune::Settings settings) {
    return tune::MakeSampler(*space,
                             {.algorithm = name,
                              .settings = std::move(settings),
                              .max_trial_count = spec.max_trial_count,
                              .parallel_trial_count = spec.parallel_trial_count.value_or(3)})
        .status();
  };
  CheckSettings(spec.algorithm->algorithm_settings, path, check, out);
}

void ValidateEarlyStopping(const ExperimentSpec& spec, ValidationResult& out) {
  if (!spec.early_stopping) return;
  FieldPath path = kSpec.Child("earlyStopping");
  const std::string& name = spec.early_stopping->algorithm_name;
  if (name.empty()) {
    Error(out, FieldError::Required(path.Child("algorithmName"), "must be specified"));
    return;
  }
  if (name != "medianstop") {
    Error(out, FieldError::Invalid(
                   path.Child("algorithmName"), name,
                   fmt::format("unable to get EarlyStopping config data for algorithm {}: "
                               "trainyard knows medianstop",
                               name)));
    return;
  }
  CheckSettings(
      spec.early_stopping->algorithm_settings, path,
      [](tune::Settings settings) { return tune::ParseMedianStopSettings(settings).status(); },
      out);
}

void ValidateResumePolicy(const ExperimentSpec& spec, ValidationResult& out) {
  const std::string& p = spec.resume_policy;
  if (!p.empty() && p != "Never" && p != "LongRunning" && p != "FromVolume") {
    Error(out, FieldError::Invalid(kSpec.Child("resumePolicy"), p, "invalid ResumePolicyType"));
  }
}

// Upstream's structural checks on one parameter; true when it is sound
// enough to build a search space from.
bool ValidateParameter(const ParameterSpec& p, const FieldPath& path, ValidationResult& out) {
  size_t before = out.errors.size();
  const std::string& type = p.parameter_type;
  bool numeric = type == "int" || type == "double";
  if (!numeric && type != "categorical" && type != "discrete") {
    Error(out, FieldError::Invalid(path.Child("parameterType"), type,
                                   fmt::format("parameterType: {} is not supported", type)));
  }
  if (!p.feasible_space) {
    Error(out,
          FieldError::Required(path.Child("feasibleSpace"), "feasibleSpace must be specified"));
    return false;
  }
  const FeasibleSpace& fs = *p.feasible_space;
  const std::string& d = fs.distribution;
  if (!d.empty() && d != "uniform" && d != "logUniform" && d != "normal" && d != "logNormal") {
    Error(out, FieldError::Invalid(path.Child("feasibleSpace").Child("distribution"), d,
                                   fmt::format("distribution: {} is not supported", d)));
  }
  if (numeric && !fs.list.empty()) {
    Error(out, FieldError::Invalid(
                   path.Child("feasibleSpace").Child("list"), Join(fs.list, ","),
                   fmt::format("feasibleSpace.list is not supported for parameterType: {}", type)));
  }
  if (numeric && (fs.min.empty() || fs.max.empty())) {
    Error(out, FieldError::Required(
                   path.Child("feasibleSpace"),
                   fmt::format("feasibleSpace.max or feasibleSpace.min must be specified for "
                               "parameterType: {}",
                               type)));
  }
  if (!numeric && (!fs.min.empty() || !fs.max.empty() || !fs.step.empty())) {
    Error(out,
          FieldError::Invalid(path.Child("feasibleSpace"), "",
                              fmt::format("feasibleSpace .max, .min and .step is not supported for "
                                          "parameterType: {}",
                                          type)));
  }
  return out.errors.size() == before;
}

// The search space, when the parameters are sound; its own errors (bounds
// that do not parse, min above max) are reported at spec.parameters.
std::optional<tune::Space> ValidateParameters(const ExperimentSpec& spec, ValidationResult& out) {
  if (spec.parameters.empty() && spec.nas_config.is_null()) {
    Error(out, FieldError::Required(kSpec.Child("parameters"),
                                    "spec.parameters or spec.nasConfig must be specified"));
    return std::nullopt;
  }
  if (!spec.nas_config.is_null()) {
    Error(out, FieldError::Invalid(
                   kSpec.Child("nasConfig"), "",
                   spec.parameters.empty()
                       ? "neural architecture search is not supported by trainyard"
                       : "only one of spec.parameters and spec.nasConfig can be specified"));
    return std::nullopt;
  }
  bool sound = true;
  for (size_t i = 0; i < spec.parameters.size(); ++i) {
    sound &= ValidateParameter(spec.parameters[i], kSpec.Child("parameters").Index(i), out);
  }
  if (!sound) return std::nullopt;
  Result<tune::Space> space = SearchSpaceOf(spec.parameters);
  if (!space.ok()) {
    Error(out,
          FieldError::InvalidRendered(kSpec.Child("parameters"), "", space.status().message()));
    return std::nullopt;
  }
  return *std::move(space);
}

}  // namespace

void ValidateTrialTemplate(const Experiment& experiment, const std::optional<tune::Space>& space,
                           ValidationResult& out);
void ValidateMetricsCollector(const ExperimentSpec& spec, ValidationResult& out);

void ValidateExperiment(const Experiment& experiment, ValidationResult& out) {
  const ExperimentSpec& spec = experiment.spec;
  ValidateExperimentName(experiment.metadata, out);
  ValidateCounts(spec, out);
  ValidateResumePolicy(spec, out);
  ValidateObjective(spec, out);
  std::optional<tune::Space> space = ValidateParameters(spec, out);
  ValidateAlgorithm(spec, space, out);
  ValidateEarlyStopping(spec, out);
  ValidateTrialTemplate(experiment, space, out);
  ValidateMetricsCollector(spec, out);
  std::vector<std::string> problems;
  ParetoObjectivesOf(experiment, &problems);
  for (const std::string& p : problems) {
    Error(out,
          FieldError::Invalid(
              FieldPath("metadata").Child("annotations").Key(kParetoObjectivesAnnotation),
              experiment.metadata.annotations.at(std::string(kParetoObjectivesAnnotation)), p));
  }
}

}  // namespace trainyard::api::internal

namespace trainyard::api::internal {

// Trials and Suggestions are written by the experiment controller; a user
// who writes one gets the checks that keep the controller sound.
void ValidateTrial(const Trial& trial, ValidationResult& out) {
  if (!trial.spec.run_spec.is_object()) {
    Error(out, FieldError::Required(kSpec.Child("runSpec"), "the job the trial runs"));
  }
  for (size_t i = 0; i < trial.spec.parameter_assignments.size(); ++i) {
    if (trial.spec.parameter_assignments[i].name.empty()) {
      Error(out, FieldError::Required(kSpec.Child("parameterAssignments").Index(i).Child("name")));
    }
  }
}

namespace {

bool ConditionTrue(const ExperimentStatus& status, std::string_view type) {
  const KatibCondition* c = FindKatibCondition(status.conditions, type);
  return c != nullptr && c->status == "True";
}

}  // namespace

void ValidateExperimentUpdate(const Experiment& old_experiment, const Experiment& new_experiment,
                              FieldErrors& errors) {
  ExperimentSpec old_spec = old_experiment.spec;
  ExperimentSpec new_spec = new_experiment.spec;
  if (old_spec == new_spec) return;
  for (ExperimentSpec* spec : {&old_spec, &new_spec}) {
    spec->parallel_trial_count.reset();
    spec->max_trial_count.reset();
    spec->max_failed_trial_count.reset();
  }
  if (old_spec != new_spec) {
    errors.push_back(FieldError::Forbidden(
        kSpec,
        "only spec.parallelTrialCount, spec.maxTrialCount and spec.maxFailedTrialCount "
        "are editable"));
    return;
  }
  const ExperimentStatus& status = old_experiment.status;
  bool completed = ConditionTrue(status, "Succeeded") || ConditionTrue(status, "Failed");
  const KatibCondition* succeeded = FindKatibCondition(status.conditions, "Succeeded");
  bool restartable = succeeded != nullptr && succeeded->status == "True" &&
                     succeeded->reason == "ExperimentMaxTrialsReached" &&
                     (new_experiment.spec.resume_policy == "LongRunning" ||
                      new_experiment.spec.resume_policy == "FromVolume");
  if (completed && !restartable) {
    errors.push_back(FieldError::Forbidden(
        kSpec,
        "Experiment can be restarted if it is in succeeded state by reaching max trials "
        "and spec.resumePolicy = LongRunning or spec.resumePolicy = FromVolume, when "
        "experiment is completed"));
    return;
  }
  const std::optional<int32_t>& max = new_experiment.spec.max_trial_count;
  if (completed && max && status.trials && *max <= *status.trials) {
    errors.push_back(FieldError::Invalid(kSpec.Child("maxTrialCount"), *max,
                                         "must be greater than status.trials count"));
  }
}

void ValidateSuggestion(const Suggestion& suggestion, ValidationResult& out) {
  if (suggestion.spec.requests < 0) {
    Error(out, FieldError::Invalid(kSpec.Child("requests"), suggestion.spec.requests,
                                   "must be greater than or equal to 0"));
  }
}

}  // namespace trainyard::api::internal
