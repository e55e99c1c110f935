#include "cli/describe_katib.h"

#include <fmt/format.h>

#include "api/object.h"
#include "common/strings.h"
#include "controller/katib_status.h"

namespace trainyard::cli {
namespace {

std::string Settings(const api::AlgorithmSpec& spec) {
  std::vector<std::string> parts;
  for (const api::AlgorithmSetting& s : spec.algorithm_settings) {
    parts.push_back(s.name + "=" + s.value);
  }
  return parts.empty() ? spec.algorithm_name
                       : fmt::format("{} ({})", spec.algorithm_name, Join(parts, ", "));
}

void PrintAssignments(const std::vector<api::ParameterAssignment>& assignments, std::ostream& out) {
  for (const api::ParameterAssignment& a : assignments) {
    out << fmt::format("  {} = {}\n", a.name, a.value);
  }
}

void PrintObservation(const std::optional<api::Observation>& observation, std::ostream& out) {
  if (!observation) return;
  for (const api::Metric& m : observation->metrics) {
    out << fmt::format("  {}: min {}, max {}, latest {}\n", m.name, m.min, m.max, m.latest);
  }
}

void PrintConditions(const std::vector<api::KatibCondition>& conditions, std::ostream& out) {
  if (conditions.empty()) return;
  out << "Conditions:\n";
  for (const api::KatibCondition& c : conditions) {
    out << fmt::format("  {:<18} {:<6} {}: {}\n", c.type, c.status, c.reason, c.message);
  }
}

void PrintExperiment(const api::Experiment& e, std::ostream& out) {
  const api::ExperimentSpec& spec = e.spec;
  if (spec.objective) {
    out << fmt::format(
        "Objective:  {} {}{}\n", spec.objective->type, spec.objective->objective_metric_name,
        spec.objective->goal ? fmt::format(" (goal {})", *spec.objective->goal) : "");
  }
  if (spec.algorithm) out << fmt::format("Algorithm:  {}\n", Settings(*spec.algorithm));
  if (spec.early_stopping) {
    out << fmt::format("Early stop: {}\n", Settings(*spec.early_stopping));
  }
  const api::ExperimentStatus& s = e.status;
  out << fmt::format(
      "Trials:     {} of {} ({} succeeded, {} early stopped, {} failed, {} killed, {} without "
      "metrics, {} running, {} pending; {} at a time)\n",
      s.trials.value_or(0),
      spec.max_trial_count ? std::to_string(*spec.max_trial_count) : std::string("unlimited"),
      s.trials_succeeded.value_or(0), s.trials_early_stopped.value_or(0),
      s.trials_failed.value_or(0), s.trials_killed.value_or(0),
      s.trial_metrics_unavailable.value_or(0), s.trials_running.value_or(0),
      s.trials_pending.value_or(0), spec.parallel_trial_count.value_or(3));
  if (s.current_optimal_trial) {
    out << fmt::format("Best trial: {}\n", s.current_optimal_trial->best_trial_name);
    PrintAssignments(s.current_optimal_trial->parameter_assignments, out);
    PrintObservation(s.current_optimal_trial->observation, out);
  }
  PrintConditions(s.conditions, out);
}

void PrintTrial(const api::Trial& t, std::ostream& out) {
  out << "Parameters:\n";
  PrintAssignments(t.spec.parameter_assignments, out);
  if (t.status.observation) {
    out << "Observation:\n";
    PrintObservation(t.status.observation, out);
  }
  PrintConditions(t.status.conditions, out);
}

}  // namespace

void PrintKatibDescription(const api::Json& object, std::ostream& out) {
  api::DecodeResult decoded = api::DecodeObject(object);
  if (!decoded.object) return;
  if (const auto* e = std::get_if<api::Experiment>(&*decoded.object)) PrintExperiment(*e, out);
  if (const auto* t = std::get_if<api::Trial>(&*decoded.object)) PrintTrial(*t, out);
}

void PrintObservationLog(const api::Json& log, size_t limit, std::ostream& out) {
  const api::Json rows = api::ArrayAt(log, "metricLogs");
  if (rows.empty()) {
    out << "Metrics: <none>\n";
    return;
  }
  out << "Metrics:\n";
  size_t first = rows.size() > limit ? rows.size() - limit : 0;
  if (first > 0) out << fmt::format("  ({} earlier values not shown)\n", first);
  for (size_t k = first; k < rows.size(); ++k) {
    const api::Json& metric = api::ObjectAt(rows[k], "metric");
    out << fmt::format("  {}  {}={}\n", api::StringAt(rows[k], "timeStamp"),
                       api::StringAt(metric, "name"), api::StringAt(metric, "value"));
  }
}

}  // namespace trainyard::cli
