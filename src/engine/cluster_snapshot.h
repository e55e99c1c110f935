// Reads the store into the scheduler's snapshot: pods grouped into gangs by
// the job that owns them, each gang with its job's scheduling policy
// (minAvailable, minResources, priorityClass, queue, scheduleTimeoutSeconds,
// activeDeadlineSeconds), its queue resolved through the LocalQueue named by
// the kueue.x-k8s.io/queue-name label or schedulingPolicy.queue, and the
// ClusterQueues, PriorityClasses and ResourceQuotas as configured.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "api/json.h"
#include "common/clock.h"
#include "scheduler/snapshot.h"
#include "store/object_store.h"

namespace trainyard::engine {

// What the snapshot's gangs stand for in the store.
struct GangSource {
  api::Json owner;                 // the job (or the pod itself, for a bare pod)
  std::string local_queue;         // "namespace/name", empty when none
  std::vector<api::Json> pending;  // pod documents, as stored
  std::vector<api::Json> bound;
  // Set when the gang cannot be considered at all (a PriorityClass or
  // LocalQueue that does not exist): why it is Inadmissible.
  std::string problem;
};

struct ClusterSnapshot {
  scheduler::Snapshot snapshot;
  std::map<std::string, GangSource> sources;         // by gang id
  std::map<std::string, api::Json> cluster_queues;   // by name, as stored
  std::map<std::string, api::Json> local_queues;     // by "namespace/name"
  std::map<std::string, api::Json> resource_quotas;  // by "namespace/name"
};

Result<ClusterSnapshot> ReadClusterSnapshot(const store::ObjectStore& store,
                                            const std::vector<scheduler::Node>& nodes,
                                            TimePoint now);

// Quantities by resource name ({"cpu": "500m"}) in milli-units; what does
// not parse is left out.
scheduler::Amounts AmountsOf(const api::Json& map);
// Where a pod may go: its nodeSelector, required node affinity and
// tolerations.
scheduler::PodConstraints ConstraintsOf(const api::PodSpec& spec);

// A gang's id: "PyTorchJob default/train", "Pod default/p".
std::string GangId(const api::Json& owner);

}  // namespace trainyard::engine
