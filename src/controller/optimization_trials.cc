#include "controller/optimization_trials.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "api/names.h"
#include "api/object.h"
#include "common/strings.h"
#include "controller/owned.h"
#include "tune/metrics.h"
#include "tune/pareto.h"

namespace trainyard::controller {
namespace {

int64_t TrialIndex(const api::Json& trial) {
  std::string text = api::StringAt(
      trial, {"metadata", "labels", std::string(api::kOptimizationTrialIndexLabel).c_str()});
  return text.empty() ? INT64_MAX : std::strtoll(text.c_str(), nullptr, 10);
}

std::vector<api::NamedValue> ParametersOf(const api::Json& trial) {
  std::string text = api::StringAt(
      trial,
      {"metadata", "annotations", std::string(api::kOptimizationParametersAnnotation).c_str()});
  std::vector<api::NamedValue> out;
  api::Json parsed = api::Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object()) return out;
  for (const auto& [name, value] : parsed.items()) {
    if (value.is_string()) out.push_back({.name = name, .value = value.get<std::string>()});
  }
  return out;
}

// When its Complete condition became True; nullopt if it is not.
std::optional<TimePoint> CompletedAt(const api::Json& trial) {
  for (const api::Json& c : api::ArrayRefAt(trial, {"status", "conditions"})) {
    if (api::StringAt(c, "type") == "Complete" && api::StringAt(c, "status") == "True") {
      return ParseRfc3339(api::StringAt(c, "lastTransitionTime"));
    }
  }
  return std::nullopt;
}

// A metric's last value: as its trainer pushed it (status.trainerStatus,
// KEP-2779), or else as trainyard read it from its output.
// `summary`: what was read of its output, summarized once per trial (null
// where none is read).
std::optional<std::string> MetricOf(const api::Json& trial,
                                    const store::ObservationSummary* summary,
                                    const std::string& metric) {
  // A report trainyard derived from the output may lag the output's
  // summary, which is read instead.
  const api::Json* report = api::FindAt(trial, {"status", "trainerStatus"});
  bool pushed = report != nullptr && report->is_object() && !report->contains("derivedFrom");
  for (const api::Json& m : pushed ? api::ArrayRefAt(*report, {"metrics"}) : api::Json::array()) {
    if (api::StringAt(m, "name") == metric) return api::StringAt(m, "value");
  }
  if (summary == nullptr) return std::nullopt;
  for (const store::ObservationSeries& s : summary->series) {
    if (s.metric == metric) return s.latest.value;
  }
  return std::nullopt;
}

// Reads the objectives of a Complete trial into `trial`; false when one
// is missing or no number.
Result<bool> ReadObjectives(const store::ObservationLog* observations,
                            const api::OptimizationJobSpec& spec, OptimizationTrial& trial) {
  std::optional<store::ObservationSummary> summary;
  if (observations != nullptr) {
    ASSIGN_OR_RETURN(
        summary,
        observations->SummarizeObservations(store::JobObservationsId(
            "TrainJob", api::StringAt(trial.stored, {"metadata", "namespace"}), trial.name)));
  }
  for (const api::OptimizationObjective& o : spec.objectives) {
    std::optional<std::string> text =
        MetricOf(trial.stored, summary ? &*summary : nullptr, o.metric);
    std::optional<double> value = text ? tune::ParseMetricValue(*text) : std::nullopt;
    if (!value || !std::isfinite(*value)) {
      trial.values.clear();
      trial.metrics.clear();
      return false;
    }
    trial.values.push_back(*value);
    trial.metrics.push_back({.name = o.metric, .value = *text});
  }
  return true;
}

tune::Losses LossesOf(const api::OptimizationJobSpec& spec, const OptimizationTrial& trial) {
  tune::Losses losses;
  for (size_t m = 0; m < spec.objectives.size(); ++m) {
    bool maximize = spec.objectives[m].direction == "Maximize";
    losses.push_back(maximize ? -trial.values[m] : trial.values[m]);
  }
  return losses;
}

// Ended with its objectives: succeeded, or stopped early with what it reached.
bool Told(const OptimizationTrial& trial) {
  return trial.state == tune::TrialState::kSucceeded ||
         trial.state == tune::TrialState::kEarlyStopped;
}

api::OptimizationTrialResult ResultOf(const OptimizationTrial& trial) {
  return {.train_job_name = trial.name, .parameters = trial.parameters, .metrics = trial.metrics};
}

void SetEnv(std::vector<api::EnvVar>& env, const std::string& name, const std::string& value) {
  std::erase_if(env, [&](const api::EnvVar& e) { return e.name == name; });
  env.push_back({.name = name, .value = value});
}

}  // namespace

