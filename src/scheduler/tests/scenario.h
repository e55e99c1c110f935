// Scheduler scenarios as data: a YAML document gives a cluster snapshot
// (nodes, queues, quotas, gangs) and the decision expected for it. The
// format is compact on purpose; see scenarios/README.md.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "scheduler/scheduler.h"

namespace trainyard::scheduler::testing {

struct Expectation {
  std::map<std::string, std::string> placements;  // "gang/pod" -> node
  std::map<std::string, std::string> devices;     // "gang/pod" -> "0,1"
  // gang -> "Reason" or "Reason: text the message contains"
  std::map<std::string, std::string> waiting;
  std::map<std::string, std::string> evictions;  // gang -> reason
  std::map<std::string, int> positions;          // gang -> place in its queue
};

struct Scenario {
  std::string name;
  std::string file;
  Snapshot snapshot;
  ScheduleOptions options;
  Expectation expect;
};

Result<std::vector<Scenario>> LoadScenarios(const std::string& path);

// Every difference between `decision` and `expect`, one per line; empty
// when they agree.
std::string Compare(const Decision& decision, const Expectation& expect);

// Every field of a decision, a line per placement, wait and eviction: equal
// texts, equal decisions.
std::string Render(const Decision& decision);

}  // namespace trainyard::scheduler::testing
