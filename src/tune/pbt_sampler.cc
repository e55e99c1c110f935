// pbt: population-based training (Jaderberg et al. 2017) with Katib's
// settings (§2.8 of the Katib reference). A trial trains one stretch of a
// population member's life; the next stretch is a new trial that starts
// from a copy of its parent's checkpoint directory (the controller makes
// that copy: kTrialDirSetting, kPbtParentLabel).
//
// The population runs in generations of n_population members. Generation 0
// is drawn from the prior. Once every member of generation g has a loss,
// generation g + 1 is planned from those losses by truncation selection:
// the worst floor(n_population * truncation_threshold) members are replaced
// by a copy of a random member of as many best ones, both its hyperparameters
// and its checkpoint (parent), and explore: each numeric value multiplied
// by 0.8 or 1.2, each list value moved to a neighbour, or, with
// resample_probability set, each value drawn anew with that probability.
// Every other member continues from its own checkpoint with its own values.
// Upstream does otherwise, and differs from the paper: its replaced members
// take the better member's values unperturbed but keep their own
// checkpoint, so a poor model is trained on and the better one's weights
// are never copied; and it perturbs the values of the members it keeps.
// trainyard follows the paper.
//
// No state is kept: each trial carries its generation (upstream's label),
// its member's index ("pbt-member") and its parent (upstream's label), and
// Suggest replays the plans from the losses, each generation's random draws
// seeded with the seed and the generation alone, so every call plans the
// same generation. A member whose trial failed runs again, with the same
// values and parent (upstream re-queues it too). Until a generation is
// complete, Suggest offers only its members still to run, possibly none.
// Equal values are not a repeat here: a member continuing training is a new
// trial with its parent's values, so pbt is not held to the rule that a
// point is suggested once (MakeSampler).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <optional>

#include "tune/history_rng.h"
#include "tune/samplers.h"
#include "tune/settings.h"

namespace trainyard::tune {
namespace {

constexpr char kMemberLabel[] = "pbt-member";
constexpr uint64_t kPbtStream = 0x9b7;
constexpr int64_t kMaxPopulation = 100'000;  // each Suggest plans a whole generation

struct PbtConfig {
  int population = 0;
  double truncation = 0;
  std::optional<double> resample;
  uint64_t seed = 0;
};

// A member of a planned generation.
struct Member {
  Point point;
  std::string parent;  // the trial whose checkpoint it starts from; empty in generation 0
};

// What the trials say of one member of one generation.
struct Outcome {
  const TrialRecord* done = nullptr;  // the first trial with a loss
  bool active = false;                // a trial of it is pending
};

class PbtSampler : public Sampler {
 public:
  PbtSampler(Space space, PbtConfig config) : space_(std::move(space)), config_(config) {}

  Result<SuggestResult> Suggest(std::span<const TrialRecord> trials, int count) override {
    std::map<std::pair<int, int>, Outcome> outcomes = Outcomes(trials);
    int generation = 0;
    std::vector<Member> plan = FirstGeneration();
    while (Complete(outcomes, generation)) {
      plan = NextGeneration(outcomes, generation);
      ++generation;
    }
    SuggestResult result;
    for (int i = 0; i < config_.population && static_cast<int>(result.suggestions.size()) < count;
         ++i) {
      const Outcome& outcome = outcomes[{generation, i}];
      if (outcome.done != nullptr || outcome.active) continue;
      Suggestion s{.point = plan[i].point,
                   .labels = {{std::string(kPbtGenerationLabel), std::to_string(generation)},
                              {kMemberLabel, std::to_string(i)}}};
      if (!plan[i].parent.empty()) s.labels[std::string(kPbtParentLabel)] = plan[i].parent;
      result.suggestions.push_back(std::move(s));
    }
    return result;
  }

 private:
  std::map<std::pair<int, int>, Outcome> Outcomes(std::span<const TrialRecord> trials) const {
    std::map<std::pair<int, int>, Outcome> outcomes;
    for (const TrialRecord& trial : trials) {
      std::optional<int> generation = LabelInt(trial, kPbtGenerationLabel);
      std::optional<int> member = LabelInt(trial, kMemberLabel);
      if (!generation || !member || *member >= config_.population) continue;
      Outcome& outcome = outcomes[{*generation, *member}];
      if (trial.state == TrialState::kPending) outcome.active = true;
      bool told = trial.state == TrialState::kSucceeded || trial.state == TrialState::kEarlyStopped;
      if (told && trial.loss && outcome.done == nullptr) outcome.done = &trial;
    }
    return outcomes;
  }

  bool Complete(const std::map<std::pair<int, int>, Outcome>& outcomes, int generation) const {
    for (int i = 0; i < config_.population; ++i) {
      auto it = outcomes.find({generation, i});
      if (it == outcomes.end() || it->second.done == nullptr) return false;
    }
    return true;
  }

  std::vector<Member> FirstGeneration() const {
    std::mt19937_64 rng = HistoryRng(config_.seed, 0, kPbtStream);
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    std::vector<Member> plan(static_cast<size_t>(config_.population));
    for (Member& m : plan) {
      Point unit(space_.size());
      for (double& u : unit) u = uniform(rng);
      m.point = space_.FromUnit(unit);
    }
    return plan;
  }

