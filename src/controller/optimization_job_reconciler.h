// The OptimizationJob controller (Kubeflow Trainer v2.3's CRD, which has
// no controller upstream yet; KEP-2605/3562 describes one): level-triggered
// over the store. Each Reconcile reads the job and the TrainJobs it owns
// (its trials), writes what they say (counts, the best result so far, the
// Pareto front for several objectives), ends it once numTrials trials have
// ended (or the search space is used up), and asks the in-process sampler
// for new trials up to parallelTrials running. The sampler is a pure
// function of the trials, so a restart resumes where it was: nothing but
// the TrainJobs holds the search's state.
//
// Conditions, as the KEP names them: Created (TrainJobsCreated, or False
// with TrainJobsCreationFailed), then Complete (MaxTrialsReached,
// SearchSpaceExhausted) or Failed (AllTrialsFailed, TrainJobsCreationFailed).
#pragma once

#include "common/clock.h"
#include "controller/reconciler.h"
#include "controller/sampler_cache.h"
#include "store/object_store.h"
#include "store/observation_log.h"

namespace trainyard::controller {

struct OptimizationJobReconcilerOptions {
  store::ObjectStore* store = nullptr;
  // Where a trial's printed metrics are found when it pushes none; null
  // where no output is collected.
  const store::ObservationLog* observations = nullptr;
  const Clock* clock = nullptr;
  // How long a Complete trial may wait for its last output to be read
  // before it counts as failed for want of its objective.
  Duration metric_grace = std::chrono::seconds(10);
  // On a cluster whose API server calls no webhook of ours: a stored job
  // `trainyard validate` refuses is said in an event, and nothing is made.
  bool check_stored = false;
};

class OptimizationJobReconciler final : public Reconciler {
 public:
  explicit OptimizationJobReconciler(OptimizationJobReconcilerOptions options)
      : options_(std::move(options)) {}
  std::vector<std::string> Kinds() const override { return {"OptimizationJob"}; }
  Result<ReconcileResult> Reconcile(const store::ObjectKey& key) override;

 private:
  OptimizationJobReconcilerOptions options_;
  SamplerCache samplers_;
};

}  // namespace trainyard::controller
