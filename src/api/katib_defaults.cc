// Katib's Experiment defaults (its mutating webhook's SetDefault()).
#include <string>

#include "api/defaults.h"
#include "api/kinds.h"
#include "api/registry.h"
#include "api/well_known.h"

namespace trainyard::api {
namespace {

constexpr int32_t kDefaultParallelTrialCount = 3;
constexpr std::string_view kDefaultMetricsFile = "/var/log/katib/metrics.log";
constexpr std::string_view kDefaultTfEventDir = "/var/log/katib/tfevent/";

// GJSON expressions on the job's status, as upstream's constants.
std::string ConditionIs(std::string_view type, std::string_view status) {
  return "status.conditions.#(type==\"" + std::string(type) + "\")#|#(status==\"" +
         std::string(status) + "\")#";
}

void DefaultObjective(ObjectiveSpec& objective) {
  // Upstream's comment says additional metrics default to "latest"; its code
  // gives every metric min or max by the objective's type, and so does this.
  std::string strategy = objective.type == "minimize"   ? "min"
                         : objective.type == "maximize" ? "max"
                                                        : "latest";
  auto ensure = [&](const std::string& name) {
    for (const MetricStrategy& s : objective.metric_strategies) {
      if (s.name == name) return;
    }
    objective.metric_strategies.push_back({.name = name, .value = strategy});
  };
  if (!objective.objective_metric_name.empty()) ensure(objective.objective_metric_name);
  for (const std::string& name : objective.additional_metric_names) ensure(name);
}

void DefaultMetricsCollector(std::optional<MetricsCollectorSpec>& spec) {
  if (!spec) spec.emplace();
  if (!spec->collector) spec->collector = CollectorSpec{.kind = "StdOut"};
  const std::string& kind = spec->collector->kind;
  if (kind == "File" || kind == "TensorFlowEvent") {
    if (!spec->source) spec->source.emplace();
    if (!spec->source->file_system_path) spec->source->file_system_path.emplace();
    FileSystemPath& path = *spec->source->file_system_path;
    bool file = kind == "File";
    if (path.kind.empty()) path.kind = file ? "File" : "Directory";
    if (path.path.empty()) path.path = file ? kDefaultMetricsFile : kDefaultTfEventDir;
    if (file && path.format.empty()) path.format = "TEXT";
  } else if (kind == "PrometheusMetric") {
    if (!spec->source) spec->source.emplace();
    if (spec->source->http_get.is_null()) spec->source->http_get = Json::object();
    Json& get = spec->source->http_get;
    if (!get.contains("path")) get["path"] = "/metrics";
    if (!get.contains("port")) get["port"] = 8080;
  }
}

void DefaultTrialTemplate(TrialTemplate& t) {
  if (!t.trial_spec.is_object()) return;
  auto kind_it = t.trial_spec.find("kind");
  if (kind_it == t.trial_spec.end() || !kind_it->is_string()) return;
  const JobShape* shape = JobShapeOf(kind_it->get<std::string>());
  // Argo, Tekton, ...: the user states the conditions.
  if (shape == nullptr || shape->trial_success_condition.empty()) return;
  if (t.success_condition.empty()) {
    t.success_condition = ConditionIs(shape->trial_success_condition, "True");
  }
  if (t.failure_condition.empty()) t.failure_condition = ConditionIs("Failed", "True");
  if (t.primary_pod_labels.empty()) t.primary_pod_labels = shape->trial_primary_pod_labels;
}

}  // namespace

void SetDefaults(Experiment& experiment) {
  ExperimentSpec& spec = experiment.spec;
  if (!spec.parallel_trial_count) spec.parallel_trial_count = kDefaultParallelTrialCount;
  // The type's comment says LongRunning; upstream's code (and this) says Never.
  if (spec.resume_policy.empty()) spec.resume_policy = "Never";
  if (spec.objective) DefaultObjective(*spec.objective);
  DefaultMetricsCollector(spec.metrics_collector_spec);
  if (spec.trial_template) DefaultTrialTemplate(*spec.trial_template);
  for (ParameterSpec& p : spec.parameters) {
    if (p.feasible_space && p.feasible_space->distribution.empty()) {
      p.feasible_space->distribution = "uniform";
    }
  }
}

}  // namespace trainyard::api
