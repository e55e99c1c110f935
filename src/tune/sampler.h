// Samplers: Katib's suggestion algorithms, in-process and pure.
//
// A sampler's answer is a function of the space, its options and the trials
// so far, nothing else: the experiment controller rebuilds a sampler from the
// store after a crash and asks again, and gets the same suggestions for the
// same history. Randomness comes from a generator seeded with `seed` and the
// history's length, never from the clock.
//
// Objectives are losses: the caller negates a maximised metric, so every
// sampler minimises.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "tune/space.h"

namespace trainyard::tune {

// Katib's algorithmSettings: name/value strings, in the order given.
using Settings = std::vector<std::pair<std::string, std::string>>;

enum class TrialState {
  kPending,  // created or running: its point is taken, its result unknown
  kSucceeded,
  kEarlyStopped,  // finished early; its objective is what it reached
  kFailed,        // failed, killed or without metrics: taken, never told
};

// One trial as the sampler sees it, in creation order.
struct TrialRecord {
  std::string name;  // the Trial's: pbt names a trial's parent by it
  Point point;
  std::map<std::string, std::string> labels;  // as the sampler set them
  TrialState state = TrialState::kPending;
  std::optional<double> loss;  // succeeded and early-stopped trials with a metric
};

struct Suggestion {
  Point point;
  // Labels the trial carries (hyperband's bracket and rung); the sampler
  // reads them back from TrialRecord.labels.
  std::map<std::string, std::string> labels;
};

struct SuggestResult {
  std::vector<Suggestion> suggestions;  // at most the count asked for
  // The algorithm has nothing more to offer (grid done, hyperband's last
  // bracket done, a finite space used up): the experiment succeeds with
  // ExperimentSuggestionEndReached once its trials finish.
  bool exhausted = false;
};

class Sampler {
 public:
  virtual ~Sampler() = default;
  // Up to `count` new points, none equal to each other or to the point of any
  // trial in `trials` (pending, finished or failed), but for pbt, whose
  // trials continue their parents' training. Fewer than `count` when the
  // algorithm must first see results (hyperband between rungs, pbt between
  // generations) or the space runs out.
  virtual Result<SuggestResult> Suggest(std::span<const TrialRecord> trials, int count) = 0;
  // Whether this sampler, kept from one Suggest to the next, answers as a
  // new one would, only sooner (what it keeps is derived from the history
  // it is given, as the GP's fitted hyperparameters): a controller may
  // then keep it between reconciles.
  virtual bool worth_keeping() const { return false; }
};

// Population-based training's labels, upstream's keys: a trial's generation,
// and the trial whose checkpoint it starts from.
inline constexpr std::string_view kPbtGenerationLabel =
    "pbt.suggestion.katib.kubeflow.org/generation";
inline constexpr std::string_view kPbtParentLabel = "pbt.suggestion.katib.kubeflow.org/parent";
// The algorithm setting (pbt's) that gives each trial a directory of its
// own, mounted in its primary container at the setting's path and kept
// while the experiment lives; a trial with a parent starts with a copy of
// the parent's directory.
inline constexpr std::string_view kTrialDirSetting = "suggestion_trial_dir";

struct SamplerOptions {
  std::string algorithm;  // Katib's algorithmName
  Settings settings;
  // The experiment's limits: grid and hyperband check them.
  std::optional<int> max_trial_count;
  int parallel_trial_count = 3;
  // Used when settings have no random_state (the controller derives it from
  // the experiment's uid, so one experiment is reproducible).
  uint64_t default_seed = 0;
};

// The algorithms MakeSampler knows, in Katib's spelling.
const std::vector<std::string>& SamplerNames();

// Checks the settings as the algorithm's ValidateAlgorithmSettings does, with
// upstream's messages where it has them ("unknown setting foo for algorithm
// tpe"), and builds the sampler. An unknown algorithm is NotFound; bad
// settings are InvalidArgument.
Result<std::unique_ptr<Sampler>> MakeSampler(const Space& space, const SamplerOptions& options);

}  // namespace trainyard::tune
