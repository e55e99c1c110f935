// Katib's kubeflow.org/v1beta1 tuning objects: Experiment, Trial and
// Suggestion, every field upstream defines (Katib's CRDs keep unknown fields
// without checking them; trainyard models them all, so a typo is an error
// with a hint instead of a field silently ignored).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "api/meta.h"
#include "api/pod.h"
#include "api/reflect.h"
#include "api/well_known.h"
#include "common/status.h"

namespace trainyard::api {

inline constexpr std::string_view kKatibGroupVersion = "kubeflow.org/v1beta1";

struct FeasibleSpace {
  static constexpr bool kReflected = true;
  std::string max;
  std::string min;
  std::vector<std::string> list;
  std::string step;
  std::string distribution;  // uniform | logUniform | normal | logNormal
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("max", s.max);
    v("min", s.min);
    v("list", s.list);
    v("step", s.step);
    v("distribution", s.distribution);
  }
  bool operator==(const FeasibleSpace&) const = default;
};

struct ParameterSpec {
  static constexpr bool kReflected = true;
  std::string name;
  std::string parameter_type;  // int | double | categorical | discrete
  std::optional<FeasibleSpace> feasible_space;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("name", s.name);
    v("parameterType", s.parameter_type);
    v("feasibleSpace", s.feasible_space);
  }
  bool operator==(const ParameterSpec&) const = default;
};

struct MetricStrategy {
  static constexpr bool kReflected = true;
  std::string name;
  std::string value;  // min | max | latest
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("name", s.name);
    v("value", s.value);
  }
  bool operator==(const MetricStrategy&) const = default;
};

struct ObjectiveSpec {
  static constexpr bool kReflected = true;
  std::string type;  // minimize | maximize
  std::optional<double> goal;
  std::string objective_metric_name;
  std::vector<std::string> additional_metric_names;
  std::vector<MetricStrategy> metric_strategies;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("type", s.type);
    v("goal", s.goal);
    v("objectiveMetricName", s.objective_metric_name);
    v("additionalMetricNames", s.additional_metric_names);
    v("metricStrategies", s.metric_strategies);
  }
  bool operator==(const ObjectiveSpec&) const = default;
};

struct AlgorithmSetting {
  static constexpr bool kReflected = true;
  std::string name;
  std::string value;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("name", s.name);
    v("value", s.value);
  }
  bool operator==(const AlgorithmSetting&) const = default;
};

// AlgorithmSpec and EarlyStoppingSpec have the same shape upstream.
struct AlgorithmSpec {
  static constexpr bool kReflected = true;
  std::string algorithm_name;
  std::vector<AlgorithmSetting> algorithm_settings;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("algorithmName", s.algorithm_name);
    v("algorithmSettings", s.algorithm_settings);
  }
  bool operator==(const AlgorithmSpec&) const = default;
};

struct ConfigMapSource {
  static constexpr bool kReflected = true;
  std::string config_map_name;
  std::string config_map_namespace;
  std::string template_path;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("configMapName", s.config_map_name);
    v("configMapNamespace", s.config_map_namespace);
    v("templatePath", s.template_path);
  }
  bool operator==(const ConfigMapSource&) const = default;
};

struct TrialParameterSpec {
  static constexpr bool kReflected = true;
  std::string name;
  std::string description;
  std::string reference;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("name", s.name);
    v("description", s.description);
    v("reference", s.reference);
  }
  bool operator==(const TrialParameterSpec&) const = default;
};

struct TrialTemplate {
  static constexpr bool kReflected = true;
  std::optional<bool> retain;
  Json trial_spec;  // any Kubernetes object, unstructured as upstream
  std::optional<ConfigMapSource> config_map;
  std::vector<TrialParameterSpec> trial_parameters;
  std::map<std::string, std::string> primary_pod_labels;
  std::string primary_container_name;
  std::string success_condition;
  std::string failure_condition;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("retain", s.retain);
    v("trialSpec", s.trial_spec);
    v("configMap", s.config_map);
    v("trialParameters", s.trial_parameters);
    v("primaryPodLabels", s.primary_pod_labels);
    v("primaryContainerName", s.primary_container_name);
    v("successCondition", s.success_condition);
    v("failureCondition", s.failure_condition);
  }
  bool operator==(const TrialTemplate&) const = default;
};

