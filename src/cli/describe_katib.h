// `trainyard describe experiment|trial`: the objective, algorithm, counts,
// best trial and conditions of an Experiment; the assignments, observation
// and conditions of a Trial. The caller prints the header and events.
#pragma once

#include <ostream>

#include "api/json.h"

namespace trainyard::cli {

void PrintKatibDescription(const api::Json& object, std::ostream& out);

}  // namespace trainyard::cli
