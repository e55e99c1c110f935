// Katib's status model, as pure functions over objects: a trial's phase, the
// objective value an observation gives, an experiment's counts, lists and
// best trial, the verdict that ends it, and condition bookkeeping.
//
// Upstream's rules (reference §3), with its defects fixed: a trial whose
// objective is not a number never becomes the best (upstream makes it the
// best); ExperimentSuggestionEndReached is reachable (an algorithm that
// runs out, such as grid, ends the experiment when its trials finish).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/katib.h"
#include "common/clock.h"

namespace trainyard::controller {

enum class TrialPhase {
  kPending,
  kRunning,
  kSucceeded,
  kFailed,
  kKilled,
  kEarlyStopped,
  kMetricsUnavailable,
};

// Upstream's classification: the first of Killed, Failed, Succeeded,
// EarlyStopped, Running, MetricsUnavailable whose condition is True.
TrialPhase PhaseOf(const api::Trial& trial);
bool IsFinished(TrialPhase phase);

// The objective's value in `observation`: the metric's min, max or latest
// per the objective's strategy, falling back to latest; nullopt when that is
// not a number.
std::optional<double> ObjectiveOf(const api::ObjectiveSpec& objective,
                                  const std::optional<api::Observation>& observation);
// The same for any of its metrics (its strategy, if metricStrategies names
// one, else latest).
std::optional<double> MetricValueOf(const api::ObjectiveSpec& objective,
                                    const std::optional<api::Observation>& observation,
                                    const std::string& metric);
// A trial's objectives as losses (a maximised one negated), in
// `objectives`' order; nullopt when one has no value.
std::optional<std::vector<double>> ParetoLossesOf(
    const api::ObjectiveSpec& objective, const std::vector<api::ParetoObjective>& objectives,
    const std::optional<api::Observation>& observation);

// Fills the experiment status's counts, trial lists and currentOptimalTrial
// from its trials (in creation order).
// With several objectives (api::ParetoObjectivesOf), status.paretoFront
// too.
void SummarizeTrials(const api::ExperimentSpec& spec, const std::vector<api::Trial>& trials,
                     api::ExperimentStatus& status,
                     const std::vector<api::ParetoObjective>& objectives = {});

struct Verdict {
  std::string type;  // Succeeded | Failed
  std::string reason;
  std::string message;
};

// Whether the experiment is over, in upstream's order: goal reached, too
// many failures, max trials reached, or (trainyard) suggestions exhausted
// with no trial still active.
std::optional<Verdict> Conclude(const api::ExperimentSpec& spec,
                                const api::ExperimentStatus& status, bool suggestions_exhausted);

// Sets condition `type` to `status` (True/False) with reason and message;
// the transition time moves only when the status changes. Returns whether
// anything changed.
bool SetKatibCondition(std::vector<api::KatibCondition>& conditions, std::string_view type,
                       std::string_view status, std::string_view reason, std::string_view message,
                       TimePoint now);
bool IsConditionTrue(const std::vector<api::KatibCondition>& conditions, std::string_view type);

}  // namespace trainyard::controller