struct FileSystemPath {
  static constexpr bool kReflected = true;
  std::string path;
  std::string kind;    // File | Directory
  std::string format;  // TEXT | JSON
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("path", s.path);
    v("kind", s.kind);
    v("format", s.format);
  }
  bool operator==(const FileSystemPath&) const = default;
};

struct MetricsFilter {
  static constexpr bool kReflected = true;
  std::vector<std::string> metrics_format;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("metricsFormat", s.metrics_format);
  }
  bool operator==(const MetricsFilter&) const = default;
};

struct MetricsSource {
  static constexpr bool kReflected = true;
  Json http_get;  // v1.HTTPGetAction
  std::optional<FileSystemPath> file_system_path;
  std::optional<MetricsFilter> filter;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("httpGet", s.http_get);
    v("fileSystemPath", s.file_system_path);
    v("filter", s.filter);
  }
  bool operator==(const MetricsSource&) const = default;
};

struct CollectorSpec {
  static constexpr bool kReflected = true;
  // StdOut | File | TensorFlowEvent | PrometheusMetric | Custom | Push
  std::string kind;
  std::optional<Container> custom_collector;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("kind", s.kind);
    v("customCollector", s.custom_collector);
  }
  bool operator==(const CollectorSpec&) const = default;
};

struct MetricsCollectorSpec {
  static constexpr bool kReflected = true;
  std::optional<MetricsSource> source;
  std::optional<CollectorSpec> collector;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("source", s.source);
    v("collector", s.collector);
  }
  bool operator==(const MetricsCollectorSpec&) const = default;
};

struct ExperimentSpec {
  static constexpr bool kReflected = true;
  std::vector<ParameterSpec> parameters;
  std::optional<ObjectiveSpec> objective;
  std::optional<AlgorithmSpec> algorithm;
  std::optional<AlgorithmSpec> early_stopping;
  std::optional<TrialTemplate> trial_template;
  std::optional<int32_t> parallel_trial_count;
  std::optional<int32_t> max_trial_count;
  std::optional<int32_t> max_failed_trial_count;
  std::optional<MetricsCollectorSpec> metrics_collector_spec;
  Json nas_config;            // NAS is not supported; kept to say so
  std::string resume_policy;  // Never | LongRunning | FromVolume
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("parameters", s.parameters);
    v("objective", s.objective);
    v("algorithm", s.algorithm);
    v("earlyStopping", s.early_stopping);
    v("trialTemplate", s.trial_template);
    v("parallelTrialCount", s.parallel_trial_count);
    v("maxTrialCount", s.max_trial_count);
    v("maxFailedTrialCount", s.max_failed_trial_count);
    v("metricsCollectorSpec", s.metrics_collector_spec);
    v("nasConfig", s.nas_config);
    v("resumePolicy", s.resume_policy);
  }
  bool operator==(const ExperimentSpec&) const = default;
};

// Experiment, Trial and Suggestion conditions share upstream's shape.
struct KatibCondition {
  static constexpr bool kReflected = true;
  std::string type;
  std::string status;
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
  bool operator==(const KatibCondition&) const = default;
};

struct ParameterAssignment {
  static constexpr bool kReflected = true;
  std::string name;
  std::string value;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("name", s.name);
    v("value", s.value);
  }
  bool operator==(const ParameterAssignment&) const = default;
};

struct Metric {
  static constexpr bool kReflected = true;
  std::string name;
  std::string min;
  std::string max;
  std::string latest;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("name", s.name);
    v("min", s.min);
    v("max", s.max);
    v("latest", s.latest);
  }
  bool operator==(const Metric&) const = default;
};

struct Observation {
  static constexpr bool kReflected = true;
  std::vector<Metric> metrics;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("metrics", s.metrics);
  }
  bool operator==(const Observation&) const = default;
};

struct OptimalTrial {
  static constexpr bool kReflected = true;
  std::string best_trial_name;
  std::vector<ParameterAssignment> parameter_assignments;
  std::optional<Observation> observation;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("bestTrialName", s.best_trial_name);
    v("parameterAssignments", s.parameter_assignments);
    v("observation", s.observation);
  }
  bool operator==(const OptimalTrial&) const = default;
};

