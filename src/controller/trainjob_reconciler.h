// The TrainJob controller (Kubeflow Trainer v2), as upstream's behaves
// (reference §8.4), with its known holes closed: it reads the runtime the
// job names (a ClusterTrainingRuntime, or a TrainingRuntime in the job's
// namespace), checks what the job asks of it, and writes the JobSet (and
// an MPI runtime's hostfile ConfigMap) that controller/trainjob_build.h
// makes; a running JobSet is rebuilt only while suspended. Its status
// follows the JobSet: Complete and Failed copied with their reasons and
// messages, jobsStatus mirrored; Suspended with upstream's reasons and
// messages; activeDeadlineSeconds from a timer, restarted on resume
// (DeadlineExceeded deletes the JobSet). A runtime that is missing gives
// Failed, TrainingRuntimeNotSupported, until it appears (looked for again
// every few seconds), as upstream clears that condition. managedBy is
// honoured (upstream ignored it before v2.3).
//
// On one machine the rendezvous is 127.0.0.1 and a port of the job's own;
// on a cluster (options.cluster) upstream's DNS name and port 29500.
#pragma once

#include "common/clock.h"
#include "controller/reconciler.h"
#include "controller/replica_options.h"
#include "store/object_store.h"

namespace trainyard::controller {

struct TrainJobReconcilerOptions {
  store::ObjectStore* store = nullptr;
  const Clock* clock = nullptr;
  ReplicaOptions replicas;
  // The trainyard binary a TrainJob's initializer steps run on one machine
  // (controller/trainjob_build.h); empty: none.
  std::string trainyard_program;
};

class TrainJobReconciler final : public Reconciler {
 public:
  explicit TrainJobReconciler(TrainJobReconcilerOptions options) : options_(std::move(options)) {}

  std::vector<std::string> Kinds() const override { return {"TrainJob"}; }
  Result<ReconcileResult> Reconcile(const store::ObjectKey& key) override;

 private:
  TrainJobReconcilerOptions options_;
};

}  // namespace trainyard::controller
