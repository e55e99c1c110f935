// The engine's scheduling step: reads the store into a snapshot
// (cluster_snapshot.h), asks the pure scheduler (scheduler/) for a
// decision, and carries it out:
// - placements bind pods: spec.nodeName, and the GPU ids in the pod's
//   trainyard.dev/gpus annotation (the node agent turns them into
//   CUDA_VISIBLE_DEVICES);
// - a waiting gang's pods get PodScheduled False with the reason and a
//   message naming the quota or resource that is short and the gang's place
//   in its queue; the job gets an event when the reason changes;
// - evicted gangs (preempted, or past their schedule timeout) lose their
//   pods, which their job controller creates again, pending;
// - ClusterQueues, LocalQueues and ResourceQuotas get their status: what
//   is pending, admitted, in use and borrowed.
#pragma once

#include <string>
#include <vector>

#include "common/clock.h"
#include "engine/cluster_snapshot.h"
#include "scheduler/scheduler.h"
#include "store/object_store.h"

namespace trainyard::engine {

struct SchedulerStepOptions {
  store::ObjectStore* store = nullptr;
  const Clock* clock = nullptr;
  std::vector<scheduler::Node> nodes;
  scheduler::Policy policy = scheduler::Policy::kBinPack;
};

class SchedulerStep {
 public:
  explicit SchedulerStep(SchedulerStepOptions options) : options_(std::move(options)) {}
  Status Sync();

 private:
  Status Apply(ClusterSnapshot& cluster, const scheduler::Decision& decision);
  Status Bind(api::Json pod, const scheduler::Placement& placement);
  Status MarkWaiting(GangSource& source, const std::string& reason, const std::string& message);
  Status Evict(GangSource& source, const scheduler::Eviction& eviction);
  Status WriteStatuses(const ClusterSnapshot& cluster, const scheduler::Decision& decision);
  Status WriteStatusIfChanged(api::Json doc, api::Json status);

  SchedulerStepOptions options_;
  int64_t decided_at_version_ = -1;  // the store's version after the last decision
  TimePoint decided_at_;
  bool waiting_ = false;  // the last decision left gangs waiting
  bool evicted_ = false;  // ... and evicted some
};

}  // namespace trainyard::engine