Result<std::vector<OptimizationTrial>> ReadOptimizationTrials(
    const store::ObjectReader& store, const store::ObservationLog* observations,
    const api::CoreObject& job, const api::OptimizationJobSpec& spec, TimePoint now,
    Duration grace) {
  std::vector<api::Json> owned;
  RETURN_IF_ERROR(store.ScanOwnedBy("TrainJob", job.metadata.uid, [&](const api::Json& trial) {
    if (ControlledBy(trial, job.metadata.uid)) owned.push_back(trial);
  }));
  std::stable_sort(owned.begin(), owned.end(), [](const api::Json& a, const api::Json& b) {
    return TrialIndex(a) < TrialIndex(b);
  });
  std::vector<OptimizationTrial> trials;
  for (api::Json& stored : owned) {
    OptimizationTrial trial{.name = api::StringAt(stored, {"metadata", "name"}),
                            .parameters = ParametersOf(stored)};
    trial.stored = std::move(stored);
    std::optional<std::string> outcome = api::JobOutcome(trial.stored);
    bool stopped = !api::StringAt(trial.stored,
                                  {"metadata", "annotations",
                                   std::string(api::kOptimizationEarlyStoppedAnnotation).c_str()})
                        .empty();
    if (stopped && outcome != "Failed") {
      // What it reached before it was stopped is what it has.
      ASSIGN_OR_RETURN(bool read, ReadObjectives(observations, spec, trial));
      trial.state = read ? tune::TrialState::kEarlyStopped : tune::TrialState::kFailed;
    } else if (outcome == "Failed") {
      trial.state = tune::TrialState::kFailed;
    } else if (outcome == "Succeeded") {
      ASSIGN_OR_RETURN(bool read, ReadObjectives(observations, spec, trial));
      std::optional<TimePoint> at = CompletedAt(trial.stored);
      bool waiting = !read && at && now - *at < grace;
      trial.state = read      ? tune::TrialState::kSucceeded
                    : waiting ? tune::TrialState::kPending
                              : tune::TrialState::kFailed;
    }
    trials.push_back(std::move(trial));
  }
  return trials;
}

Result<std::vector<tune::TrialRecord>> OptimizationRecords(
    const tune::Space& space, const api::OptimizationJobSpec& spec,
    const std::vector<OptimizationTrial>& trials) {
  std::vector<tune::TrialRecord> records;
  std::vector<tune::Losses> told;
  std::vector<size_t> told_at;
  for (const OptimizationTrial& trial : trials) {
    std::vector<std::string> values(space.size());
    for (size_t i = 0; i < space.size(); ++i) {
      auto it = std::find_if(trial.parameters.begin(), trial.parameters.end(),
                             [&](const api::NamedValue& p) { return p.name == space[i].name; });
      if (it == trial.parameters.end()) {
        return InvalidArgumentError(
            fmt::format("trial {} has no value for parameter {}", trial.name, space[i].name));
      }
      values[i] = it->value;
    }
    tune::TrialRecord record{.name = trial.name, .state = trial.state};
    ASSIGN_OR_RETURN(record.point, space.Parse(values));
    for (const auto& [k, v] : api::ObjectAt(trial.stored, {"metadata", "labels"}).items()) {
      if (v.is_string()) record.labels.emplace(k, v.get<std::string>());
    }
    if (Told(trial)) {
      told.push_back(LossesOf(spec, trial));
      told_at.push_back(records.size());
    }
    records.push_back(std::move(record));
  }
  std::vector<double> losses(told.size());
  if (spec.objectives.size() == 1) {
    for (size_t k = 0; k < told.size(); ++k) losses[k] = told[k][0];
  } else {
    losses = tune::ParetoRankLosses(told);
  }
  for (size_t k = 0; k < told.size(); ++k) records[told_at[k]].loss = losses[k];
  return records;
}

tune::SamplerOptions OptimizationSamplerOptions(const api::OptimizationJobSpec& spec,
                                                const std::string& uid) {
  const api::SearchAlgorithm& a = spec.search_algorithm.value_or(api::SearchAlgorithm{});
  tune::SamplerOptions options{.algorithm = "random",
                               .max_trial_count = spec.num_trials.value_or(1),
                               .parallel_trial_count = spec.parallel_trials.value_or(1),
                               .default_seed = StableHash(uid)};
  if (a.random && a.random->seed) options.default_seed = static_cast<uint64_t>(*a.random->seed);
  if (!a.grid.is_null()) {
    // A grid smaller than numTrials runs whole, then ends the job
    // (SearchSpaceExhausted), where Katib's grid refuses the experiment.
    options.algorithm = "grid";
    options.max_trial_count.reset();
  }
  if (a.trainyard) {
    options.algorithm = a.trainyard->algorithm_name;
    for (const api::AlgorithmSetting& s : a.trainyard->algorithm_settings) {
      options.settings.emplace_back(s.name, s.value);
    }
  }
  return options;
}

int64_t NextTrialIndex(const std::vector<OptimizationTrial>& trials) {
  int64_t next = 0;
  for (const OptimizationTrial& trial : trials) {
    int64_t index = TrialIndex(trial.stored);
    if (index != INT64_MAX) next = std::max(next, index + 1);
  }
  return next;
}

