#include "controller/experiment_trials.h"

#include <fmt/format.h>

#include "api/json.h"
#include "api/katib_template.h"
#include "api/names.h"
#include "api/object.h"
#include "api/validation.h"
#include "api/yaml.h"
#include "common/strings.h"
#include "controller/katib_status.h"
#include "tune/pareto.h"

namespace trainyard::controller {

Result<api::Json> TrialTemplateDocument(const store::ObjectStore& store,
                                        const api::Experiment& experiment) {
  const api::TrialTemplate& t = *experiment.spec.trial_template;
  if (!t.config_map) return t.trial_spec;
  const api::ConfigMapSource& source = *t.config_map;
  // Admission refuses another namespace's ConfigMap; an experiment stored
  // before it did is never given one either.
  if (source.config_map_namespace != experiment.metadata.namespace_) {
    return FailedPreconditionError(
        fmt::format("spec.trialTemplate.configMap.configMapNamespace: must be the experiment's own "
                    "namespace, {:?}: put the ConfigMap there",
                    experiment.metadata.namespace_));
  }
  Result<api::Json> map =
      store.Get({"ConfigMap", source.config_map_namespace, source.config_map_name});
  if (!map.ok()) {
    return FailedPreconditionError(fmt::format(
        "unable to parse spec.trialTemplate: ConfigMap {}/{} not found: create it, then the "
        "experiment starts",
        source.config_map_namespace, source.config_map_name));
  }
  const api::Json& data = api::ObjectAt(*map, "data");
  auto entry = data.find(source.template_path);
  if (entry == data.end() || !entry->is_string()) {
    return FailedPreconditionError(
        fmt::format("unable to parse spec.trialTemplate: ConfigMap {}/{} has no entry {}",
                    source.config_map_namespace, source.config_map_name, source.template_path));
  }
  Result<std::vector<api::SourceDocument>> docs =
      api::ParseManifests(entry->get<std::string>(), source.template_path);
  if (!docs.ok() || docs->size() != 1) {
    return FailedPreconditionError(fmt::format(
        "unable to parse spec.trialTemplate: {} in ConfigMap {}/{} must hold one document{}",
        source.template_path, source.config_map_namespace, source.config_map_name,
        docs.ok() ? "" : ": " + docs.status().message()));
  }
  FieldErrors errors = api::ValidateTrialTemplateDocument(experiment.spec, (*docs)[0].value);
  if (!errors.empty()) {
    std::vector<std::string> lines;
    for (const FieldError& e : errors) lines.push_back(e.ToString());
    return FailedPreconditionError(Join(lines, "; "));
  }
  return (*docs)[0].value;
}

tune::SamplerOptions SamplerOptionsOf(const api::Experiment& experiment) {
  const api::ExperimentSpec& spec = experiment.spec;
  tune::SamplerOptions options{.algorithm = spec.algorithm->algorithm_name,
                               .max_trial_count = spec.max_trial_count,
                               .parallel_trial_count = spec.parallel_trial_count.value_or(3),
                               .default_seed = StableHash(experiment.metadata.uid)};
  for (const api::AlgorithmSetting& s : spec.algorithm->algorithm_settings) {
    options.settings.emplace_back(s.name, s.value);
  }
  return options;
}

namespace {

Result<tune::Point> PointOf(const tune::Space& space, const api::Trial& trial) {
  std::vector<std::string> values(space.size());
  for (size_t i = 0; i < space.size(); ++i) {
    bool found = false;
    for (const api::ParameterAssignment& a : trial.spec.parameter_assignments) {
      if (a.name == space[i].name) {
        values[i] = a.value;
        found = true;
      }
    }
    if (!found) {
      return InvalidArgumentError(fmt::format("trial {} has no value for parameter {}",
                                              trial.metadata.name, space[i].name));
    }
  }
  return space.Parse(values);
}

tune::TrialState StateOf(TrialPhase phase) {
  switch (phase) {
    case TrialPhase::kPending:
    case TrialPhase::kRunning:
      return tune::TrialState::kPending;
    case TrialPhase::kSucceeded:
      return tune::TrialState::kSucceeded;
    case TrialPhase::kEarlyStopped:
      return tune::TrialState::kEarlyStopped;
    default:
      return tune::TrialState::kFailed;
  }
}

}  // namespace

Result<std::vector<tune::TrialRecord>> TrialRecords(const tune::Space& space,
                                                    const api::Experiment& experiment,
                                                    const std::vector<api::Trial>& trials) {
  const api::ObjectiveSpec& objective = *experiment.spec.objective;
  std::vector<api::ParetoObjective> objectives = api::ParetoObjectivesOf(experiment);
  std::vector<tune::TrialRecord> records;
  std::vector<tune::Losses> told_losses;  // several objectives: each told trial's
  std::vector<size_t> told_at;
  for (const api::Trial& trial : trials) {
    tune::TrialRecord record{.name = trial.metadata.name};
    ASSIGN_OR_RETURN(record.point, PointOf(space, trial));
    record.labels = trial.spec.labels;
    record.state = StateOf(PhaseOf(trial));
    bool told = record.state == tune::TrialState::kSucceeded ||
                record.state == tune::TrialState::kEarlyStopped;
    std::optional<double> value = ObjectiveOf(objective, trial.status.observation);
    std::optional<std::vector<double>> losses =
        objectives.size() > 1 ? ParetoLossesOf(objective, objectives, trial.status.observation)
                              : std::nullopt;
    if (told && objectives.size() > 1 && losses) {
      told_losses.push_back(std::move(*losses));
      told_at.push_back(records.size());
    } else if (told && objectives.size() <= 1 && value) {
      record.loss = api::Maximizes(objective) ? -*value : *value;
    } else if (told) {
      record.state = tune::TrialState::kFailed;  // finished without a metric: never told
    }
    records.push_back(std::move(record));
  }
  // Several objectives: each told trial's Pareto rank is its loss, so the
  // sampler searches for the front (tune/pareto.h).
  std::vector<double> ranks = tune::ParetoRankLosses(told_losses);
  for (size_t k = 0; k < told_at.size(); ++k) records[told_at[k]].loss = ranks[k];
  return records;
}

Result<api::Trial> BuildTrial(const api::Experiment& experiment, const tune::Space& space,
                              const api::Json& template_document,
                              const tune::Suggestion& suggestion, int64_t index,
                              std::mt19937& random) {
  const api::ExperimentSpec& spec = experiment.spec;
  const api::TrialTemplate& t = *spec.trial_template;
  api::Trial trial;
  trial.metadata.name = experiment.metadata.name + "-" + api::RandomNameSuffix(random, 8);
  trial.metadata.namespace_ = experiment.metadata.namespace_;
  trial.metadata.labels = suggestion.labels;
  trial.metadata.labels[std::string(api::kExperimentLabel)] = experiment.metadata.name;
  trial.metadata.annotations[std::string(api::kTrialIndexAnnotation)] = std::to_string(index);
  trial.metadata.owner_references.push_back({.api_version = std::string(api::kKatibGroupVersion),
                                             .kind = "Experiment",
                                             .name = experiment.metadata.name,
                                             .uid = experiment.metadata.uid,
                                             .controller = true,
                                             .block_owner_deletion = true});
  std::map<std::string, std::string> values;
  std::vector<std::string> formatted = space.Format(suggestion.point);
  for (size_t i = 0; i < space.size(); ++i) {
    trial.spec.parameter_assignments.push_back({.name = space[i].name, .value = formatted[i]});
    values[space[i].name] = formatted[i];
  }
  ASSIGN_OR_RETURN(
      trial.spec.run_spec,
      api::RenderTrialJob(template_document, t.trial_parameters, values,
                          {.name = trial.metadata.name, .namespace_ = trial.metadata.namespace_}));
  trial.spec.objective = spec.objective;
  trial.spec.metrics_collector = spec.metrics_collector_spec;
  trial.spec.retain_run = t.retain;
  trial.spec.primary_pod_labels = t.primary_pod_labels;
  trial.spec.primary_container_name = t.primary_container_name;
  trial.spec.success_condition = t.success_condition;
  trial.spec.failure_condition = t.failure_condition;
  trial.spec.labels = suggestion.labels;
  return trial;
}

}  // namespace trainyard::controller
