// Table columns for Katib's kinds: upstream's printer columns (Type and
// Status of the last condition, Age), and, with -o wide, the counts and
// the best objective value so far.
#include <fmt/format.h>

#include "server/table_columns.h"

namespace trainyard::server::internal {
namespace {

Column LastCondition(std::string name, const char* field) {
  return {std::move(name), "string", "", 0, [field](const api::Json& o, TimePoint) {
            const api::Json& conditions = Array(o, {"status", "conditions"});
            return conditions.empty() ? std::string() : Str(conditions.back(), {field});
          }};
}

// The objective's value in an observation: the metric named by the
// objective, as min, max or latest per its strategy (latest by default).
std::string ObjectiveCell(const api::Json& objective, const api::Json& observation) {
  std::string name = Str(objective, {"objectiveMetricName"});
  std::string strategy = "latest";
  for (const api::Json& s : Array(objective, {"metricStrategies"})) {
    if (Str(s, {"name"}) == name) strategy = Str(s, {"value"});
  }
  for (const api::Json& m : Array(observation, {"metrics"})) {
    if (Str(m, {"name"}) != name) continue;
    std::string value = Str(m, {strategy.c_str()});
    return value == "unavailable" || value.empty() ? Str(m, {"latest"}) : value;
  }
  return "";
}

std::vector<Column> ExperimentColumns() {
  return {NameColumn(),
          LastCondition("Type", "type"),
          LastCondition("Status", "status"),
          AgeColumn(),
          {"Trials", "string", "", 1,
           [](const api::Json& o, TimePoint) {
             return fmt::format("{}/{}", Int(o, {"status", "trialsSucceeded"}),
                                Int(o, {"status", "trials"}));
           }},
          {"Running", "integer", "", 1,
           [](const api::Json& o, TimePoint) {
             return Int(o, {"status", "trialsRunning"});
           }},
          {"Best", "string", "", 1, [](const api::Json& o, TimePoint) {
             return ObjectiveCell(Object(o, {"spec", "objective"}),
                                  Object(o, {"status", "currentOptimalTrial", "observation"}));
           }}};
}

std::vector<Column> TrialColumns() {
  return {NameColumn(),
          LastCondition("Type", "type"),
          LastCondition("Status", "status"),
          AgeColumn(),
          {"Objective", "string", "", 1, [](const api::Json& o, TimePoint) {
             return ObjectiveCell(Object(o, {"spec", "objective"}),
                                  Object(o, {"status", "observation"}));
           }}};
}

}  // namespace

std::vector<Column> KatibColumns(const std::string& kind) {
  if (kind == "Experiment") return ExperimentColumns();
  if (kind == "Trial") return TrialColumns();
  if (kind == "Suggestion") {
    return {NameColumn(),
            LastCondition("Type", "type"),
            LastCondition("Status", "status"),
            {"Requested", "integer", "", 0,
             [](const api::Json& o, TimePoint) {
               return Int(o, {"spec", "requests"});
             }},
            {"Assigned", "integer", "", 0,
             [](const api::Json& o, TimePoint) {
               return Int(o, {"status", "suggestionCount"});
             }},
            AgeColumn()};
  }
  return {};
}

}  // namespace trainyard::server::internal
