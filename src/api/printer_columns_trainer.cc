// The columns of Trainer v2's TrainJob and of JobSet: their CRDs'
// additionalPrinterColumns.

#include "api/printer_columns.h"

namespace trainyard::api {

// Upstream's State (the last condition's type, as for the v1 jobs), and
// the progress its trainer reports (KEP-2779's trainerStatus), blank until
// it does: the columns KEP-2779 proposed, which upstream's CRD has not
// (yet).
std::vector<PrinterColumn> TrainJobColumns() {
  std::vector<PrinterColumn> columns = TrainingJobColumns();
  columns.resize(2);  // Name, State: the v1 jobs' wide columns are these
  for (PrinterColumn& c : ProgressColumns(/*priority=*/0)) columns.push_back(std::move(c));
  columns.push_back(AgeColumn());
  return columns;
}

// OptimizationJob's CRD has none; these say where a search stands: its
// last condition, its trials by state of those it will run, and the best.
// Each is one JSON path, so trainyard's CRD declares the same columns
// (OptimizationJobColumnPaths) and kubectl shows them alike on a cluster.
const std::vector<std::pair<std::string, std::string>>& OptimizationJobColumnPaths() {
  static const std::vector<std::pair<std::string, std::string>> paths = {
      {"State", ".status.conditions[-1:].type"},
      {"Succeeded", ".status.trialCounts.succeeded"},
      {"Failed", ".status.trialCounts.failed"},
      {"Trials", ".spec.numTrials"},
      {"Best", ".status.result.trainJobName"}};
  return paths;
}

std::vector<PrinterColumn> OptimizationJobColumns() {
  auto at = [](std::initializer_list<const char*> path) {
    return [path = std::vector<const char*>(path)](const Json& o, TimePoint) -> Json {
      const Json* value = &o;
      for (const char* key : path) {
        if (!value->is_object() || !value->contains(key)) return "";
        value = &(*value)[key];
      }
      return *value;
    };
  };
  return {NameColumn(),
          {"State", "string", "", 0,
           [](const Json& o, TimePoint) {
             const Json& c = ArrayRefAt(o, {"status", "conditions"});
             return c.empty() ? std::string() : StringAt(c.back(), {"type"});
           }},
          {"Succeeded", "integer", "", 0, at({"status", "trialCounts", "succeeded"})},
          {"Failed", "integer", "", 0, at({"status", "trialCounts", "failed"})},
          {"Trials", "integer", "", 0, at({"spec", "numTrials"})},
          {"Best", "string", "", 0, at({"status", "result", "trainJobName"})},
          AgeColumn()};
}

std::vector<PrinterColumn> JobSetColumns() {
  auto condition = [](const Json& o, std::string_view type) {
    for (const Json& c : ArrayRefAt(o, {"status", "conditions"})) {
      if (StringAt(c, {"type"}) == type) return StringAt(c, {"status"});
    }
    return std::string();
  };
  std::vector<PrinterColumn> columns = {
      NameColumn(),
      {"TerminalState", "string", "", 0,
       [](const Json& o, TimePoint) {
         return StringAt(o, {"status", "terminalState"});
       }},
      {"Restarts", "string", "", 0,
       [](const Json& o, TimePoint) -> Json {
         const Json* restarts = FindAt(o, {"status", "restarts"});
         return restarts != nullptr ? *restarts : Json(0);
       }},
      {"Completed", "string", "", 0,
       [condition](const Json& o, TimePoint) { return condition(o, "Completed"); }},
      {"Suspended", "string", "", 0,
       [](const Json& o, TimePoint) -> Json {
         const Json* suspend = FindAt(o, {"spec", "suspend"});
         return suspend != nullptr ? *suspend : Json(false);
       }},
      AgeColumn()};
  // trainyard's, with -o wide: the progress its output declares.
  for (PrinterColumn& c : ProgressColumns(/*priority=*/1)) columns.push_back(std::move(c));
  return columns;
}

}  // namespace trainyard::api
