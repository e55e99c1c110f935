// A snapshot in the scenario format (scenarios/README.md): what the
// property test prints for the smallest snapshot that still fails, ready
// to become a scenario.
#pragma once

#include <string>

#include "scheduler/scheduler.h"

namespace trainyard::scheduler::testing {

std::string ScenarioText(const Snapshot& s, const ScheduleOptions& options);

}  // namespace trainyard::scheduler::testing
