// What the scheduler decided, as a value: pods to bind, gangs that wait and
// why, gangs to evict. Applying it (binding pods, deleting victims, writing
// conditions) is the caller's business.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace trainyard::scheduler {

struct Placement {
  std::string gang;
  std::string pod;
  std::string node;
  std::map<std::string, std::vector<std::string>> devices;  // resource -> ids
};

// Why a gang has no (full) placement. Reasons are CamelCase words a
// program may switch on; messages are for people.
struct Waiting {
  std::string gang;
  std::string reason;   // one of the kReason* below
  std::string message;  // names the queue, quota or resource that is short
  int position = 0;     // 1-based among the pending gangs of its queue
};

inline constexpr char kReasonUnschedulable[] = "Unschedulable";
inline constexpr char kReasonExceedsCapacity[] = "ExceedsCapacity";  // never fits, even alone
inline constexpr char kReasonQuotaExceeded[] = "QuotaExceeded";  // ClusterQueue or ResourceQuota
inline constexpr char kReasonInadmissible[] =
    "Inadmissible";  // queue missing or stopped, resource not covered
inline constexpr char kReasonPreempting[] =
    "Preempting";                                  // victims chosen, waiting for them to stop
inline constexpr char kReasonQueued[] = "Queued";  // behind an earlier gang of a StrictFIFO queue

struct Eviction {
  std::string gang;
  std::string reason;  // Preempted | ScheduleTimeout
  std::string message;
};

inline constexpr char kReasonPreempted[] = "Preempted";
inline constexpr char kReasonScheduleTimeout[] = "ScheduleTimeout";

struct Decision {
  std::vector<Placement> placements;  // in the order they were made
  std::vector<Waiting> waiting;       // sorted by gang id
  std::vector<Eviction> evictions;    // sorted by gang id
};

}  // namespace trainyard::scheduler
