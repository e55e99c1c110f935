// Kubeflow Trainer's OptimizationJob (trainer.kubeflow.org/v1alpha1, the
// CRD of v2.3's KEP): hyperparameter tuning whose trials are TrainJobs made
// from `trainJobTemplate`, each given its parameters as environment
// variables (KUBEFLOW_TRAINER_OPT_<NAME>), its objective read from the
// trial's status.trainerStatus.metrics. Kept as a CoreObject
// (api/core_object.h); run by controller/optimization_job_reconciler.h.
//
// Upstream's CRD is the contract: every object it admits is admitted here
// with the same defaults, and refused where its schema and CEL rules refuse,
// with their messages. trainyard's extensions, each refused by a strict
// upstream schema (so a manifest that uses one fails loudly there instead
// of running as something else):
//  - spec.searchAlgorithm.trainyard {algorithmName, algorithmSettings}:
//    any of trainyard's samplers (Katib's names: tpe, bayesianoptimization,
//    cmaes, sobol, hyperband, ...); upstream's CEL rule "exactly one of
//    [random grid]" refuses it after pruning;
//  - more than one objective (upstream: maxItems 1): the job searches for
//    the Pareto front and reports it in status.paretoFront;
//  - spec.earlyStopping (medianstop, as Katib's), which kubectl's strict
//    field validation refuses against upstream's CRD.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/core_object.h"
#include "api/jobset.h"
#include "api/katib.h"
#include "api/reflect.h"
#include "api/registry.h"
#include "api/trainer.h"

namespace trainyard::api {

// Upstream's bounds: one objective (trainyard: kMaxObjectives), 100
// parameters, 100 choices, 100 trials; names and values of 64 characters.
inline constexpr size_t kMaxObjectives = 3;
inline constexpr int32_t kMaxOptimizationTrials = 100;
// What a trial's parameter is given as: KUBEFLOW_TRAINER_OPT_LEARNING_RATE.
inline constexpr std::string_view kOptimizationEnvPrefix = "KUBEFLOW_TRAINER_OPT_";

// What marks a trial (a TrainJob): its OptimizationJob, its place in
// creation order, and its parameters as a JSON object of strings.
inline constexpr std::string_view kOptimizationJobLabel = "trainyard.dev/optimization-job";
inline constexpr std::string_view kOptimizationTrialIndexLabel = "trainyard.dev/trial-index";
inline constexpr std::string_view kOptimizationParametersAnnotation =
    "trainyard.dev/trial-parameters";
// A trial its job stopped early (it is suspended: its pods are gone).
inline constexpr std::string_view kOptimizationEarlyStoppedAnnotation =
    "trainyard.dev/early-stopped";

struct OptimizationObjective {
  static constexpr bool kReflected = true;
  std::string metric;
  std::string direction;  // Maximize or Minimize (the default)
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("metric", s.metric);
    v("direction", s.direction);
  }
};

// uniform and logUniform: bounds as strings (a decimal number), and
// whether values are Int or Float (the default).
struct BoundedSearchSpace {
  static constexpr bool kReflected = true;
  std::string min;
  std::string max;
  std::string type;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("min", s.min);
    v("max", s.max);
    v("type", s.type);
  }
};

struct CategoricalSearchSpace {
  static constexpr bool kReflected = true;
  std::vector<std::string> choices;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("choices", s.choices);
  }
};

// Exactly one of the three.
struct OptimizationSearchSpace {
  static constexpr bool kReflected = true;
  std::optional<BoundedSearchSpace> uniform;
  std::optional<BoundedSearchSpace> log_uniform;
  std::optional<CategoricalSearchSpace> categorical;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("uniform", s.uniform);
    v("logUniform", s.log_uniform);
    v("categorical", s.categorical);
  }
};

struct OptimizationParameter {
  static constexpr bool kReflected = true;
  std::string name;
  OptimizationSearchSpace search_space;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("name", s.name);
    v("searchSpace", s.search_space);
  }
};

struct RandomSearch {
  static constexpr bool kReflected = true;
  std::optional<int64_t> seed;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("seed", s.seed);
  }
};

// trainyard's extension: one of its samplers, by Katib's algorithm name,
// with Katib's settings.
struct TrainyardSearch {
  static constexpr bool kReflected = true;
  std::string algorithm_name;
  std::vector<AlgorithmSetting> algorithm_settings;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("algorithmName", s.algorithm_name);
    v("algorithmSettings", s.algorithm_settings);
  }
};

