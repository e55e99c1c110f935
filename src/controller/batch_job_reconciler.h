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
#include "controller/job_reconciler.h"

namespace trainyard::controller {

class BatchJobReconciler final : public Reconciler {
 public:
  explicit BatchJobReconciler(ReconcilerOptions options) : options_(std::move(options)) {}

  std::vector<std::string> Kinds() const override { return {"Job"}; }
  Result<ReconcileResult> Reconcile(const store::ObjectKey& job_key) override;

 private:
  ReconcilerOptions options_;
  std::mt19937 random_{std::random_device{}()};  // pod name suffixes
};

}  // namespace trainyard::controller
