// An OptimizationJob's trials, which are TrainJobs: read back as the
// sampler's history (their parameters from an annotation, their objectives
// from what they reported), and made from its trainJobTemplate.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "api/optimization_job.h"
#include "common/clock.h"
#include "store/object_store.h"
#include "store/observation_log.h"
#include "tune/sampler.h"
#include "tune/space.h"

namespace trainyard::controller {

// One trial as the controller reads it.
struct OptimizationTrial {
  api::Json stored;  // the TrainJob
  std::string name;
  std::vector<api::NamedValue> parameters;
  tune::TrialState state = tune::TrialState::kPending;
  // Each objective's value, in the spec's order, as reported (a maximised
  // one not negated); empty unless it ended Complete with all of them.
  std::vector<double> values;
  std::vector<api::NamedValue> metrics;  // the same, as reported
};

// The TrainJobs `job` controls, in creation order, with their states and
// objectives. A Complete trial whose objectives are not yet read stays
// pending for `grace` after it completed (its output's last lines may
// still be collected), then counts as failed: never told to the sampler.
// `observations` may be null (no output is collected where it runs).
Result<std::vector<OptimizationTrial>> ReadOptimizationTrials(
    const store::ObjectReader& store, const store::ObservationLog* observations,
    const api::CoreObject& job, const api::OptimizationJobSpec& spec, TimePoint now,
    Duration grace);

// The history as the sampler sees it: one objective as its loss (negated
// when maximised); several as their Pareto rank (tune/pareto.h), so that
// any sampler searches for the front.
Result<std::vector<tune::TrialRecord>> OptimizationRecords(
    const tune::Space& space, const api::OptimizationJobSpec& spec,
    const std::vector<OptimizationTrial>& trials);

// The sampler `spec.searchAlgorithm` names, seeded by random.seed, or by
// the job's uid.
tune::SamplerOptions OptimizationSamplerOptions(const api::OptimizationJobSpec& spec,
                                                const std::string& uid);

// The TrainJob of trial `index`: the template's metadata and spec, each
// parameter as KUBEFLOW_TRAINER_OPT_<NAME> in spec.trainer.env, owned by
// `job`. Named <job>-trial-<index>, so that a second create of the same
// trial (after a crash, or from a stale read) fails instead of running it
// twice.
api::Json BuildOptimizationTrial(const api::CoreObject& job, const api::OptimizationJobSpec& spec,
                                 const tune::Space& space, const tune::Suggestion& suggestion,
                                 int64_t index);

// The index the next trial takes: one past the highest any has (not their
// count: a trial deleted by hand leaves a gap, and its successor must not
// take a name still in use).
int64_t NextTrialIndex(const std::vector<OptimizationTrial>& trials);

// The trial's name: <job>-trial-<index>, a DNS-1035 label of at most 63
// characters (a long or dotted job name is shortened, with a hash of it).
std::string OptimizationTrialName(const std::string& job, int64_t index);

// The best trial (several objectives: the front's best in the first), and
// the Pareto front (several objectives only; the trials no other
// dominates, in creation order).
struct OptimizationOutcome {
  std::optional<api::OptimizationTrialResult> best;
  std::vector<api::OptimizationTrialResult> front;
  std::vector<api::OptimizationTrialResult> reported;  // every trial told, in order
};
OptimizationOutcome SummarizeOptimization(const api::OptimizationJobSpec& spec,
                                          const std::vector<OptimizationTrial>& trials);

// What a job's status may hold (as JSON), well under what etcd keeps of a
// whole object (1.5 MiB): 100 trials of 100 parameters would pass it.
inline constexpr size_t kMaxOptimizationStatusBytes = 256 * 1024;

// Keeps `status` within `max_bytes`: the trials' parameters are left out
// of trialResults, then of the front (each trial's TrainJob keeps them in
// its annotation); `result` keeps its own (upstream's field).
void BoundOptimizationStatus(api::OptimizationJobStatus& status,
                             size_t max_bytes = kMaxOptimizationStatusBytes);

}  // namespace trainyard::controller
