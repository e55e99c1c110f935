// The columns of Trainer v2's TrainJob and of JobSet: their CRDs'
// additionalPrinterColumns.
#include <fmt/format.h>

#include "api/printer_columns.h"

namespace trainyard::api {

// Upstream's State (the last condition's type, as for the v1 jobs), and
// what its trainer reports of itself (KEP-2779's trainerStatus), blank
// until it reports: the columns KEP-2779 proposed, which upstream's CRD
// has not (yet).
std::vector<PrinterColumn> TrainJobColumns() {
  std::vector<PrinterColumn> columns = TrainingJobColumns();
  PrinterColumn progress{
      "Progress", "string", "", 0, [](const Json& o, TimePoint) -> std::string {
        const Json* p = FindAt(o, {"status", "trainerStatus", "progressPercentage"});
        return p != nullptr && p->is_number_integer() ? fmt::format("{}%", p->get<int64_t>()) : "";
      }};
  PrinterColumn eta{
      "ETA", "string", "", 0, [](const Json& o, TimePoint) -> std::string {
        const Json* s = FindAt(o, {"status", "trainerStatus", "estimatedRemainingSeconds"});
        if (s == nullptr || !s->is_number_integer()) return "";
        return HumanDuration(std::chrono::seconds(s->get<int64_t>()));
      }};
  // Before Age, as kubectl lists a kind's own columns.
  columns.insert(columns.end() - 1, {std::move(progress), std::move(eta)});
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
