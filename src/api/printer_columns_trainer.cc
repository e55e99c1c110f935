// The columns of Trainer v2's TrainJob and of JobSet: their CRDs'
// additionalPrinterColumns.
#include "api/printer_columns.h"

namespace trainyard::api {

// Upstream's: State is the last condition's type, as for the v1 jobs.
std::vector<PrinterColumn> TrainJobColumns() { return TrainingJobColumns(); }

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
