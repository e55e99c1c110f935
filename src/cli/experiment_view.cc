#include "cli/experiment_view.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "api/object.h"
#include "api/well_known.h"
#include "cli/metrics_view.h"
#include "common/strings.h"
#include "controller/experiment_trials.h"
#include "controller/katib_status.h"
#include "tune/metrics.h"
#include "tune/sampler.h"

namespace trainyard::cli {
namespace {

constexpr size_t kMinWidth = 10;

std::string PhaseName(controller::TrialPhase phase) {
  switch (phase) {
    case controller::TrialPhase::kPending:
      return "Pending";
    case controller::TrialPhase::kRunning:
      return "Running";
    case controller::TrialPhase::kSucceeded:
      return "Succeeded";
    case controller::TrialPhase::kFailed:
      return "Failed";
    case controller::TrialPhase::kKilled:
      return "Killed";
    case controller::TrialPhase::kEarlyStopped:
      return "EarlyStopped";
    case controller::TrialPhase::kMetricsUnavailable:
      return "MetricsUnavailable";
  }
  return "";
}

std::vector<api::Trial> TrialsOf(const store::ObjectStore& store, const api::Experiment& e) {
  std::vector<api::Trial> trials;
  (void)store.Scan("Trial", e.metadata.namespace_, [&](const api::Json& doc) {
    api::DecodeResult decoded = api::DecodeObject(doc);
    auto* trial = decoded.object ? std::get_if<api::Trial>(&*decoded.object) : nullptr;
    if (trial == nullptr) return;
    auto label = trial->metadata.labels.find(std::string(api::kExperimentLabel));
    if (label != trial->metadata.labels.end() && label->second == e.metadata.name) {
      trials.push_back(std::move(*trial));
    }
  });
  auto index = [](const api::Trial& t) {
    auto it = t.metadata.annotations.find(std::string(api::kTrialIndexAnnotation));
    return it == t.metadata.annotations.end() ? 0 : std::atoll(it->second.c_str());
  };
  std::stable_sort(trials.begin(), trials.end(),
                   [&](const api::Trial& a, const api::Trial& b) { return index(a) < index(b); });
  return trials;
}

std::string ObjectiveText(const api::ObjectiveSpec& objective,
                          const std::optional<api::Observation>& observation) {
  std::optional<double> value = controller::ObjectiveOf(objective, observation);
  return value ? fmt::format("{:.6g}", *value) : "-";
}

// A double assignment at 4 significant digits, so the columns stay narrow;
// ints, list values and short numbers as assigned. (The exact value is in
// the Trial, and in the optimal trial printed at the end.)
std::string ShortValue(const api::ParameterSpec& p, const std::string& value) {
  if (p.parameter_type != "double" || value.size() <= 8) return value;
  std::optional<double> number = tune::ParseMetricValue(value);
  return number ? fmt::format("{:.4g}", *number) : value;
}

// Population-based training's trials show their generation and parent.
bool ShowsLineage(const api::Experiment& e) {
  return e.spec.algorithm && e.spec.algorithm->algorithm_name == "pbt";
}

std::string LabelOf(const api::Trial& trial, std::string_view key) {
  auto it = trial.spec.labels.find(std::string(key));
  return it == trial.spec.labels.end() ? "-" : it->second;
}

}  // namespace

std::string PadColumn(const std::string& text, size_t width) {
  return text.size() >= width ? text + " " : text + std::string(width - text.size() + 1, ' ');
}

void PrintTrialLogs(std::FILE* out, const std::string& logs_dir, const std::string& namespace_,
                    const std::string& trial) {
  // Its replicas' pods are named after it; their logs stay with the run.
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path dir = fs::path(logs_dir) / namespace_;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.starts_with(trial + "-") && name.ends_with(".log")) {
      fmt::print(out, "  its log: {}\n", it->path().string());
    }
  }
  fmt::print(out, "  (trainyard run --logs=all prints every trial's output as it runs)\n");
}

void ExperimentView::PrintHeader() {
  size_t name_width = experiment_.metadata.name.size() + 9;
  std::string line = PadColumn("TRIAL", name_width) + PadColumn("STATE", 12);
  if (ShowsLineage(experiment_)) line += PadColumn("GEN", 3) + PadColumn("PARENT", name_width);
  for (const api::ParameterSpec& p : experiment_.spec.parameters) {
    line += PadColumn(p.name, std::max(kMinWidth, p.name.size()));
  }
  line += AsciiUpper(experiment_.spec.objective->objective_metric_name);
  fmt::print(out_, "{}\n", line);
  header_printed_ = true;
}

void ExperimentView::PrintRow(const api::Trial& trial) {
  if (!header_printed_) PrintHeader();
  size_t name_width = experiment_.metadata.name.size() + 9;
  std::string line = PadColumn(trial.metadata.name, name_width) +
                     PadColumn(PhaseName(controller::PhaseOf(trial)), 12);
  if (ShowsLineage(experiment_)) {
    line += PadColumn(LabelOf(trial, tune::kPbtGenerationLabel), 3) +
            PadColumn(LabelOf(trial, tune::kPbtParentLabel), name_width);
  }
  for (const api::ParameterSpec& p : experiment_.spec.parameters) {
    std::string value;
    for (const api::ParameterAssignment& a : trial.spec.parameter_assignments) {
      if (a.name == p.name) value = a.value;
    }
    line += PadColumn(ShortValue(p, value), std::max(kMinWidth, p.name.size()));
  }
  line += ObjectiveText(*experiment_.spec.objective, trial.status.observation);
  if (std::optional<double> value =
          controller::ObjectiveOf(*experiment_.spec.objective, trial.status.observation)) {
    objectives_.push_back(*value);
  }
  fmt::print(out_, "{}\n", line);
  std::fflush(out_);
}

