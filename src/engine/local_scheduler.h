// The engine's scheduler step: binds pending pods to this machine (sets
// spec.nodeName), all of a job's pending pods at once or none of them (a
// gang), when their requests fit in what bound, unfinished pods leave
// free. GPUs are given by index, lowest free first, and recorded in the
// pod's trainyard.dev/gpus annotation, which the node agent turns into
// CUDA_VISIBLE_DEVICES. A gang that does not fit gets PodScheduled False,
// reason Unschedulable, with a message naming the short resource; gangs
// are served in the order they were created, and one waiting for room
// holds back those after it, so a large job is never starved by small
// ones. A gang that could never fit (more than the whole machine) gets
// reason ExceedsCapacity instead, holds nothing back, and its job fails
// (the controller's part).
#pragma once

#include <string>

#include "common/clock.h"
#include "scheduler/fit.h"
#include "store/object_store.h"

namespace trainyard::engine {

struct LocalSchedulerOptions {
  store::ObjectStore* store = nullptr;
  const Clock* clock = nullptr;
  std::string node_name;
  scheduler::Machine machine;
};

class LocalScheduler {
 public:
  explicit LocalScheduler(LocalSchedulerOptions options) : options_(std::move(options)) {}
  Status Sync();

 private:
  struct Gang;
  // PodScheduled False, reason Unschedulable, on every pod of the gang
  // (written only when the message changes).
  Status MarkUnschedulable(Gang& gang, const std::string& reason, const std::string& message);

  LocalSchedulerOptions options_;
};

}  // namespace trainyard::engine