  // Generation g + 1 from generation g's losses (lower is better; a
  // non-finite loss ranks last, ties by member index).
  std::vector<Member> NextGeneration(const std::map<std::pair<int, int>, Outcome>& outcomes,
                                     int generation) const {
    const size_t n = static_cast<size_t>(config_.population);
    std::vector<const TrialRecord*> done(n);
    for (size_t i = 0; i < n; ++i) done[i] = outcomes.at({generation, static_cast<int>(i)}).done;
    auto rank = [&](size_t i) {
      double loss = *done[i]->loss;
      return std::isfinite(loss) ? loss : std::numeric_limits<double>::infinity();
    };
    std::vector<size_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return rank(a) < rank(b); });
    // Rounded down, but 100 * 0.57 is 57, not the 56.99... of its doubles.
    size_t replaced =
        static_cast<size_t>(std::floor(static_cast<double>(n) * config_.truncation + 1e-9));
    std::mt19937_64 rng = HistoryRng(config_.seed, static_cast<size_t>(generation) + 1, kPbtStream);
    std::uniform_int_distribution<size_t> pick_best(0, replaced == 0 ? 0 : replaced - 1);
    std::vector<Member> next(n);
    for (size_t i = 0; i < n; ++i) {
      next[i] = {.point = done[i]->point, .parent = done[i]->name};
    }
    for (size_t k = n - replaced; k < n; ++k) {
      const TrialRecord& source = *done[order[pick_best(rng)]];
      next[order[k]] = {.point = Explore(source.point, rng), .parent = source.name};
    }
    return next;
  }

  Point Explore(const Point& point, std::mt19937_64& rng) const {
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    Point out = point;
    for (size_t i = 0; i < space_.size(); ++i) {
      if (config_.resample) {
        if (uniform(rng) < *config_.resample) out[i] = space_.FromUnit(i, uniform(rng));
        continue;
      }
      bool up = uniform(rng) < 0.5;
      const Parameter& p = space_[i];
      if (p.type == ParameterType::kInt || p.type == ParameterType::kDouble) {
        out[i] = space_.Snap(i, point[i] * (up ? 1.2 : 0.8));
      } else {
        // A neighbour in the list, going round at its ends, as upstream.
        int64_t k = static_cast<int64_t>(p.list.size());
        out[i] = static_cast<double>((static_cast<int64_t>(point[i]) + (up ? 1 : k - 1)) % k);
      }
    }
    return out;
  }

  Space space_;
  PbtConfig config_;
};

Result<double> Fraction(const SettingsReader& reader, std::string_view name, std::string_view why) {
  std::optional<std::string> raw = reader.Raw(name);
  std::optional<double> value = ParseDouble(*raw);
  if (!value || !(*value >= 0 && *value <= 1)) {
    return InvalidArgumentError(fmt::format("{}, not \"{}\"", why, *raw));
  }
  return *value;
}

}  // namespace

Result<std::unique_ptr<Sampler>> MakePbtSampler(const Space& space, const SamplerOptions& options) {
  ASSIGN_OR_RETURN(
      SettingsReader reader,
      SettingsReader::Make("pbt", options.settings,
                           {std::string(kTrialDirSetting), "n_population", "truncation_threshold",
                            "resample_probability", "random_state"}));
  std::vector<std::string> missing;
  for (std::string_view name : {kTrialDirSetting, std::string_view("n_population"),
                                std::string_view("truncation_threshold")}) {
    if (!reader.Raw(name)) missing.emplace_back(name);
  }
  if (!missing.empty()) {
    return InvalidArgumentError(
        fmt::format("Required params missing: {}", fmt::join(missing, ", ")));
  }
  if (!reader.Raw(kTrialDirSetting)->starts_with("/")) {
    return InvalidArgumentError(fmt::format(
        "{} must be an absolute path: it is where each trial's checkpoint directory is mounted",
        kTrialDirSetting));
  }
  PbtConfig config;
  Result<int64_t> population = reader.Int("n_population", 0, 5);
  if (!population.ok()) return InvalidArgumentError("Param(n_population) should be >= 5");
  if (*population > kMaxPopulation) {
    return InvalidArgumentError(fmt::format("Param(n_population) should be <= {}", kMaxPopulation));
  }
  config.population = static_cast<int>(*population);
  ASSIGN_OR_RETURN(config.truncation,
                   Fraction(reader, "truncation_threshold",
                            "Param(truncation_threshold) should be between 0 and 1, inclusive"));
  if (reader.Raw("resample_probability")) {
    ASSIGN_OR_RETURN(config.resample,
                     Fraction(reader, "resample_probability",
                              "Param(resample_probability) should be null to perturb at 0.8 or "
                              "1.2, or be between 0 and 1, inclusive, to resample"));
  }
  ASSIGN_OR_RETURN(config.seed, reader.Seed(options.default_seed));
  return std::unique_ptr<Sampler>(std::make_unique<PbtSampler>(space, config));
}

}  // namespace trainyard::tune
