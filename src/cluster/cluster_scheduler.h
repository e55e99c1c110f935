// trainyard's gang scheduler as a secondary scheduler on a Kubernetes
// cluster (`trainyard operator --gang-scheduler-name trainyard`). The job
// controller gives each job a scheduling.x-k8s.io PodGroup and its pods
// `schedulerName: trainyard` and the group's label, as for scheduler-
// plugins' coscheduling (controller/pod_groups.h); this places them:
//  - capacity: the Nodes' allocatable, labels, taints and cordons, less
//    what every unfinished pod bound to them asks for, whichever scheduler
//    bound it;
//  - gangs: the pods of one PodGroup, minMember of them placed at once or
//    none (minResources gating the attempt); a pod without the label is a
//    gang of one; a pod whose PodGroup does not exist waits for it;
//  - the decision: the same pure scheduler as standalone
//    (scheduler/scheduler.h), by the pods' spec.priority, then age;
//  - placed pods are bound through pods/binding (`bind`), with a Scheduled
//    event; the pods of a gang that waits get PodScheduled=False, reason
//    Unschedulable, with the scheduler's message, and a FailedScheduling
//    event, as kube-scheduler writes them.
// Not done on a cluster: preemption and eviction (no pod is ever deleted
// here), GPU ids (the kubelet's device plugin picks the devices; counts are
// placed), queues and quotas (Kueue's work on a cluster).
//
// Threads: Run() on one; the store's informer threads wake it; RequestStop()
// from any thread.
#pragma once

#include <functional>
#include <set>
#include <string>

#include "common/clock.h"
#include "common/log.h"
#include "common/mutex.h"
#include "store/object_store.h"

namespace trainyard::cluster {

struct ClusterSchedulerOptions {
  // Where what is neither a status nor an event is said.
  Logger* log = &StderrLog();
  // Nodes, Pods (every namespace) and scheduler-plugins PodGroups are read.
  store::ObjectStore* store = nullptr;
  const Clock* clock = &RealClock::Get();
  std::string scheduler_name = "trainyard";  // the pods' spec.schedulerName
  // Assigns a pod to a node (POST pods/<pod>/binding).
  std::function<Status(const std::string& namespace_, const std::string& pod,
                       const std::string& node)>
      bind;
};

// What one pass did.
struct SchedulingPass {
  int bound = 0;    // pods bound
  int waiting = 0;  // pods left waiting
};

class ClusterScheduler {
 public:
  explicit ClusterScheduler(ClusterSchedulerOptions options);
  ~ClusterScheduler();

  // Places what can be placed now, as the store has the cluster.
  Result<SchedulingPass> Pass();
  // Passes at start and after each change to a pod, node or PodGroup, until
  // RequestStop. A pass that fails is retried a second later.
  Status Run();
  void RequestStop();

 private:
  ClusterSchedulerOptions options_;
  std::set<std::string> said_unreadable_;  // nodes said not to be placed on
  store::WatchId watch_ = 0;
  Mutex mu_;
  CondVar wake_;
  bool changed_ TRAINYARD_GUARDED_BY(mu_) = true;
  bool stop_ TRAINYARD_GUARDED_BY(mu_) = false;
};

}  // namespace trainyard::cluster
