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

#include "controller/job_reconciler.h"

namespace trainyard::controller {

inline constexpr std::string_view kBatchJobNameLabel = "batch.kubernetes.io/job-name";
inline constexpr std::string_view kBatchControllerUidLabel = "batch.kubernetes.io/controller-uid";
inline constexpr std::string_view kBatchCompletionIndex =
    "batch.kubernetes.io/job-completion-index";

class BatchJobReconciler {
 public:
  explicit BatchJobReconciler(ReconcilerOptions options) : options_(std::move(options)) {}

  Result<ReconcileResult> Reconcile(const store::ObjectKey& job_key);

 private:
  ReconcilerOptions options_;
  std::mt19937 random_{std::random_device{}()};  // pod name suffixes
};

}  // namespace trainyard::controller
