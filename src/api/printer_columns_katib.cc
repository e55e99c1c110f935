// Table columns for Katib's kinds: upstream's printer columns (Type and
// Status of the last condition, Age), and, with -o wide, the counts and
// the best objective value so far.
#include <fmt/format.h>

#include "api/printer_columns.h"

namespace trainyard::api {
namespace {

PrinterColumn LastCondition(std::string name, const char* field) {
  return {std::move(name), "string", "", 0, [field](const Json& o, TimePoint) {
            const Json& conditions = ArrayRefAt(o, {"status", "conditions"});
            return conditions.empty() ? std::string() : StringAt(conditions.back(), {field});
          }};
}

// The objective's value in an observation: the metric named by the
// objective, as min, max or latest per its strategy (latest by default).
std::string ObjectiveCell(const Json& objective, const Json& observation) {
  std::string name = StringAt(objective, {"objectiveMetricName"});
  std::string strategy = "latest";
  for (const Json& s : ArrayRefAt(objective, {"metricStrategies"})) {
    if (StringAt(s, {"name"}) == name) strategy = StringAt(s, {"value"});
  }
  for (const Json& m : ArrayRefAt(observation, {"metrics"})) {
    if (StringAt(m, {"name"}) != name) continue;
    std::string value = StringAt(m, {strategy.c_str()});
    return value == "unavailable" || value.empty() ? StringAt(m, {"latest"}) : value;
  }
  return "";
}

}  // namespace

std::vector<PrinterColumn> ExperimentColumns() {
  return {NameColumn(),
          LastCondition("Type", "type"),
          LastCondition("Status", "status"),
          AgeColumn(),
          {"Trials", "string", "", 1,
           [](const Json& o, TimePoint) {
             return fmt::format("{}/{}", IntAt(o, {"status", "trialsSucceeded"}),
                                IntAt(o, {"status", "trials"}));
           }},
          {"Running", "integer", "", 1,
           [](const Json& o, TimePoint) {
             return IntAt(o, {"status", "trialsRunning"});
           }},
          {"Best", "string", "", 1, [](const Json& o, TimePoint) {
             return ObjectiveCell(ObjectAt(o, {"spec", "objective"}),
                                  ObjectAt(o, {"status", "currentOptimalTrial", "observation"}));
           }}};
}

std::vector<PrinterColumn> TrialColumns() {
  return {NameColumn(),
          LastCondition("Type", "type"),
          LastCondition("Status", "status"),
          AgeColumn(),
          {"Objective", "string", "", 1, [](const Json& o, TimePoint) {
             return ObjectiveCell(ObjectAt(o, {"spec", "objective"}),
                                  ObjectAt(o, {"status", "observation"}));
           }}};
}

std::vector<PrinterColumn> SuggestionColumns() {
  return {NameColumn(),
          LastCondition("Type", "type"),
          LastCondition("Status", "status"),
          {"Requested", "integer", "", 0,
           [](const Json& o, TimePoint) {
             return IntAt(o, {"spec", "requests"});
           }},
          {"Assigned", "integer", "", 0,
           [](const Json& o, TimePoint) {
             return IntAt(o, {"status", "suggestionCount"});
           }},
          AgeColumn()};
}

}  // namespace trainyard::api
