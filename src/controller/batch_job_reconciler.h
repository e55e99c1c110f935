// The batch/v1 Job controller, as Kubernetes' job controller behaves for
// what a Katib trial or a one-role training run needs: `parallelism` pods
// at a time until `completions` have succeeded (NonIndexed), or one pod
// per index with JOB_COMPLETION_INDEX (Indexed); every failure, pod
// failures and in-place restarts alike, counts against backoffLimit
// (default 6); podFailurePolicy's exit-code rules (FailJob, Ignore,
// Count); activeDeadlineSeconds from a timer; suspend and resume;
// ttlSecondsAfterFinished. Conditions and reasons are Kubernetes': Complete
// (CompletionsReached), Failed (BackoffLimitExceeded, DeadlineExceeded,
// PodFailurePolicy), Suspended (JobSuspended / JobResumed). A finished job
// keeps its finished pods and stops its active ones.
#pragma once

#include <random>

#include "api/well_known.h"
#include "common/clock.h"
#include "controller/reconciler.h"
#include "store/object_store.h"

namespace trainyard::controller {

struct BatchJobReconcilerOptions {
  store::ObjectStore* store = nullptr;
  const Clock* clock = nullptr;
};

class BatchJobReconciler final : public Reconciler {
 public:
  explicit BatchJobReconciler(BatchJobReconcilerOptions options) : options_(std::move(options)) {}

  std::vector<std::string> Kinds() const override { return {"Job"}; }
  Result<ReconcileResult> Reconcile(const store::ObjectKey& job_key) override;

 private:
  BatchJobReconcilerOptions options_;
  std::mt19937 random_{std::random_device{}()};  // pod name suffixes
};

}  // namespace trainyard::controller
