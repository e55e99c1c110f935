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

std::vector<PrinterColumn> JobSetColumns() {
  auto condition = [](const Json& o, std::string_view type) {
    for (const Json& c : ArrayRefAt(o, {"status", "conditions"})) {
      if (StringAt(c, {"type"}) == type) return StringAt(c, {"status"});
    }
    return std::string();
  };
  return {NameColumn(),
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
}

}  // namespace trainyard::api