struct ExperimentStatus {
  static constexpr bool kReflected = true;
  std::string start_time;
  std::string completion_time;
  std::string last_reconcile_time;
  std::vector<KatibCondition> conditions;
  std::optional<OptimalTrial> current_optimal_trial;
  std::vector<std::string> running_trial_list;
  std::vector<std::string> pending_trial_list;
  std::vector<std::string> failed_trial_list;
  std::vector<std::string> succeeded_trial_list;
  std::vector<std::string> killed_trial_list;
  std::vector<std::string> early_stopped_trial_list;
  std::vector<std::string> metrics_unavailable_trial_list;
  std::optional<int32_t> trials;
  std::optional<int32_t> trials_succeeded;
  std::optional<int32_t> trials_failed;
  std::optional<int32_t> trials_killed;
  std::optional<int32_t> trials_pending;
  std::optional<int32_t> trials_running;
  std::optional<int32_t> trials_early_stopped;
  std::optional<int32_t> trial_metrics_unavailable;
  // trainyard's, with several objectives (kParetoObjectivesAnnotation):
  // the succeeded trials no other beats in every objective.
  std::vector<OptimalTrial> pareto_front;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("startTime", s.start_time);
    v("completionTime", s.completion_time);
    v("lastReconcileTime", s.last_reconcile_time);
    v("conditions", s.conditions);
    v("currentOptimalTrial", s.current_optimal_trial);
    v("runningTrialList", s.running_trial_list);
    v("pendingTrialList", s.pending_trial_list);
    v("failedTrialList", s.failed_trial_list);
    v("succeededTrialList", s.succeeded_trial_list);
    v("killedTrialList", s.killed_trial_list);
    v("earlyStoppedTrialList", s.early_stopped_trial_list);
    v("metricsUnavailableTrialList", s.metrics_unavailable_trial_list);
    v("trials", s.trials);
    v("trialsSucceeded", s.trials_succeeded);
    v("trialsFailed", s.trials_failed);
    v("trialsKilled", s.trials_killed);
    v("trialsPending", s.trials_pending);
    v("trialsRunning", s.trials_running);
    v("trialsEarlyStopped", s.trials_early_stopped);
    v("trialMetricsUnavailable", s.trial_metrics_unavailable);
    v("paretoFront", s.pareto_front);
  }
  bool operator==(const ExperimentStatus&) const = default;
};

struct Experiment {
  static constexpr std::string_view kKind = "Experiment";
  static constexpr std::string_view kGroupVersion = kKatibGroupVersion;
  ObjectMeta metadata;
  ExperimentSpec spec;
  ExperimentStatus status;
  bool operator==(const Experiment&) const = default;
};

struct EarlyStoppingRule {
  static constexpr bool kReflected = true;
  std::string name;
  std::string value;
  std::string comparison;  // equal | less | greater
  int32_t start_step = 0;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("name", s.name);
    v("value", s.value);
    v("comparison", s.comparison);
    v("startStep", s.start_step);
  }
  bool operator==(const EarlyStoppingRule&) const = default;
};

struct TrialSpec {
  static constexpr bool kReflected = true;
  std::optional<ObjectiveSpec> objective;
  std::vector<ParameterAssignment> parameter_assignments;
  std::vector<EarlyStoppingRule> early_stopping_rules;
  Json run_spec;  // the job the trial runs, unstructured
  std::optional<bool> retain_run;
  std::optional<MetricsCollectorSpec> metrics_collector;
  std::map<std::string, std::string> primary_pod_labels;
  std::string primary_container_name;
  std::string success_condition;
  std::string failure_condition;
  std::map<std::string, std::string> labels;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("objective", s.objective);
    v("parameterAssignments", s.parameter_assignments);
    v("earlyStoppingRules", s.early_stopping_rules);
    v("runSpec", s.run_spec);
    v("retainRun", s.retain_run);
    v("metricsCollector", s.metrics_collector);
    v("primaryPodLabels", s.primary_pod_labels);
    v("primaryContainerName", s.primary_container_name);
    v("successCondition", s.success_condition);
    v("failureCondition", s.failure_condition);
    v("labels", s.labels);
  }
  bool operator==(const TrialSpec&) const = default;
};

