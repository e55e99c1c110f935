// The JobSet controller (jobset.x-k8s.io/v1alpha2), as upstream's behaves
// for what Trainer v2's runtimes use, on the local engine: each replicated
// job becomes `replicas` Indexed batch/v1 Jobs named
// `<jobset>-<replicatedJob>-<index>`, labelled as JobSet labels them, their
// pods in the JobSet's subdomain (a headless Service of that name); a
// replicated job is created once those it dependsOn are Ready or Complete
// (or, under startupPolicy InOrder, once the one before it is Ready);
// volumeClaimPolicies' claims are made first and mounted where asked. A
// name it needs that another object holds is waited for, never taken.
// successPolicy (All or Any of the target jobs complete) completes it; a
// failed Job restarts every Job (a new restart-attempt) while the
// failurePolicy's maxRestarts allows, else fails it, with upstream's
// reasons and messages; rules pick FailJobSet, RestartJobSet or
// RestartJobSetAndIgnoreMaxRestarts by the Job's replicated job, failure
// reason and message. suspend reaches every Job, and a resumed Job takes
// the pod template's placement as it is now. A finished JobSet keeps its
// finished Jobs, stops the others, and goes after ttlSecondsAfterFinished.
// Status: conditions, restarts, terminalState and replicatedJobsStatus.
#pragma once

#include "common/clock.h"
#include "controller/reconciler.h"
#include "store/object_store.h"

namespace trainyard::controller {

struct JobSetReconcilerOptions {
  store::ObjectStore* store = nullptr;
  const Clock* clock = nullptr;
};

class JobSetReconciler final : public Reconciler {
 public:
  explicit JobSetReconciler(JobSetReconcilerOptions options) : options_(std::move(options)) {}

  std::vector<std::string> Kinds() const override { return {"JobSet"}; }
  Result<ReconcileResult> Reconcile(const store::ObjectKey& key) override;

 private:
  JobSetReconcilerOptions options_;
};

}  // namespace trainyard::controller