std::string ExperimentView::Poll() {
  Result<api::Json> stored = store_.Get(key_);
  if (!stored.ok()) {
    finished_ = true;
    return fmt::format("{}: deleted", key_.name);
  }
  api::DecodeResult decoded = api::DecodeObject(*stored);
  if (auto* e = decoded.object ? std::get_if<api::Experiment>(&*decoded.object) : nullptr) {
    experiment_ = std::move(*e);
  }
  if (!experiment_.spec.objective) return key_.name;
  const api::ExperimentStatus& s = experiment_.status;
  for (const api::Trial& trial : TrialsOf(store_, experiment_)) {
    if (controller::IsFinished(controller::PhaseOf(trial)) &&
        printed_.insert(trial.metadata.name).second) {
      PrintRow(trial);
    }
  }
  finished_ = controller::IsConditionTrue(s.conditions, "Succeeded") ||
              controller::IsConditionTrue(s.conditions, "Failed");
  succeeded_ = controller::IsConditionTrue(s.conditions, "Succeeded");
  std::string state(api::LastConditionType(s.conditions));
  int32_t active = s.trials_running.value_or(0) + s.trials_pending.value_or(0);
  std::string line = fmt::format("{}: {}, {}/{} trials done, {} running", key_.name,
                                 state.empty() ? "Created" : state, s.trials.value_or(0) - active,
                                 experiment_.spec.max_trial_count
                                     ? std::to_string(*experiment_.spec.max_trial_count)
                                     : std::string("∞"),
                                 active);
  if (s.current_optimal_trial) {
    line += fmt::format(
        ", best {}={} ({})", experiment_.spec.objective->objective_metric_name,
        ObjectiveText(*experiment_.spec.objective, s.current_optimal_trial->observation),
        s.current_optimal_trial->best_trial_name);
  }
  return line;
}

void ExperimentView::PrintFirstFailure(std::FILE* out, const std::string& logs_dir) const {
  for (const api::Trial& trial : TrialsOf(store_, experiment_)) {
    auto failed = std::find_if(
        trial.status.conditions.begin(), trial.status.conditions.end(),
        [](const api::KatibCondition& c) { return c.type == "Failed" && c.status == "True"; });
    if (failed == trial.status.conditions.end()) continue;
    fmt::print(out, "first failed trial: {}: {}\n", trial.metadata.name, failed->message);
    PrintTrialLogs(out, logs_dir, trial.metadata.namespace_, trial.metadata.name);
    return;
  }
}

void ExperimentView::PrintSummary(std::FILE* out, const std::string& logs_dir) const {
  const api::ExperimentStatus& s = experiment_.status;
  std::string reason;
  if (!s.conditions.empty()) reason = s.conditions.back().reason;
  fmt::print(out, "{}: {}{}\n", key_.ToString(),
             s.conditions.empty() ? "Created" : s.conditions.back().type,
             reason.empty() ? "" : " (" + reason + ")");
  if (!s.current_optimal_trial) {
    fmt::print(out, "no trial reported {}\n",
               experiment_.spec.objective ? experiment_.spec.objective->objective_metric_name
                                          : "its objective");
    PrintFirstFailure(out, logs_dir);
    return;
  }
  if (s.trials_failed.value_or(0) > 0) PrintFirstFailure(out, logs_dir);
  const api::OptimalTrial& best = *s.current_optimal_trial;
  fmt::print(out, "optimal trial: {}\n", best.best_trial_name);
  for (const api::ParameterAssignment& a : best.parameter_assignments) {
    fmt::print(out, "  {} = {}\n", a.name, a.value);
  }
  if (best.observation) {
    for (const api::Metric& m : best.observation->metrics) {
      fmt::print(out, "  {}: min {}, max {}, latest {}\n", m.name, m.min, m.max, m.latest);
    }
  }
  if (!s.pareto_front.empty()) {
    fmt::print(out, "Pareto front: {} trials no other beats in every objective\n",
               s.pareto_front.size());
    for (const api::OptimalTrial& member : s.pareto_front) {
      std::vector<std::string> values;
      for (const api::ParetoObjective& o : api::ParetoObjectivesOf(experiment_)) {
        std::optional<double> v =
            controller::MetricValueOf(*experiment_.spec.objective, member.observation, o.metric);
        values.push_back(fmt::format("{}={}", o.metric, v ? fmt::format("{:.6g}", *v) : "-"));
      }
      fmt::print(out, "  {}: {}\n", member.best_trial_name, Join(values, " "));
    }
  }
  if (objectives_.size() < 2) return;
  // The objective trial by trial, as they ended, and the best so far.
  bool maximize = experiment_.spec.objective->type == "maximize";
  std::vector<double> best_so_far = objectives_;
  for (size_t i = 1; i < best_so_far.size(); ++i) {
    best_so_far[i] = maximize ? std::max(best_so_far[i], best_so_far[i - 1])
                              : std::min(best_so_far[i], best_so_far[i - 1]);
  }
  fmt::print(out, "{} over {} trials: {}, best so far: {}\n",
             experiment_.spec.objective->objective_metric_name, objectives_.size(),
             Sparkline(objectives_, 40), Sparkline(best_so_far, 40));
}

}  // namespace trainyard::cli