struct TrialStatus {
  static constexpr bool kReflected = true;
  std::string start_time;
  std::string completion_time;
  std::string last_reconcile_time;
  std::vector<KatibCondition> conditions;
  std::optional<Observation> observation;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("startTime", s.start_time);
    v("completionTime", s.completion_time);
    v("lastReconcileTime", s.last_reconcile_time);
    v("conditions", s.conditions);
    v("observation", s.observation);
  }
  bool operator==(const TrialStatus&) const = default;
};

struct Trial {
  static constexpr std::string_view kKind = "Trial";
  static constexpr std::string_view kGroupVersion = kKatibGroupVersion;
  ObjectMeta metadata;
  TrialSpec spec;
  TrialStatus status;
  bool operator==(const Trial&) const = default;
};

struct SuggestionSpec {
  static constexpr bool kReflected = true;
  std::optional<AlgorithmSpec> algorithm;
  std::optional<AlgorithmSpec> early_stopping;
  int32_t requests = 0;
  std::string resume_policy;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("algorithm", s.algorithm);
    v("earlyStopping", s.early_stopping);
    v("requests", s.requests);
    v("resumePolicy", s.resume_policy);
  }
  bool operator==(const SuggestionSpec&) const = default;
};

struct TrialAssignment {
  static constexpr bool kReflected = true;
  std::string name;
  std::vector<ParameterAssignment> parameter_assignments;
  std::vector<EarlyStoppingRule> early_stopping_rules;
  std::map<std::string, std::string> labels;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("name", s.name);
    v("parameterAssignments", s.parameter_assignments);
    v("earlyStoppingRules", s.early_stopping_rules);
    v("labels", s.labels);
  }
  bool operator==(const TrialAssignment&) const = default;
};

struct SuggestionStatus {
  static constexpr bool kReflected = true;
  std::string start_time;
  std::string completion_time;
  std::string last_reconcile_time;
  std::vector<KatibCondition> conditions;
  std::optional<int32_t> suggestion_count;
  std::vector<TrialAssignment> suggestions;
  std::vector<AlgorithmSetting> algorithm_settings;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("startTime", s.start_time);
    v("completionTime", s.completion_time);
    v("lastReconcileTime", s.last_reconcile_time);
    v("conditions", s.conditions);
    v("suggestionCount", s.suggestion_count);
    v("suggestions", s.suggestions);
    v("algorithmSettings", s.algorithm_settings);
  }
  bool operator==(const SuggestionStatus&) const = default;
};

struct Suggestion {
  static constexpr std::string_view kKind = "Suggestion";
  static constexpr std::string_view kGroupVersion = kKatibGroupVersion;
  ObjectMeta metadata;
  SuggestionSpec spec;
  SuggestionStatus status;
  bool operator==(const Suggestion&) const = default;
};

// The condition of `type` in `conditions`, or null.
const KatibCondition* FindKatibCondition(const std::vector<KatibCondition>& conditions,
                                         std::string_view type);
// The last condition's type, as upstream's printer column `Type` shows it.
std::string_view LastConditionType(const std::vector<KatibCondition>& conditions);

// Whether the objective is maximised (anything but "maximize" minimises).
bool Maximizes(const ObjectiveSpec& objective);

// trainyard's multi-objective mode for a Katib Experiment, which Katib's API
// has no field for: this annotation names additional metrics that are
// objectives too, each with its direction ("params=minimize" or
// "params=minimize,latency=minimize"); each must be one of
// objective.additionalMetricNames. The experiment then searches for the
// Pareto front of its objective and these (status.paretoFront); its goal
// and currentOptimalTrial stay its own objective's. Katib's controller
// ignores the annotation: there it is a single-objective experiment.
inline constexpr std::string_view kParetoObjectivesAnnotation = "trainyard.dev/objectives";
inline constexpr size_t kMaxParetoObjectives = 3;

struct ParetoObjective {
  std::string metric;
  bool maximize = false;
};
// The experiment's objectives: its own first, then the annotation's; just
// its own without the annotation. What is wrong with the annotation goes
// to `problems` (and is left out).
std::vector<ParetoObjective> ParetoObjectivesOf(const Experiment& experiment,
                                                std::vector<std::string>* problems = nullptr);

// The trial's metrics collector kind: StdOut unless its spec names one.
std::string CollectorKindOf(const Trial& trial);
// The metrics a trial reports: the objective, then the additional ones.
std::vector<std::string> MetricNamesOf(const Trial& trial);

}  // namespace trainyard::api