// Exactly one of random (the default), grid, or trainyard's.
struct SearchAlgorithm {
  static constexpr bool kReflected = true;
  std::optional<RandomSearch> random;
  Json grid;  // an empty object when chosen
  std::optional<TrainyardSearch> trainyard;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("random", s.random);
    v("grid", s.grid);
    v("trainyard", s.trainyard);
  }
};

struct TrainJobTemplate {
  static constexpr bool kReflected = true;
  EmbeddedMeta metadata;  // labels, annotations, finalizers: not name or namespace
  TrainJobSpec spec;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("metadata", s.metadata);
    v("spec", s.spec);
  }
};

struct OptimizationJobSpec {
  static constexpr bool kReflected = true;
  std::vector<OptimizationObjective> objectives;
  std::optional<SearchAlgorithm> search_algorithm;
  std::vector<OptimizationParameter> parameters;
  std::optional<int32_t> num_trials;
  std::optional<int32_t> parallel_trials;
  TrainJobTemplate train_job_template;
  // trainyard's extension (upstream's CRD has none yet): Katib's
  // medianstop on the first objective, from the values each trial prints
  // as it runs; a trial it stops is suspended and counts as early stopped.
  std::optional<AlgorithmSpec> early_stopping;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("objectives", s.objectives);
    v("searchAlgorithm", s.search_algorithm);
    v("parameters", s.parameters);
    v("numTrials", s.num_trials);
    v("parallelTrials", s.parallel_trials);
    v("trainJobTemplate", s.train_job_template);
    v("earlyStopping", s.early_stopping);
  }
};

// A parameter's value, or a metric's, as upstream's status writes them:
// Katib's {name, value}.
using NamedValue = ParameterAssignment;

// A trial: upstream's result{trainJobName, parameters}, with trainyard's
// `metrics` (the objectives' values it reached).
struct OptimizationTrialResult {
  static constexpr bool kReflected = true;
  std::string train_job_name;
  std::vector<NamedValue> parameters;
  std::vector<NamedValue> metrics;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("trainJobName", s.train_job_name);
    v("parameters", s.parameters);
    v("metrics", s.metrics);
  }
  bool operator==(const OptimizationTrialResult&) const = default;
};

// trainyard's: how many trials there are, by state.
struct OptimizationTrialCounts {
  static constexpr bool kReflected = true;
  int32_t created = 0;
  int32_t running = 0;
  int32_t succeeded = 0;
  int32_t failed = 0;
  int32_t early_stopped = 0;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("created", s.created);
    v("running", s.running);
    v("succeeded", s.succeeded);
    v("failed", s.failed);
    v("earlyStopped", s.early_stopped);
  }
  bool operator==(const OptimizationTrialCounts&) const = default;
};

struct OptimizationJobStatus {
  static constexpr bool kReflected = true;
  std::vector<MetaCondition> conditions;  // Created, Complete, Failed
  // The best trial so far (several objectives: the front's best in the
  // first), kept up to date as trials end.
  std::optional<OptimizationTrialResult> result;
  std::optional<OptimizationTrialCounts> trial_counts;
  // Several objectives: the trials no other beats in every objective.
  std::vector<OptimizationTrialResult> pareto_front;
  // Every trial that reported its objectives, in creation order (at most
  // numTrials, 100): what each reached, pushed or printed (its parameters
  // are its TrainJob's annotation).
  std::vector<OptimizationTrialResult> trial_results;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("conditions", s.conditions);
    v("result", s.result);
    v("trialCounts", s.trial_counts);
    v("paretoFront", s.pareto_front);
    v("trialResults", s.trial_results);
  }
  bool operator==(const OptimizationJobStatus&) const = default;
};

struct OptimizationJobFields {
  static constexpr bool kReflected = true;
  OptimizationJobSpec spec;
  OptimizationJobStatus status;  // written by its controller alone
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("spec", s.spec);
    v("status", s.status);
  }
};

ObjectHooks OptimizationJobHooks();

// The typed fields of a decoded OptimizationJob.
OptimizationJobFields OptimizationJobFieldsOf(const CoreObject& job);

// The environment variable a parameter is given as: the prefix, then the
// name upper-cased with every character that is no letter or digit made
// '_' ("learning-rate" -> KUBEFLOW_TRAINER_OPT_LEARNING_RATE).
std::string OptimizationEnvName(std::string_view parameter);

}  // namespace trainyard::api
