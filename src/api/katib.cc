#include "api/katib.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "api/katib_space.h"
#include "common/strings.h"

namespace trainyard::api {

const KatibCondition* FindKatibCondition(const std::vector<KatibCondition>& conditions,
                                         std::string_view type) {
  for (const KatibCondition& c : conditions) {
    if (c.type == type) return &c;
  }
  return nullptr;
}

std::string_view LastConditionType(const std::vector<KatibCondition>& conditions) {
  return conditions.empty() ? std::string_view() : std::string_view(conditions.back().type);
}

bool Maximizes(const ObjectiveSpec& objective) { return objective.type == "maximize"; }

std::vector<ParetoObjective> ParetoObjectivesOf(const Experiment& experiment,
                                                std::vector<std::string>* problems) {
  std::vector<ParetoObjective> out;
  const std::optional<ObjectiveSpec>& objective = experiment.spec.objective;
  if (!objective) return out;
  out.push_back({objective->objective_metric_name, Maximizes(*objective)});
  auto it = experiment.metadata.annotations.find(std::string(kParetoObjectivesAnnotation));
  if (it == experiment.metadata.annotations.end()) return out;
  auto problem = [&](std::string text) {
    if (problems != nullptr) problems->push_back(std::move(text));
  };
  for (const std::string& item : SplitNonEmpty(it->second, ',')) {
    size_t eq = item.find('=');
    std::string metric(Trim(std::string_view(item).substr(0, eq)));
    std::string direction =
        eq == std::string::npos ? "" : std::string(Trim(std::string_view(item).substr(eq + 1)));
    const std::vector<std::string>& extra = objective->additional_metric_names;
    if (direction != "maximize" && direction != "minimize") {
      problem(fmt::format("{:?}: write metric=maximize or metric=minimize", item));
    } else if (metric == objective->objective_metric_name) {
      problem(fmt::format("{} is the experiment's objective already", metric));
    } else if (std::find(extra.begin(), extra.end(), metric) == extra.end()) {
      problem(
          fmt::format("{} is not one of objective.additionalMetricNames: add it there", metric));
    } else if (std::any_of(out.begin(), out.end(),
                           [&](const ParetoObjective& o) { return o.metric == metric; })) {
      problem(fmt::format("{} is named twice", metric));
    } else if (out.size() >= kMaxParetoObjectives) {
      problem(fmt::format("at most {} objectives in all", kMaxParetoObjectives));
    } else {
      out.push_back({metric, direction == "maximize"});
    }
  }
  return out;
}

std::string CollectorKindOf(const Trial& trial) {
  const auto& mc = trial.spec.metrics_collector;
  return mc && mc->collector ? mc->collector->kind : "StdOut";
}

std::vector<std::string> MetricNamesOf(const Trial& trial) {
  const ObjectiveSpec objective = trial.spec.objective.value_or(ObjectiveSpec{});
  std::vector<std::string> names = {objective.objective_metric_name};
  names.insert(names.end(), objective.additional_metric_names.begin(),
               objective.additional_metric_names.end());
  return names;
}

namespace {

Result<double> ParseBound(const ParameterSpec& p, std::string_view field, const std::string& text) {
  double value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || !std::isfinite(value)) {
    return InvalidArgumentError(fmt::format(
        "parameter \"{}\": feasibleSpace.{} \"{}\" is not a number", p.name, field, text));
  }
  return value;
}

Result<tune::Distribution> DistributionOf(const std::string& name) {
  if (name.empty() || name == "uniform") return tune::Distribution::kUniform;
  if (name == "logUniform") return tune::Distribution::kLogUniform;
  if (name == "normal") return tune::Distribution::kNormal;
  if (name == "logNormal") return tune::Distribution::kLogNormal;
  return InvalidArgumentError(fmt::format("distribution: {} is not supported", name));
}

Result<tune::Parameter> ParameterOf(const ParameterSpec& spec) {
  tune::Parameter p{.name = spec.name};
  const FeasibleSpace space = spec.feasible_space.value_or(FeasibleSpace{});
  ASSIGN_OR_RETURN(p.distribution, DistributionOf(space.distribution));
  if (spec.parameter_type == "categorical" || spec.parameter_type == "discrete") {
    p.type = spec.parameter_type == "categorical" ? tune::ParameterType::kCategorical
                                                  : tune::ParameterType::kDiscrete;
    p.list = space.list;
    return p;
  }
  if (spec.parameter_type != "int" && spec.parameter_type != "double") {
    return InvalidArgumentError(
        fmt::format("parameterType: {} is not supported", spec.parameter_type));
  }
  p.type = spec.parameter_type == "int" ? tune::ParameterType::kInt : tune::ParameterType::kDouble;
  ASSIGN_OR_RETURN(p.min, ParseBound(spec, "min", space.min));
  ASSIGN_OR_RETURN(p.max, ParseBound(spec, "max", space.max));
  if (!space.step.empty()) {
    ASSIGN_OR_RETURN(double step, ParseBound(spec, "step", space.step));
    p.step = step;
  }
  return p;
}

}  // namespace

Result<tune::Space> SearchSpaceOf(const std::vector<ParameterSpec>& parameters) {
  std::vector<tune::Parameter> out;
  for (const ParameterSpec& spec : parameters) {
    ASSIGN_OR_RETURN(tune::Parameter p, ParameterOf(spec));
    out.push_back(std::move(p));
  }
  return tune::Space::Make(std::move(out));
}

Result<tune::Space> OptimizationSpaceOf(const std::vector<OptimizationParameter>& parameters) {
  std::vector<tune::Parameter> out;
  for (const OptimizationParameter& spec : parameters) {
    tune::Parameter p{.name = spec.name};
    const OptimizationSearchSpace& s = spec.search_space;
    if (s.categorical) {
      p.type = tune::ParameterType::kCategorical;
      p.list = s.categorical->choices;
    } else if (const auto& bounded = s.uniform ? s.uniform : s.log_uniform; bounded) {
      p.type = bounded->type == "Int" ? tune::ParameterType::kInt : tune::ParameterType::kDouble;
      p.distribution = s.uniform ? tune::Distribution::kUniform : tune::Distribution::kLogUniform;
      p.min = std::strtod(bounded->min.c_str(), nullptr);
      p.max = std::strtod(bounded->max.c_str(), nullptr);
    } else {
      return InvalidArgumentError(fmt::format("parameter {:?} has no search space", spec.name));
    }
    out.push_back(std::move(p));
  }
  return tune::Space::Make(std::move(out));
}

}  // namespace trainyard::api
