#include "cli/optimization_view.h"

#include <fmt/format.h>

#include <algorithm>

#include "api/defaults.h"
#include "api/object.h"
#include "cli/metrics_view.h"
#include "common/strings.h"
#include "controller/optimization_job_reconciler.h"
#include "tune/metrics.h"

namespace trainyard::cli {
namespace {

constexpr size_t kColumnMin = 10;

// A long Float value at 4 significant digits, so the columns stay narrow
// (the exact value is in the TrainJob's annotation and in the summary);
// Int values and choices as they are.
std::string Short(const api::OptimizationParameter& p, const std::string& value) {
  const auto& bounded =
      p.search_space.uniform ? p.search_space.uniform : p.search_space.log_uniform;
  if (!bounded || bounded->type != "Float" || value.size() <= 8) return value;
  std::optional<double> number = tune::ParseMetricValue(value);
  return number ? fmt::format("{:.4g}", *number) : value;
}

std::string ValueOf(const std::vector<api::NamedValue>& values, const std::string& name) {
  for (const api::NamedValue& v : values) {
    if (v.name == name) return v.value;
  }
  return "-";
}

std::string StateOf(const controller::OptimizationTrial& trial) {
  switch (trial.state) {
    case tune::TrialState::kSucceeded:
      return "Succeeded";
    case tune::TrialState::kEarlyStopped:
      return "EarlyStopped";
    case tune::TrialState::kFailed:
      return api::JobOutcome(trial.stored) == "Succeeded" ? "NoMetrics" : "Failed";
    case tune::TrialState::kPending:
      return "Running";
  }
  return "";
}

bool ConditionTrue(const api::OptimizationJobStatus& status, std::string_view type) {
  return std::any_of(
      status.conditions.begin(), status.conditions.end(),
      [&](const api::MetaCondition& c) { return c.type == type && c.status == "True"; });
}

std::string MetricsText(const std::vector<api::NamedValue>& metrics) {
  std::vector<std::string> parts;
  for (const api::NamedValue& m : metrics) parts.push_back(m.name + "=" + m.value);
  return Join(parts, " ");
}

}  // namespace

void OptimizationView::PrintRow(const controller::OptimizationTrial& trial) {
  const api::OptimizationJobSpec& spec = fields_.spec;
  size_t name_width = key_.name.size() + 9;
  if (!header_printed_) {
    std::string line = PadColumn("TRIAL", name_width) + PadColumn("STATE", 12);
    for (const auto& p : spec.parameters)
      line += PadColumn(p.name, std::max(kColumnMin, p.name.size()));
    for (const auto& o : spec.objectives) line += PadColumn(AsciiUpper(o.metric), kColumnMin);
    fmt::print(out_, "{}\n", line);
    header_printed_ = true;
  }
  std::string line = PadColumn(trial.name, name_width) + PadColumn(StateOf(trial), 12);
  for (const auto& p : spec.parameters) {
    line +=
        PadColumn(Short(p, ValueOf(trial.parameters, p.name)), std::max(kColumnMin, p.name.size()));
  }
  for (const auto& o : spec.objectives)
    line += PadColumn(ValueOf(trial.metrics, o.metric), kColumnMin);
  fmt::print(out_, "{}\n", line);
  std::fflush(out_);
}

std::string OptimizationView::Poll() {
  Result<api::Json> stored = store_.Get(key_);
  if (!stored.ok()) {
    finished_ = true;
    return fmt::format("{}: deleted", key_.name);
  }
  api::DecodeResult decoded = api::DecodeObject(*stored);
  auto* job = decoded.object ? std::get_if<api::CoreObject>(&*decoded.object) : nullptr;
  if (job == nullptr) return key_.name;
  api::SetDefaults(*decoded.object);
  fields_ = api::OptimizationJobFieldsOf(*job);
  // The run's store keeps the trials' printed metrics too.
  const auto* observations = dynamic_cast<const store::ObservationLog*>(&store_);
  // As the controller judges them: a Complete trial whose output is still
  // being read is not yet a row.
  Result<std::vector<controller::OptimizationTrial>> trials = controller::ReadOptimizationTrials(
      store_, observations, *job, fields_.spec, RealClock().Now(),
      controller::OptimizationJobReconcilerOptions{}.metric_grace);
  if (!trials.ok()) return key_.name;
  for (const controller::OptimizationTrial& trial : *trials) {
    bool ended = trial.state != tune::TrialState::kPending;
    if (ended && printed_.insert(trial.name).second) PrintRow(trial);
  }
  const api::OptimizationJobStatus& s = fields_.status;
  finished_ = ConditionTrue(s, "Complete") || ConditionTrue(s, "Failed");
  succeeded_ = ConditionTrue(s, "Complete");
  api::OptimizationTrialCounts counts = s.trial_counts.value_or(api::OptimizationTrialCounts{});
  std::string state = finished_ ? s.conditions.back().type : "Running";
  std::string line = fmt::format("{}: {}, {}/{} trials done, {} running", key_.name, state,
                                 counts.succeeded + counts.failed + counts.early_stopped,
                                 fields_.spec.num_trials.value_or(1), counts.running);
  if (s.result)
    line += fmt::format(", best {} ({})", MetricsText(s.result->metrics), s.result->train_job_name);
  return line;
}

void OptimizationView::PrintSummary(std::FILE* out, const std::string& logs_dir) const {
  const api::OptimizationJobStatus& s = fields_.status;
  const api::MetaCondition* last = s.conditions.empty() ? nullptr : &s.conditions.back();
  fmt::print(out, "{}: {}{}\n", key_.ToString(), last ? last->type : "Created",
             last && !last->reason.empty() ? " (" + last->reason + ")" : "");
  if (last && last->type == "Failed") fmt::print(out, "  {}\n", last->message);
  if (!s.result) {  // every trial failed: the first one's logs
    PrintTrialLogs(out, logs_dir, key_.namespace_, controller::OptimizationTrialName(key_.name, 0));
    return;
  }
  fmt::print(out, "best trial: {}\n", s.result->train_job_name);
  for (const api::NamedValue& p : s.result->parameters) {
    fmt::print(out, "  {} = {}\n", p.name, p.value);
  }
  fmt::print(out, "  {}\n", MetricsText(s.result->metrics));
  if (s.pareto_front.empty()) return;
  fmt::print(out, "Pareto front: {} trials no other beats in every objective\n",
             s.pareto_front.size());
  for (const api::OptimizationTrialResult& member : s.pareto_front) {
    std::vector<std::string> parameters;
    for (const api::NamedValue& p : member.parameters) {
      parameters.push_back(p.name + "=" + p.value);
    }
    fmt::print(out, "  {}: {} ({})\n", member.train_job_name, MetricsText(member.metrics),
               Join(parameters, " "));
  }
}

}  // namespace trainyard::cli
