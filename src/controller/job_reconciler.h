// The job controller for kubeflow.org/v1 jobs: level-triggered over the
// object store. Each Reconcile reads the job and its pods and moves the
// world one step closer to the spec; it is safe to run again at any time,
// and it tells its caller when it must run again even if nothing happens
// (activeDeadlineSeconds, ttlSecondsAfterFinished).
//
// Upstream's lifecycle (reference section 5), with its defects fixed:
//  - every restart counts against backoffLimit: in-place ones, ExitCode
//    re-creations, and the one pending (#2045, #2342);
//  - activeDeadlineSeconds fires from a timer, not only on other events
//    (#3358);
//  - when the job finishes, no replica keeps running, whatever the
//    cleanPodPolicy (#1982, #1579); the policy then decides which finished
//    pods (and their logs) are kept;
//  - cleanPodPolicy is honoured when the backoff limit is reached (#3419).
#pragma once

#include <string>

#include "api/well_known.h"
#include "common/clock.h"
#include "controller/reconciler.h"
#include "controller/replica_options.h"
#include "store/object_store.h"

namespace trainyard::controller {

struct JobReconcilerOptions {
  store::ObjectStore* store = nullptr;
  const Clock* clock = nullptr;
  ReplicaOptions replicas;
};

class JobReconciler final : public Reconciler {
 public:
  explicit JobReconciler(JobReconcilerOptions options) : options_(std::move(options)) {}

  // PyTorchJob, TFJob, XGBoostJob, MPIJob, PaddleJob, JAXJob.
  std::vector<std::string> Kinds() const override;
  Result<ReconcileResult> Reconcile(const store::ObjectKey& job_key) override;

 private:
  JobReconcilerOptions options_;
};

}  // namespace trainyard::controller
