// OptimizationJob's defaults and rules: upstream's CRD schema and CEL
// rules with kube-apiserver's messages, then trainyard's own (an Int
// parameter's bounds are whole numbers; parameters map to distinct
// environment variables; its extensions' settings).
#include "api/optimization_job.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <regex>
#include <set>

#include "api/core_hooks.h"
#include "api/katib_space.h"
#include "api/trainer_kinds.h"
#include "api/validation_internal.h"
#include "common/strings.h"
#include "tune/median_stop.h"
#include "tune/sampler.h"

namespace trainyard::api {
namespace {

using internal::CheckMaxItems;

constexpr size_t kMaxText = 64;  // names, bounds, choices, metrics
constexpr size_t kMaxParameters = 100;
constexpr size_t kMaxChoices = 100;
constexpr size_t kMaxTrainerEnv = 128;  // the TrainJob CRD's, which a trial's env must meet

// A CEL rule on an object, as kube-apiserver reports it.
FieldError CelError(const FieldPath& path, std::string message) {
  return FieldError::InvalidRendered(path, "\"object\"", std::move(message));
}

void DefaultOptimizationJob(OptimizationJobFields& job) {
  OptimizationJobSpec& spec = job.spec;
  if (!spec.num_trials) spec.num_trials = 1;
  if (!spec.parallel_trials) spec.parallel_trials = 1;
  if (!spec.search_algorithm) spec.search_algorithm = SearchAlgorithm{.random = RandomSearch{}};
  for (OptimizationObjective& o : spec.objectives) {
    if (o.direction.empty()) o.direction = "Minimize";
  }
  for (OptimizationParameter& p : spec.parameters) {
    for (auto* bounded : {&p.search_space.uniform, &p.search_space.log_uniform}) {
      if (*bounded && (*bounded)->type.empty()) (*bounded)->type = "Float";
    }
  }
  // The template's spec has the TrainJob CRD's schema, and its defaults.
  DefaultTrainJobSpec(spec.train_job_template.spec);
}

void CheckText(const std::string& text, const FieldPath& path, ValidationResult& out) {
  if (text.empty()) {
    out.errors.push_back(FieldError::Required(path));
  } else if (text.size() > kMaxText) {
    out.errors.push_back(FieldError::TooLong(path, kMaxText));
  }
}

// A CRD's minimum and maximum on an integer, in kube-apiserver's words.
void CheckRange(const std::optional<int32_t>& value, const FieldPath& path, ValidationResult& out) {
  if (!value) return;
  std::string where = path.ToString();
  if (*value < 1) {
    out.errors.push_back(FieldError::Invalid(
        path, *value, fmt::format("{} in body should be greater than or equal to 1", where)));
  } else if (*value > kMaxOptimizationTrials) {
    out.errors.push_back(
        FieldError::Invalid(path, *value,
                            fmt::format("{} in body should be less than or equal to {}", where,
                                        kMaxOptimizationTrials)));
  }
}

void ValidateObjectives(const std::vector<OptimizationObjective>& objectives, const FieldPath& path,
                        ValidationResult& out) {
  if (objectives.empty()) out.errors.push_back(FieldError::Required(path));
  // Upstream's maxItems is 1; trainyard searches a Pareto front of up to three.
  CheckMaxItems(objectives.size(), kMaxObjectives, path, out);
  std::set<std::string> metrics;
  for (size_t i = 0; i < objectives.size(); ++i) {
    FieldPath at = path.Index(static_cast<int64_t>(i));
    CheckText(objectives[i].metric, at.Child("metric"), out);
    if (!metrics.insert(objectives[i].metric).second) {
      out.errors.push_back(FieldError::Duplicate(at.Child("metric"), objectives[i].metric));
    }
    const std::string& d = objectives[i].direction;
    if (d != "Maximize" && d != "Minimize") {
      out.errors.push_back(
          FieldError::NotSupported(at.Child("direction"), d, {"Maximize", "Minimize"}));
    }
  }
}

// A bound as the CRD's pattern takes it: a decimal number.
bool CheckBound(const std::string& text, const FieldPath& path, ValidationResult& out) {
  static const std::regex kNumber("^-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][+-]?[0-9]+)?$");
  if (text.empty() || text.size() > kMaxText) {
    CheckText(text, path, out);
    return false;
  }
  if (!std::regex_match(text, kNumber)) {
    out.errors.push_back(FieldError::Invalid(
        path, text,
        fmt::format("{} in body should match '^-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][+-]?[0-9]+)?$'",
                    path.ToString())));
    return false;
  }
  return true;
}

void ValidateBounded(const BoundedSearchSpace& space, bool log, const FieldPath& path,
                     ValidationResult& out) {
  bool min_ok = CheckBound(space.min, path.Child("min"), out);
  bool max_ok = CheckBound(space.max, path.Child("max"), out);
  if (space.type != "Int" && space.type != "Float") {
    out.errors.push_back(
        FieldError::NotSupported(path.Child("type"), space.type, {"Int", "Float"}));
  }
  if (!min_ok || !max_ok) return;
  double min = std::strtod(space.min.c_str(), nullptr);
  double max = std::strtod(space.max.c_str(), nullptr);
  if (!(min < max)) out.errors.push_back(CelError(path, "min must be strictly less than max"));
  if (log && !(min > 0))
    out.errors.push_back(CelError(path, "min must be strictly greater than 0"));
  // trainyard's: an Int parameter takes the whole numbers between its
  // bounds, which must be whole themselves (upstream leaves it undefined).
  if (space.type == "Int" && (min != std::floor(min) || max != std::floor(max))) {
    out.errors.push_back(FieldError::Invalid(
        path, space.min + ".." + space.max,
        "an Int parameter's min and max must be whole numbers (write 1 and 8, not 1.5)"));
  }
}

void ValidateCategorical(const CategoricalSearchSpace& space, const FieldPath& path,
                         ValidationResult& out) {
  FieldPath choices = path.Child("choices");
  if (space.choices.empty()) out.errors.push_back(FieldError::Required(choices));
  CheckMaxItems(space.choices.size(), kMaxChoices, choices, out);
  std::set<std::string> seen;
  for (size_t i = 0; i < space.choices.size(); ++i) {
    FieldPath at = choices.Index(static_cast<int64_t>(i));
    if (space.choices[i].size() > kMaxText) out.errors.push_back(FieldError::TooLong(at, kMaxText));
    if (!seen.insert(space.choices[i]).second) {
      out.errors.push_back(FieldError::Duplicate(at, space.choices[i]));
    }
  }
}

void ValidateOptimizationParameters(const std::vector<OptimizationParameter>& parameters,
                                    const FieldPath& path, ValidationResult& out) {
  if (parameters.empty()) out.errors.push_back(FieldError::Required(path));
  CheckMaxItems(parameters.size(), kMaxParameters, path, out);
  std::set<std::string> names;
  std::map<std::string, std::string> env_names;
  for (size_t i = 0; i < parameters.size(); ++i) {
    const OptimizationParameter& p = parameters[i];
    FieldPath at = path.Index(static_cast<int64_t>(i));
    CheckText(p.name, at.Child("name"), out);
    if (!names.insert(p.name).second) {
      out.errors.push_back(FieldError::Duplicate(at.Child("name"), p.name));
    } else if (auto [it, fresh] = env_names.emplace(OptimizationEnvName(p.name), p.name); !fresh) {
      out.errors.push_back(FieldError::Invalid(
          at.Child("name"), p.name,
          fmt::format("gives the same environment variable, {}, as parameter {:?}: rename one",
                      it->first, it->second)));
    }
    const OptimizationSearchSpace& s = p.search_space;
    FieldPath space = at.Child("searchSpace");
    int set = (s.uniform ? 1 : 0) + (s.log_uniform ? 1 : 0) + (s.categorical ? 1 : 0);
    if (set != 1) {
      out.errors.push_back(
          CelError(space,
                   "exactly one of the fields in [uniform logUniform categorical] must be "
                   "set"));
    }
    if (s.uniform) ValidateBounded(*s.uniform, false, space.Child("uniform"), out);
    if (s.log_uniform) ValidateBounded(*s.log_uniform, true, space.Child("logUniform"), out);
    if (s.categorical) ValidateCategorical(*s.categorical, space.Child("categorical"), out);
  }
}

void ValidateTrainyardSearch(const TrainyardSearch& search, const OptimizationJobSpec& spec,
                             const FieldPath& path, ValidationResult& out) {
  const std::vector<std::string>& known = tune::SamplerNames();
  const std::string& name = search.algorithm_name;
  if (std::find(known.begin(), known.end(), name) == known.end()) {
    out.errors.push_back(FieldError::NotSupported(path.Child("algorithmName"), name, known));
    return;
  }
  if (name == "pbt") {
    out.errors.push_back(FieldError::Invalid(
        path.Child("algorithmName"), name,
        "pbt hands checkpoints from trial to trial, which TrainJobs have no place for: use a "
        "Katib Experiment"));
    return;
  }
  Result<tune::Space> space = OptimizationSpaceOf(spec.parameters);
  if (!space.ok()) return;  // the parameters' own errors are reported
  tune::SamplerOptions options{.algorithm = name,
                               .max_trial_count = spec.num_trials,
                               .parallel_trial_count = spec.parallel_trials.value_or(1)};
  for (const AlgorithmSetting& s : search.algorithm_settings) {
    options.settings.emplace_back(s.name, s.value);
  }
  Result<std::unique_ptr<tune::Sampler>> sampler = tune::MakeSampler(*space, options);
  if (!sampler.ok()) {
    out.errors.push_back(FieldError::Invalid(path.Child("algorithmSettings"), name,
                                             std::string(sampler.status().message())));
  }
}

void ValidateSearchAlgorithm(const OptimizationJobSpec& spec, const FieldPath& spec_path,
                             ValidationResult& out) {
  if (!spec.search_algorithm) return;  // defaulted
  const SearchAlgorithm& a = *spec.search_algorithm;
  FieldPath path = spec_path.Child("searchAlgorithm");
  bool grid = !a.grid.is_null();
  int set = (a.random ? 1 : 0) + (grid ? 1 : 0);
  if (a.trainyard) {
    if (set != 0) {
      out.errors.push_back(
          CelError(path, "exactly one of the fields in [random grid trainyard] must be set"));
    }
    ValidateTrainyardSearch(*a.trainyard, spec, path.Child("trainyard"), out);
  } else if (set != 1) {
    out.errors.push_back(CelError(path, "exactly one of the fields in [random grid] must be set"));
  }
  if (grid && !a.grid.is_object()) {
    out.errors.push_back(TypeError(path.Child("grid"), a.grid, "an empty object"));
  }
  bool all_categorical = std::all_of(spec.parameters.begin(), spec.parameters.end(),
                                     [](const auto& p) { return p.search_space.categorical; });
  if (grid && !all_categorical) {
    out.errors.push_back(CelError(spec_path,
                                  "Grid search requires all parameters to be Categorical; Uniform "
                                  "and LogUniform are not supported."));
  }
  if (grid && all_categorical) {
    int64_t points = 1;
    for (const auto& p : spec.parameters) {
      points *=
          std::max<int64_t>(1, static_cast<int64_t>(p.search_space.categorical->choices.size()));
      points = std::min<int64_t>(points, kMaxOptimizationTrials + 1);
    }
    if (points < spec.num_trials.value_or(1)) {
      out.warnings.push_back(fmt::format(
          "spec.numTrials: {} trials, but the grid has {} points: the job ends after {}",
          spec.num_trials.value_or(1), points, points));
    }
  }
}

void ValidateTemplate(const OptimizationJobSpec& spec, const FieldPath& path,
                      ValidationResult& out) {
  const TrainJobTemplate& t = spec.train_job_template;
  FieldPath meta = path.Child("metadata");
  if (!t.metadata.name.empty() || !t.metadata.namespace_.empty()) {
    out.errors.push_back(CelError(meta, "name and namespace cannot be set in a template."));
  }
  internal::ValidateLabels(t.metadata.labels, meta.Child("labels"), out);
  ValidateTrainJobSpec(t.spec, path.Child("spec"), out);
  // Suspended trials wait for whatever resumes them (Kueue admitting
  // them); without one the job waits for good.
  if (t.spec.suspend.value_or(false)) {
    out.warnings.push_back(
        "spec.trainJobTemplate.spec.suspend: true: each trial is made suspended and runs only "
        "once something resumes it (Kueue's admission); nothing here does");
  }
  // Each trial's trainer env holds the template's and one per parameter.
  size_t env = t.spec.trainer ? t.spec.trainer->env.size() : 0;
  if (env + spec.parameters.size() > kMaxTrainerEnv) {
    out.errors.push_back(FieldError::Invalid(
        path.Child("spec").Child("trainer").Child("env"), static_cast<int64_t>(env),
        fmt::format("with one variable per parameter ({}), a trial's env would pass the "
                    "TrainJob's limit of {}",
                    spec.parameters.size(), kMaxTrainerEnv)));
  }
}

void ValidateOptimizationJob(const OptimizationJobFields& job, ValidationResult& out) {
  const OptimizationJobSpec& spec = job.spec;
  FieldPath path("spec");
  ValidateObjectives(spec.objectives, path.Child("objectives"), out);
  ValidateOptimizationParameters(spec.parameters, path.Child("parameters"), out);
  ValidateSearchAlgorithm(spec, path, out);
  CheckRange(spec.num_trials, path.Child("numTrials"), out);
  CheckRange(spec.parallel_trials, path.Child("parallelTrials"), out);
  if (spec.num_trials && spec.parallel_trials && *spec.parallel_trials > *spec.num_trials) {
    out.errors.push_back(CelError(path, "parallelTrials cannot exceed numTrials"));
  }
  ValidateTemplate(spec, path.Child("trainJobTemplate"), out);
  if (spec.early_stopping) {
    FieldPath at = path.Child("earlyStopping").Child("algorithmName");
    const AlgorithmSpec& e = *spec.early_stopping;
    if (e.algorithm_name != "medianstop") {
      out.errors.push_back(FieldError::NotSupported(at, e.algorithm_name, {"medianstop"}));
      return;
    }
    tune::Settings settings;
    for (const AlgorithmSetting& s : e.algorithm_settings) settings.emplace_back(s.name, s.value);
    Result<tune::MedianStopSettings> parsed = tune::ParseMedianStopSettings(settings);
    if (!parsed.ok()) {
      out.errors.push_back(
          FieldError::Invalid(path.Child("earlyStopping").Child("algorithmSettings"),
                              e.algorithm_name, std::string(parsed.status().message())));
    }
  }
}

}  // namespace

std::string OptimizationEnvName(std::string_view parameter) {
  std::string out(kOptimizationEnvPrefix);
  for (char c : parameter) {
    bool plain = std::isalnum(static_cast<unsigned char>(c)) != 0;
    out += plain ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : '_';
  }
  return out;
}

OptimizationJobFields OptimizationJobFieldsOf(const CoreObject& job) {
  return internal::TypedFields<OptimizationJobFields>(Object(job));
}

ObjectHooks OptimizationJobHooks() {
  ObjectHooks hooks = internal::CoreHooks<OptimizationJobFields>(
      "OptimizationJob", DefaultOptimizationJob, ValidateOptimizationJob, kTrainerGroupVersion);
  // The CRD's CEL rule: the spec never changes once created.
  hooks.validate_update = [](const Object& old_object, const Object& new_object,
                             FieldErrors& errors) {
    const Json& was = std::get<CoreObject>(old_object).fields;
    const Json& now = std::get<CoreObject>(new_object).fields;
    if (ValueAt(was, "spec") != ValueAt(now, "spec")) {
      errors.push_back(
          CelError(FieldPath("spec"),
                   "OptimizationJobSpec is immutable and cannot be updated after creation"));
    }
  };
  return hooks;
}

}  // namespace trainyard::api
