// The Katib Experiment controller: level-triggered over the store. Each
// Reconcile reads the experiment and its trials and takes one step: status
// (counts, lists, best trial), the verdict that ends it (goal, failures,
// max trials, suggestions exhausted), early stopping of running trials, and
// new trials from the in-process sampler up to parallelTrialCount. There is
// no suggestion service and no database server: the sampler is a pure
// function of the trials, so nothing is lost if the engine dies between
// steps; the Suggestion object reports what was asked and given.
//
// Upstream's defects fixed here: running trials are stopped (Killed) when
// the experiment ends (#2061); an algorithm that runs out ends the
// experiment (ExperimentSuggestionEndReached, dead upstream); medianstop
// is applied at every report, against a true median.
#pragma once

#include <functional>
#include <optional>
#include <random>

#include "api/katib.h"
#include "common/clock.h"
#include "controller/reconciler.h"
#include "controller/sampler_cache.h"
#include "store/object_store.h"
#include "store/observation_log.h"

namespace trainyard::controller {

struct ExperimentReconcilerOptions {
  store::ObjectStore* store = nullptr;
  store::ObservationLog* observations = nullptr;
  const Clock* clock = nullptr;
  // Where trials' own directories live (trial_dir.h): an experiment's go
  // with it.
  std::string trial_dirs;
  // Why an experiment cannot run where this controller runs (on a cluster:
  // collectors that need the pod's files); nullopt: it can. One that
  // cannot ends Failed, reason ExperimentNotSupported, with the why.
  std::function<std::optional<std::string>(const api::Experiment&)> unsupported;
  // On a cluster whose API server may call no webhook of ours, an
  // experiment can be stored that `trainyard validate` refuses: it is said
  // as an ExperimentFailedValidation event with every error, and nothing is
  // made for it until it changes (as the job controller does for jobs).
  bool check_stored = false;
};

class ExperimentReconciler final : public Reconciler {
 public:
  explicit ExperimentReconciler(ExperimentReconcilerOptions options)
      : options_(std::move(options)) {}
  std::vector<std::string> Kinds() const override { return {"Experiment"}; }
  Result<ReconcileResult> Reconcile(const store::ObjectKey& experiment_key) override;

 private:
  ExperimentReconcilerOptions options_;
  SamplerCache samplers_;
  std::mt19937 random_{std::random_device{}()};  // trial name suffixes
};

}  // namespace trainyard::controller
