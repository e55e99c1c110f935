#include "controller/katib_status.h"

#include <algorithm>

#include "tune/metrics.h"
#include "tune/pareto.h"

namespace trainyard::controller {

bool IsConditionTrue(const std::vector<api::KatibCondition>& conditions, std::string_view type) {
  const api::KatibCondition* c = api::FindKatibCondition(conditions, type);
  return c != nullptr && c->status == "True";
}

TrialPhase PhaseOf(const api::Trial& trial) {
  const auto& c = trial.status.conditions;
  if (IsConditionTrue(c, "Killed")) return TrialPhase::kKilled;
  if (IsConditionTrue(c, "Failed")) return TrialPhase::kFailed;
  if (IsConditionTrue(c, "Succeeded")) return TrialPhase::kSucceeded;
  if (IsConditionTrue(c, "EarlyStopped")) return TrialPhase::kEarlyStopped;
  if (IsConditionTrue(c, "Running")) return TrialPhase::kRunning;
  if (IsConditionTrue(c, "MetricsUnavailable")) return TrialPhase::kMetricsUnavailable;
  return TrialPhase::kPending;
}

bool IsFinished(TrialPhase phase) {
  return phase != TrialPhase::kPending && phase != TrialPhase::kRunning;
}

std::optional<double> ObjectiveOf(const api::ObjectiveSpec& objective,
                                  const std::optional<api::Observation>& observation) {
  return MetricValueOf(objective, observation, objective.objective_metric_name);
}

std::optional<std::vector<double>> ParetoLossesOf(
    const api::ObjectiveSpec& objective, const std::vector<api::ParetoObjective>& objectives,
    const std::optional<api::Observation>& observation) {
  std::vector<double> losses;
  for (const api::ParetoObjective& o : objectives) {
    std::optional<double> value = MetricValueOf(objective, observation, o.metric);
    if (!value) return std::nullopt;
    losses.push_back(o.maximize ? -*value : *value);
  }
  return losses;
}

std::optional<double> MetricValueOf(const api::ObjectiveSpec& objective,
                                    const std::optional<api::Observation>& observation,
                                    const std::string& metric) {
  if (!observation) return std::nullopt;
  tune::MetricStrategy strategy = tune::MetricStrategy::kLatest;
  for (const api::MetricStrategy& s : objective.metric_strategies) {
    if (s.name != metric) continue;
    if (s.value == "min") strategy = tune::MetricStrategy::kMin;
    if (s.value == "max") strategy = tune::MetricStrategy::kMax;
  }
  for (const api::Metric& m : observation->metrics) {
    if (m.name != metric) continue;
    tune::MetricSummary summary{.name = m.name, .min = m.min, .max = m.max, .latest = m.latest};
    return tune::ObjectiveValue(summary, strategy);
  }
  return std::nullopt;
}

namespace {

void AddTo(const std::string& name, TrialPhase phase, api::ExperimentStatus& s) {
  switch (phase) {
    case TrialPhase::kPending:
      s.pending_trial_list.push_back(name);
      break;
    case TrialPhase::kRunning:
      s.running_trial_list.push_back(name);
      break;
    case TrialPhase::kSucceeded:
      s.succeeded_trial_list.push_back(name);
      break;
    case TrialPhase::kFailed:
      s.failed_trial_list.push_back(name);
      break;
    case TrialPhase::kKilled:
      s.killed_trial_list.push_back(name);
      break;
    case TrialPhase::kEarlyStopped:
      s.early_stopped_trial_list.push_back(name);
      break;
    case TrialPhase::kMetricsUnavailable:
      s.metrics_unavailable_trial_list.push_back(name);
      break;
  }
}

int32_t Count(const std::vector<std::string>& list) { return static_cast<int32_t>(list.size()); }

}  // namespace

namespace {

// The succeeded trials no other succeeded trial beats in every objective,
// in creation order.
std::vector<api::OptimalTrial> ParetoFrontOf(const api::ObjectiveSpec& objective,
                                             const std::vector<api::ParetoObjective>& objectives,
                                             const std::vector<api::Trial>& trials) {
  std::vector<const api::Trial*> told;
  std::vector<tune::Losses> losses;
  for (const api::Trial& trial : trials) {
    if (PhaseOf(trial) != TrialPhase::kSucceeded) continue;
    std::optional<std::vector<double>> l =
        ParetoLossesOf(objective, objectives, trial.status.observation);
    if (!l) continue;
    told.push_back(&trial);
    losses.push_back(std::move(*l));
  }
  std::vector<int> fronts = tune::ParetoFronts(losses);
  std::vector<api::OptimalTrial> front;
  for (size_t k = 0; k < told.size(); ++k) {
    if (fronts[k] != 0) continue;
    front.push_back({.best_trial_name = told[k]->metadata.name,
                     .parameter_assignments = told[k]->spec.parameter_assignments,
                     .observation = told[k]->status.observation});
  }
  return front;
}

}  // namespace

void SummarizeTrials(const api::ExperimentSpec& spec, const std::vector<api::Trial>& trials,
                     api::ExperimentStatus& status,
                     const std::vector<api::ParetoObjective>& objectives) {
  for (auto* list :
       {&status.pending_trial_list, &status.running_trial_list, &status.succeeded_trial_list,
        &status.failed_trial_list, &status.killed_trial_list, &status.early_stopped_trial_list,
        &status.metrics_unavailable_trial_list}) {
    list->clear();
  }
  const api::ObjectiveSpec objective = spec.objective.value_or(api::ObjectiveSpec{});
  bool maximize = api::Maximizes(objective);
  const api::Trial* best = nullptr;
  double best_value = 0;
  for (const api::Trial& trial : trials) {
    AddTo(trial.metadata.name, PhaseOf(trial), status);
    std::optional<double> value = ObjectiveOf(objective, trial.status.observation);
    if (!value) continue;
    // Strictly better replaces: ties keep the earlier trial.
    if (best == nullptr || (maximize ? *value > best_value : *value < best_value)) {
      best = &trial;
      best_value = *value;
    }
  }
  status.trials = static_cast<int32_t>(trials.size());
  status.trials_pending = Count(status.pending_trial_list);
  status.trials_running = Count(status.running_trial_list);
  status.trials_succeeded = Count(status.succeeded_trial_list);
  status.trials_failed = Count(status.failed_trial_list);
  status.trials_killed = Count(status.killed_trial_list);
  status.trials_early_stopped = Count(status.early_stopped_trial_list);
  status.trial_metrics_unavailable = Count(status.metrics_unavailable_trial_list);
  status.pareto_front.clear();
  if (objectives.size() > 1) status.pareto_front = ParetoFrontOf(objective, objectives, trials);
  if (best != nullptr) {
    status.current_optimal_trial =
        api::OptimalTrial{.best_trial_name = best->metadata.name,
                          .parameter_assignments = best->spec.parameter_assignments,
                          .observation = best->status.observation};
  }
}

std::optional<Verdict> Conclude(const api::ExperimentSpec& spec, const api::ExperimentStatus& s,
                                bool suggestions_exhausted) {
  const api::ObjectiveSpec objective = spec.objective.value_or(api::ObjectiveSpec{});
  if (objective.goal && s.current_optimal_trial) {
    std::optional<double> best = ObjectiveOf(objective, s.current_optimal_trial->observation);
    bool reached =
        best && (api::Maximizes(objective) ? *best >= *objective.goal : *best <= *objective.goal);
    if (reached) {
      return Verdict{"Succeeded", "ExperimentGoalReached",
                     "Experiment has succeeded because Objective goal has reached"};
    }
  }
  int32_t failed = s.trials_failed.value_or(0) + s.trial_metrics_unavailable.value_or(0);
  if (spec.max_failed_trial_count && failed != 0 && failed >= *spec.max_failed_trial_count) {
    return Verdict{"Failed", "ExperimentFailed",
                   "Experiment has failed because max failed count has reached"};
  }
  int32_t finished = s.trials_succeeded.value_or(0) + s.trials_failed.value_or(0) +
                     s.trials_killed.value_or(0) + s.trials_early_stopped.value_or(0) +
                     s.trial_metrics_unavailable.value_or(0);
  if (spec.max_trial_count && finished >= *spec.max_trial_count) {
    return Verdict{"Succeeded", "ExperimentMaxTrialsReached",
                   "Experiment has succeeded because max trial count has reached"};
  }
  int32_t active = s.trials_pending.value_or(0) + s.trials_running.value_or(0);
  if (suggestions_exhausted && active == 0) {
    return Verdict{"Succeeded", "ExperimentSuggestionEndReached",
                   "Experiment has succeeded because suggestion service has reached the end"};
  }
  return std::nullopt;
}

bool SetKatibCondition(std::vector<api::KatibCondition>& conditions, std::string_view type,
                       std::string_view status, std::string_view reason, std::string_view message,
                       TimePoint now) {
  std::string time = FormatRfc3339(now);
  api::KatibCondition updated{.type = std::string(type),
                              .status = std::string(status),
                              .reason = std::string(reason),
                              .message = std::string(message),
                              .last_update_time = time,
                              .last_transition_time = time};
  auto it = std::find_if(conditions.begin(), conditions.end(),
                         [&](const api::KatibCondition& c) { return c.type == type; });
  if (it != conditions.end()) {
    if (it->status == status && it->reason == reason && it->message == message) return false;
    if (it->status == status) updated.last_transition_time = it->last_transition_time;
    conditions.erase(it);
  }
  // As upstream, a changed condition moves to the end: the printer column
  // `Type` (.status.conditions[-1:]) shows the latest.
  conditions.push_back(std::move(updated));
  return true;
}

}  // namespace trainyard::controller