std::string OptimizationTrialName(const std::string& job, int64_t index) {
  std::string suffix = fmt::format("-trial-{}", index);
  std::string base;
  for (char c : job) base += c == '.' ? '-' : c;  // a subdomain's dots: no label's
  bool starts_with_letter = !base.empty() && base[0] >= 'a' && base[0] <= 'z';
  if (!starts_with_letter || base.size() + suffix.size() > 63) {
    // Shortened, with a hash of the whole name so that two long names
    // sharing a prefix never share trials.
    std::string hash = api::SafeEncode(std::to_string(StableHash(job))).substr(0, 6);
    size_t keep = 63 - suffix.size() - hash.size() - 2;
    base = "o" + base.substr(0, keep);
    while (!base.empty() && base.back() == '-') base.pop_back();
    base += "-" + hash;
  }
  return base + suffix;
}

api::Json BuildOptimizationTrial(const api::CoreObject& job, const api::OptimizationJobSpec& spec,
                                 const tune::Space& space, const tune::Suggestion& suggestion,
                                 int64_t index) {
  const api::TrainJobTemplate& t = spec.train_job_template;
  api::TrainJobSpec trial_spec = t.spec;
  if (!trial_spec.trainer) trial_spec.trainer = api::TrainerSpec{};
  api::Json parameters = api::Json::object();
  std::vector<std::string> formatted = space.Format(suggestion.point);
  for (size_t i = 0; i < space.size(); ++i) {
    SetEnv(trial_spec.trainer->env, api::OptimizationEnvName(space[i].name), formatted[i]);
    parameters[space[i].name] = formatted[i];
  }
  api::Json labels = api::Json(t.metadata.labels);
  for (const auto& [k, v] : suggestion.labels) labels[k] = v;
  labels[std::string(api::kOptimizationJobLabel)] = job.metadata.name;
  labels[std::string(api::kOptimizationTrialIndexLabel)] = std::to_string(index);
  api::Json annotations = api::Json(t.metadata.annotations);
  annotations[std::string(api::kOptimizationParametersAnnotation)] = parameters.dump();
  api::Json metadata = {{"name", OptimizationTrialName(job.metadata.name, index)},
                        {"namespace", job.metadata.namespace_},
                        {"labels", std::move(labels)},
                        {"annotations", std::move(annotations)},
                        {"ownerReferences",
                         {{{"apiVersion", std::string(api::kTrainerGroupVersion)},
                           {"kind", "OptimizationJob"},
                           {"name", job.metadata.name},
                           {"uid", job.metadata.uid},
                           {"controller", true},
                           {"blockOwnerDeletion", true}}}}};
  if (!t.metadata.finalizers.empty()) metadata["finalizers"] = t.metadata.finalizers;
  return {{"apiVersion", std::string(api::kTrainerGroupVersion)},
          {"kind", "TrainJob"},
          {"metadata", std::move(metadata)},
          {"spec", api::Encode(trial_spec)}};
}

OptimizationOutcome SummarizeOptimization(const api::OptimizationJobSpec& spec,
                                          const std::vector<OptimizationTrial>& trials) {
  OptimizationOutcome out;
  std::vector<const OptimizationTrial*> told;
  std::vector<tune::Losses> losses;
  for (const OptimizationTrial& trial : trials) {
    if (!Told(trial)) continue;
    // Its parameters are on the TrainJob (an annotation): the status holds
    // each trial's values alone, so it stays small with 100 trials of 100
    // parameters.
    out.reported.push_back({.train_job_name = trial.name, .metrics = trial.metrics});
    // A trial stopped early has not its final values: listed, never the
    // best or on the front (as a Katib experiment's front).
    if (trial.state != tune::TrialState::kSucceeded) continue;
    told.push_back(&trial);
    losses.push_back(LossesOf(spec, trial));
  }
  std::vector<int> fronts = tune::ParetoFronts(losses);
  const OptimizationTrial* best = nullptr;
  double best_loss = 0;
  for (size_t k = 0; k < told.size(); ++k) {
    if (fronts[k] != 0) continue;
    if (spec.objectives.size() > 1) out.front.push_back(ResultOf(*told[k]));
    // Ties: the earlier trial.
    if (best == nullptr || losses[k][0] < best_loss) {
      best = told[k];
      best_loss = losses[k][0];
    }
  }
  if (best != nullptr) out.best = ResultOf(*best);
  return out;
}

void BoundOptimizationStatus(api::OptimizationJobStatus& status, size_t max_bytes) {
  auto fits = [&] { return api::Encode(status).dump().size() <= max_bytes; };
  for (std::vector<api::OptimizationTrialResult>* list :
       {&status.trial_results, &status.pareto_front}) {
    if (fits()) return;
    for (api::OptimizationTrialResult& r : *list) r.parameters.clear();
  }
}

}  // namespace trainyard::controller
