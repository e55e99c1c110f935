// `trainyard describe experiment|trial`: the objective, algorithm, counts,
// best trial and conditions of an Experiment; the assignments, observation
// and conditions of a Trial. The caller prints the header and events.
#pragma once

#include <ostream>

#include "api/json.h"

namespace trainyard::cli {

void PrintKatibDescription(const api::Json& object, std::ostream& out);

// A trial's observation log (GET .../trials/NAME/observations): its last
// `limit` values, one per line, saying how many earlier ones were left out.
void PrintObservationLog(const api::Json& log, size_t limit, std::ostream& out);

}  // namespace trainyard::cli
