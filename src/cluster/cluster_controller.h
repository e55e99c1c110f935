// The control loop of `trainyard operator`: the same reconcilers as the
// embedded engine, over a store backed by a Kubernetes API server (the
// job kinds, and with Katib on, Experiments and Trials, whose StdOut
// metrics are read from their pods' logs; an experiment whose collector
// reads files in the trial pods is refused there, Failed with the reason). No
// scheduler, node agent or garbage collector runs here: on a cluster the
// kube-scheduler, the kubelets and the cluster's garbage collector do that
// work. Changes the store's informers see wake the loop; timers the
// reconcilers ask for (deadlines, TTLs, retries) too.
//
// Threads: Run() on one; the store's informer threads hand it changes
// through a queue; RequestStop() from any thread or a signal handler.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cluster/pod_log_metrics.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/mutex.h"
#include "controller/reconciler.h"
#include "controller/replica_options.h"
#include "engine/reconcile_queue.h"
#include "store/object_store.h"
#include "store/observation_log.h"

namespace trainyard::cluster {

struct ClusterControllerOptions {
  // Where what is neither a status nor an event is said.
  Logger* log = &StderrLog();
  store::ObjectStore* store = nullptr;  // started: its caches filled
  const Clock* clock = &RealClock::Get();
  // The job kinds reconciled (upstream's --enable-scheme).
  std::vector<std::string> job_kinds;
  // How replicas are addressed and decorated on the cluster.
  controller::ReplicaOptions::Cluster cluster;
  // What an MPIJob's launcher runs a command in a worker with.
  std::string exec_command = "kubectl exec";
  // Katib's Experiments and Trials too (`trainyard operator --katib`):
  // trials' observations are kept in `observations` (the operator's own
  // store, on a volume), and Push trials push to `push_url`.
  struct Katib {
    store::ObservationLog* observations = nullptr;
    std::string push_url;
    // How StdOut trials' pod logs are read (the API's pods/log).
    PodLogSource pod_logs;
  };
  std::optional<Katib> katib;
  // Kubeflow Trainer v2's TrainJobs too (`trainyard operator --trainer`).
  bool trainer = false;
  engine::ReconcileQueue::OnReconcile on_reconcile;
};

class ClusterController {
 public:
  explicit ClusterController(ClusterControllerOptions options);
  ~ClusterController();

  // Reconciles every object there is, then each change, until RequestStop.
  Status Run();
  // Thread-safe (not async-signal-safe: use a self-pipe to call it).
  void RequestStop();

 private:
  // Waits until a change, a due timer, or a stop.
  void Wait();

  ClusterControllerOptions options_;
  std::vector<std::unique_ptr<controller::Reconciler>> reconcilers_;
  engine::ReconcileQueue queue_;
  std::optional<PodLogMetrics> pod_logs_;  // with Katib: StdOut trials' logs read
  store::WatchId watch_ = 0;
  Mutex mu_;
  CondVar wake_;
  std::vector<api::Json> changed_ TRAINYARD_GUARDED_BY(mu_);  // from the informers
  bool stop_ TRAINYARD_GUARDED_BY(mu_) = false;
};

}  // namespace trainyard::cluster
