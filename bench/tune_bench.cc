// trainyard's samplers on closed-form functions, the side of the comparison
// with Optuna that runs in-process (the team's Katib reference, section 7).
//
//   quality  each algorithm, function (bench/tune_functions.h) and seed runs a
//            sequential tuning loop through MakeSampler: ask one point,
//            evaluate it, tell it as a succeeded trial. One run goes to the
//            largest budget; the best value after the first b trials, minus
//            f*, is the regret at budget b (--separate-runs: one run per
//            budget, with max_trial_count = b). Printed: median and IQR over
//            the seeds per (function, budget, algorithm).
//   timing   the time of one Suggest(trials, 1) on a history of N succeeded
//            trials at random points of [0, 1]^d: "cold" on a sampler made
//            just before, "warm" on a sampler that has just answered for the
//            first N-1 of them (an in-process caller that keeps its sampler;
//            the experiment and optimization controllers make a new sampler
//            at each reconcile, so they see the cold figure). Median of
//            repeats.
//   eval     the functions' values at fixed points, as JSON, for
//            bench/compare_tuning.py to check against bench/optuna_anchor.py.
//
// An algorithm whose MakeSampler or Suggest fails (not written yet) is
// reported and skipped. Figures come from a Release build:
//   cmake -S . -B build-release -G Ninja -DCMAKE_BUILD_TYPE=Release
//   cmake --build build-release --target tune_bench
//   build-release/bench/tune_bench --mode all --seeds 20 --json trainyard.json
// bench/compare_tuning.py runs this and Optuna side by side.
//
// Exits non-zero when a correctness check fails: a point outside the bounds
// or of the wrong size, a point suggested twice, a negative regret (a wrong
// f*), an f* not reached at its argmin.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "common/strings.h"
#include "tune/sampler.h"
#include "tune/space.h"
#include "tune_functions.h"

namespace trainyard::tune::bench {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

bool failed = false;  // some correctness check did not hold

void Check(bool ok, const std::string& what) {
  if (ok) return;
  failed = true;
  fmt::print("  CHECK FAILED: {}\n", what);
}

double Millis(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// The q-quantile by linear interpolation between order statistics (numpy's
// default, as optuna_anchor.py and compare_tuning.py compute it).
double Quantile(std::vector<double> values, double q) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(values.begin(), values.end());
  double h = static_cast<double>(values.size() - 1) * q;
  size_t lo = static_cast<size_t>(std::floor(h));
  size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (h - static_cast<double>(lo)) * (values[hi] - values[lo]);
}

Space BoxSpace(const std::vector<std::pair<double, double>>& bounds) {
  std::vector<Parameter> parameters;
  for (size_t i = 0; i < bounds.size(); ++i) {
    parameters.push_back({.name = fmt::format("x{}", i),
                          .type = ParameterType::kDouble,
                          .distribution = Distribution::kUniform,
                          .min = bounds[i].first,
                          .max = bounds[i].second});
  }
  Result<Space> space = Space::Make(std::move(parameters));
  if (!space.ok()) {
    fmt::print("cannot build the space: {}\n", space.status().ToString());
    std::exit(2);
  }
  return std::move(space).value();
}

// ---------------------------------------------------------------------------
// Making samplers.

// The driver's own i.i.d. uniform sampler: a control for the harness, asked
// for by name only (--algorithms driver-uniform); never a trainyard sampler.
constexpr std::string_view kDriverUniform = "driver-uniform";

class DriverUniformSampler : public Sampler {
 public:
  DriverUniformSampler(const Space& space, uint64_t seed) : space_(space), seed_(seed) {}
  Result<SuggestResult> Suggest(std::span<const TrialRecord> trials, int count) override {
    std::mt19937_64 rng(seed_ * 1'000'003 + trials.size());
    std::uniform_real_distribution<double> unit(0, 1);
    SuggestResult result;
    for (int c = 0; c < count; ++c) {
      Point u(space_.size());
      for (double& v : u) v = unit(rng);
      result.suggestions.push_back({space_.FromUnit(u), {}});
    }
    return result;
  }

 private:
  const Space& space_;
  uint64_t seed_;
};

// An algorithm as --algorithms names it: Katib's name, then any settings,
// each after a colon ("cmaes:restart_strategy=ipop:sigma=0.2"); the whole
// text labels its results. How it takes its seed: Katib's random_state
// setting, or (for an algorithm that has no settings, like goptuna's sobol)
// SamplerOptions' default_seed alone.
struct Algorithm {
  std::string name;   // as given, settings included
  std::string katib;  // the algorithm's name alone
  Settings settings;
  bool random_state = true;
};

Result<Algorithm> ParseAlgorithm(const std::string& text) {
  std::vector<std::string> parts = SplitNonEmpty(text, ':');
  if (parts.empty()) return InvalidArgumentError("an empty algorithm name");
  Algorithm algorithm{.name = text, .katib = parts[0]};
  for (size_t i = 1; i < parts.size(); ++i) {
    size_t eq = parts[i].find('=');
    if (eq == std::string::npos || eq == 0) {
      return InvalidArgumentError(
          fmt::format("{}: a setting is NAME=VALUE, not {}", text, parts[i]));
    }
    algorithm.settings.emplace_back(parts[i].substr(0, eq), parts[i].substr(eq + 1));
  }
  return algorithm;
}

Result<std::unique_ptr<Sampler>> Make(const Algorithm& algorithm, const Space& space, uint64_t seed,
                                      int max_trials) {
  if (algorithm.katib == kDriverUniform) {
    return std::unique_ptr<Sampler>(std::make_unique<DriverUniformSampler>(space, seed));
  }
  SamplerOptions options{.algorithm = algorithm.katib,
                         .settings = algorithm.settings,
                         .max_trial_count = max_trials,
                         .parallel_trial_count = 1,
                         .default_seed = seed};
  if (algorithm.random_state) options.settings.emplace_back("random_state", std::to_string(seed));
  return MakeSampler(space, options);
}

// Whether MakeSampler builds the algorithm and how it takes a seed; the
// error when it cannot (not written yet).
Result<Algorithm> Probe(const std::string& name) {
  ASSIGN_OR_RETURN(Algorithm algorithm, ParseAlgorithm(name));
  Space space = BoxSpace({{0, 1}, {0, 1}});
  Result<std::unique_ptr<Sampler>> sampler = Make(algorithm, space, 0, 100);
  if (!sampler.ok() && sampler.status().code() == StatusCode::kInvalidArgument) {
    algorithm.random_state = false;
    Result<std::unique_ptr<Sampler>> plain = Make(algorithm, space, 0, 100);
    if (plain.ok()) {
      fmt::print("  note: {} refuses random_state ({}); seeded through default_seed\n", name,
                 sampler.status().message());
      return algorithm;
    }
  }
  if (!sampler.ok()) return sampler.status();
  return algorithm;
}

// ---------------------------------------------------------------------------
// Quality.

struct RunResult {
  std::vector<double> best;  // per budget, in the order asked
  double suggest_ms = 0;     // total time in Suggest
  int suggestions = 0;
};

// One sequential tuning loop of `horizon` trials; the best value found after
// each budget's first b trials.
Result<RunResult> RunOnce(const Algorithm& algorithm, const TestFunction& fn, const Space& space,
                          uint64_t seed, int horizon, const std::vector<int>& budgets) {
  Result<std::unique_ptr<Sampler>> made = Make(algorithm, space, seed, horizon);
  if (!made.ok()) return made.status();
  Sampler& sampler = **made;
  std::vector<TrialRecord> trials;
  trials.reserve(horizon);
  RunResult run;
  double best = std::numeric_limits<double>::infinity();
  std::vector<double> best_after(horizon + 1, best);
  std::set<std::string> seen;  // Space::Key of every point so far
  for (int t = 0; t < horizon; ++t) {
    Clock::time_point start = Clock::now();
    Result<SuggestResult> answer = sampler.Suggest(trials, 1);
    run.suggest_ms += Millis(Clock::now() - start);
    ++run.suggestions;
    if (!answer.ok()) return answer.status();
    if (answer->suggestions.empty()) {
      return FailedPreconditionError(
          fmt::format("no suggestion at trial {} (exhausted: {})", t, answer->exhausted));
    }
    Suggestion& s = answer->suggestions.front();
    Check(s.point.size() == fn.dim(),
          fmt::format("{} on {}: a point of size {}", algorithm.name, fn.name, s.point.size()));
    if (s.point.size() != fn.dim()) return InternalError("wrong point size");
    for (size_t i = 0; i < fn.dim(); ++i) {
      Check(s.point[i] >= fn.bounds[i].first && s.point[i] <= fn.bounds[i].second,
            fmt::format("{} on {} seed {}: x{} = {} outside [{}, {}]", algorithm.name, fn.name,
                        seed, i, s.point[i], fn.bounds[i].first, fn.bounds[i].second));
    }
    Check(seen.insert(space.Key(s.point)).second,
          fmt::format("{} on {} seed {}: trial {} repeats an earlier point", algorithm.name,
                      fn.name, seed, t));
    double value = fn.f(s.point);
    best = std::min(best, value);
    best_after[t + 1] = best;
    trials.push_back({.point = std::move(s.point),
                      .labels = std::move(s.labels),
                      .state = TrialState::kSucceeded,
                      .loss = value});
  }
  for (int b : budgets) {
    double regret = best_after[std::min(b, horizon)] - fn.optimum;
    Check(regret > -1e-9, fmt::format("{}: regret {} below zero (f* wrong?)", fn.name, regret));
    run.best.push_back(regret);
  }
  return run;
}

struct Flags {
  std::string mode = "all";
  int seeds = 20;
  std::vector<int> budgets = {50, 100};
  std::vector<std::string> algorithms = {
      "random", "sobol", "tpe", "multivariate-tpe", "bayesianoptimization", "cmaes"};
  std::vector<std::string> functions;
  std::vector<int> timing_dims = {4, 8};
  std::vector<int> histories = {100, 1000};
  bool separate_runs = false;
  std::string json_path;
};

void RunQuality(const Flags& flags, const std::vector<Algorithm>& algorithms,
                const std::vector<const TestFunction*>& functions, json& out) {
  std::vector<int> budgets = flags.budgets;
  std::sort(budgets.begin(), budgets.end());
  fmt::print(
      "Quality: best-found regret (best f - f*), median [q25, q75] over seeds 0..{}, budgets {}; "
      "sequential (ask 1, evaluate, tell){}\n\n",
      flags.seeds - 1, fmt::join(budgets, ", "),
      flags.separate_runs ? ", one run per budget" : ", one run to the largest budget");
  if (algorithms.empty()) {
    fmt::print("  no algorithm to run\n\n");
    return;
  }
  fmt::print("  {:<17} {:>6}  {:<21} {:>11} {:>11} {:>11} {:>10}\n", "function", "budget",
             "algorithm", "median", "q25", "q75", "ms/sugg");
  for (const TestFunction* fn : functions) {
    Space space = BoxSpace(fn->bounds);
    for (const Algorithm& algorithm : algorithms) {
      std::vector<std::vector<double>> regrets(budgets.size());
      double suggest_ms = 0;
      int suggestions = 0;
      std::optional<Status> error;
      for (int seed = 0; seed < flags.seeds && !error; ++seed) {
        // Separate runs: one per budget, each told its own max_trial_count.
        std::vector<std::vector<int>> plans;
        if (flags.separate_runs) {
          for (int b : budgets) plans.push_back({b});
        } else {
          plans.push_back(budgets);
        }
        for (const std::vector<int>& plan : plans) {
          Result<RunResult> run =
              RunOnce(algorithm, *fn, space, static_cast<uint64_t>(seed), plan.back(), plan);
          if (!run.ok()) {
            error = run.status();
            break;
          }
          for (size_t k = 0; k < plan.size(); ++k) {
            size_t index = std::find(budgets.begin(), budgets.end(), plan[k]) - budgets.begin();
            regrets[index].push_back(run->best[k]);
          }
          suggest_ms += run->suggest_ms;
          suggestions += run->suggestions;
        }
      }
      if (error) {
        fmt::print("  {:<17} {:>6}  {:<21} skipped: {}\n", fn->name, "", algorithm.name,
                   error->ToString());
        out["skipped"].push_back(
            {{"algorithm", algorithm.name}, {"function", fn->name}, {"reason", error->ToString()}});
        continue;
      }
      double ms = suggestions ? suggest_ms / suggestions : 0;
      for (size_t k = 0; k < budgets.size(); ++k) {
        const std::vector<double>& r = regrets[k];
        double median = Quantile(r, 0.5), q25 = Quantile(r, 0.25), q75 = Quantile(r, 0.75);
        fmt::print("  {:<17} {:>6}  {:<21} {:>11.4g} {:>11.4g} {:>11.4g} {:>10.3f}\n", fn->name,
                   budgets[k], algorithm.name, median, q25, q75, ms);
        out["quality"].push_back({{"algorithm", algorithm.name},
                                  {"function", fn->name},
                                  {"budget", budgets[k]},
                                  {"regrets", r},
                                  {"median", median},
                                  {"q25", q25},
                                  {"q75", q75},
                                  {"mean_suggest_ms", ms}});
      }
      std::fflush(stdout);
    }
    fmt::print("\n");
  }
}

// ---------------------------------------------------------------------------
// Timing.

std::vector<TrialRecord> RandomHistory(int dim, int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0, 1);
  std::vector<TrialRecord> trials(n);
  for (TrialRecord& t : trials) {
    t.point.resize(dim);
    double loss = 0;
    for (double& v : t.point) {
      v = unit(rng);
      loss += (v - 0.3) * (v - 0.3);
    }
    t.state = TrialState::kSucceeded;
    t.loss = loss;
  }
  return trials;
}

// Repeats until at least 3 and 2 s spent, at most 15; one when a call takes
// longer than 2 s.
constexpr int kMaxRepeats = 15;
constexpr double kTimingBudgetMs = 2000;

struct Timing {
  double cold_ms = 0, warm_ms = 0;
  int repeats = 0;
};

Result<Timing> TimeSuggest(const Algorithm& algorithm, const Space& space,
                           const std::vector<TrialRecord>& history) {
  std::span<const TrialRecord> all(history), but_last = all.first(history.size() - 1);
  int max_trials = static_cast<int>(history.size()) + 100;
  std::vector<double> cold, warm;
  double spent = 0;
  while (static_cast<int>(cold.size()) < kMaxRepeats &&
         (cold.size() < 3 || spent < kTimingBudgetMs) && spent < kTimingBudgetMs * 3) {
    uint64_t seed = cold.size();
    Result<std::unique_ptr<Sampler>> fresh = Make(algorithm, space, seed, max_trials);
    if (!fresh.ok()) return fresh.status();
    Clock::time_point start = Clock::now();
    Result<SuggestResult> answer = (*fresh)->Suggest(all, 1);
    double ms = Millis(Clock::now() - start);
    if (!answer.ok()) return answer.status();
    cold.push_back(ms);

    Result<std::unique_ptr<Sampler>> running = Make(algorithm, space, seed, max_trials);
    if (!running.ok()) return running.status();
    start = Clock::now();
    Result<SuggestResult> before = (*running)->Suggest(but_last, 1);
    double before_ms = Millis(Clock::now() - start);
    if (!before.ok()) return before.status();
    start = Clock::now();
    answer = (*running)->Suggest(all, 1);
    double warm_ms = Millis(Clock::now() - start);
    if (!answer.ok()) return answer.status();
    warm.push_back(warm_ms);
    spent += ms + before_ms + warm_ms;
    if (ms > kTimingBudgetMs) break;
  }
  return Timing{Quantile(cold, 0.5), Quantile(warm, 0.5), static_cast<int>(cold.size())};
}

void RunTiming(const Flags& flags, const std::vector<Algorithm>& algorithms, json& out) {
  fmt::print(
      "Timing: one Suggest(trials, 1) on a history of N succeeded trials at random points of "
      "[0,1]^d (loss sum (x-0.3)^2), median of repeats; cold: a new sampler, warm: the sampler "
      "that answered for the first N-1. Target < 1 ms at N = 1,000.\n\n");
  if (algorithms.empty()) {
    fmt::print("  no algorithm to run\n\n");
    return;
  }
  fmt::print("  {:<21} {:>3} {:>7} {:>10} {:>10} {:>7}\n", "algorithm", "dim", "history", "cold ms",
             "warm ms", "repeats");
  for (const Algorithm& algorithm : algorithms) {
    for (int dim : flags.timing_dims) {
      Space space = BoxSpace(std::vector<std::pair<double, double>>(dim, {0.0, 1.0}));
      for (int n : flags.histories) {
        std::vector<TrialRecord> history =
            RandomHistory(dim, n, static_cast<uint64_t>(1000 * dim + n));
        Result<Timing> t = TimeSuggest(algorithm, space, history);
        if (!t.ok()) {
          fmt::print("  {:<21} {:>3} {:>7} skipped: {}\n", algorithm.name, dim, n,
                     t.status().ToString());
          out["skipped"].push_back({{"algorithm", algorithm.name},
                                    {"timing", fmt::format("d={} n={}", dim, n)},
                                    {"reason", t.status().ToString()}});
          continue;
        }
        fmt::print("  {:<21} {:>3} {:>7} {:>10.3f} {:>10.3f} {:>7}\n", algorithm.name, dim, n,
                   t->cold_ms, t->warm_ms, t->repeats);
        out["timing"].push_back({{"algorithm", algorithm.name},
                                 {"dim", dim},
                                 {"history", n},
                                 {"cold_ms", t->cold_ms},
                                 {"warm_ms", t->warm_ms},
                                 {"repeats", t->repeats}});
        std::fflush(stdout);
      }
    }
  }
  fmt::print("\n");
}

// ---------------------------------------------------------------------------
// Eval: fixed points for the cross-check with optuna_anchor.py.

// The argmin, the box's centre and corners-ish, and points of a Kronecker
// sequence (fractional parts of k * sqrt(prime)).
std::vector<std::vector<double>> EvalPoints(const TestFunction& fn) {
  static constexpr double kPrimes[] = {2, 3, 5, 7, 11, 13, 17, 19, 23, 29};
  std::vector<std::vector<double>> points = {fn.argmin};
  for (int k = 0; k < 8; ++k) {
    std::vector<double> x(fn.dim());
    for (size_t i = 0; i < fn.dim(); ++i) {
      double u = k == 0   ? 0.5
                 : k == 1 ? 0.0
                 : k == 2 ? 1.0
                          : std::fmod(k * std::sqrt(kPrimes[i]), 1.0);
      x[i] = fn.bounds[i].first + u * (fn.bounds[i].second - fn.bounds[i].first);
    }
    points.push_back(std::move(x));
  }
  return points;
}

void RunEval(const std::vector<const TestFunction*>& functions, json& out) {
  for (const TestFunction* fn : functions) {
    double at_argmin = fn->f(fn->argmin) - fn->optimum;
    Check(at_argmin > -1e-9 && at_argmin < 1e-6,
          fmt::format("{}: f(argmin) - f* = {}", fn->name, at_argmin));
    json bounds = json::array();
    for (auto [low, high] : fn->bounds) bounds.push_back({low, high});
    out["functions"].push_back(
        {{"name", fn->name}, {"bounds", bounds}, {"optimum", fn->optimum}, {"argmin", fn->argmin}});
    for (const std::vector<double>& x : EvalPoints(*fn)) {
      out["points"].push_back({{"function", fn->name}, {"x", x}, {"value", fn->f(x)}});
    }
  }
}

void AddFlags(CLI::App& app, Flags& flags) {
  app.add_option("--mode", flags.mode, "quality, timing, all, or eval (fixed-point values)")
      ->check(CLI::IsMember({"quality", "timing", "all", "eval"}));
  app.add_option("--seeds", flags.seeds, "Seeds 0..N-1 per (algorithm, function)")
      ->check(CLI::PositiveNumber);
  app.add_option("--budgets", flags.budgets, "Trial budgets, comma-separated")->delimiter(',');
  app.add_option("--algorithms", flags.algorithms,
                 "Katib algorithm names, comma-separated (driver-uniform: the driver's own "
                 "uniform control)")
      ->delimiter(',');
  app.add_option("--functions", flags.functions, "Functions, comma-separated (default: all)")
      ->delimiter(',');
  app.add_option("--timing-dims", flags.timing_dims, "Dimensions for the timing mode")
      ->delimiter(',');
  app.add_option("--histories", flags.histories, "History sizes for the timing mode")
      ->delimiter(',');
  app.add_flag("--separate-runs", flags.separate_runs,
               "One run per budget (max_trial_count = budget) instead of one to the largest");
  app.add_option("--json", flags.json_path, "Write the results as JSON here");
}

// The functions --functions names (all when it names none); false, said,
// when it names one there is not.
bool SelectFunctions(const Flags& flags, std::vector<const TestFunction*>& functions) {
  for (const TestFunction& fn : TestFunctions()) {
    if (flags.functions.empty() || std::find(flags.functions.begin(), flags.functions.end(),
                                             fn.name) != flags.functions.end()) {
      functions.push_back(&fn);
    }
  }
  for (const std::string& name : flags.functions) {
    if (std::none_of(functions.begin(), functions.end(),
                     [&](const TestFunction* fn) { return fn->name == name; })) {
      fmt::print("unknown function {}\n", name);
      return false;
    }
  }
  return true;
}

// The algorithms MakeSampler takes; the others are skipped, and said.
std::vector<Algorithm> ProbeAlgorithms(const Flags& flags, json& out) {
  std::vector<Algorithm> algorithms;
  fmt::print("Algorithms:\n");
  for (const std::string& name : flags.algorithms) {
    Result<Algorithm> probe = Probe(name);
    if (!probe.ok()) {
      fmt::print("  {}: skipped, MakeSampler says {}\n", name, probe.status().ToString());
      out["skipped"].push_back({{"algorithm", name}, {"reason", probe.status().ToString()}});
      continue;
    }
    fmt::print("  {}: ok\n", name);
    algorithms.push_back(*probe);
  }
  fmt::print("\n");
  return algorithms;
}

int Main(int argc, char** argv) {
  Flags flags;
  CLI::App app{
      "trainyard's samplers on closed-form functions (compare with Optuna: "
      "bench/compare_tuning.py)"};
  AddFlags(app, flags);
  CLI11_PARSE(app, argc, argv);

  std::vector<const TestFunction*> functions;
  if (!SelectFunctions(flags, functions)) return 2;
  auto positive = [](const std::vector<int>& v) {
    return !v.empty() && std::all_of(v.begin(), v.end(), [](int n) { return n >= 1; });
  };
  if (!positive(flags.budgets) || !positive(flags.histories) || !positive(flags.timing_dims)) {
    fmt::print("--budgets, --histories and --timing-dims need positive numbers\n");
    return 2;
  }

  json out = {{"meta",
               {{"seeds", flags.seeds},
                {"budgets", flags.budgets},
                {"separate_runs", flags.separate_runs},
#ifdef NDEBUG
                {"build", "release"}
#else
                {"build", "debug (assertions on: not for published figures)"}
#endif
               }},
              {"quality", json::array()},
              {"timing", json::array()},
              {"skipped", json::array()}};

  if (flags.mode == "eval") {
    RunEval(functions, out);
  } else {
#ifndef NDEBUG
    fmt::print("warning: assertions are on; publish figures from a Release build\n");
#endif
    std::vector<Algorithm> algorithms = ProbeAlgorithms(flags, out);
    if (flags.mode == "quality" || flags.mode == "all")
      RunQuality(flags, algorithms, functions, out);
    if (flags.mode == "timing" || flags.mode == "all") RunTiming(flags, algorithms, out);
  }
  out["meta"]["checks_passed"] = !failed;
  out["meta"]["held_out"] = json::array();
  for (const TestFunction* fn : functions) {
    if (fn->held_out) out["meta"]["held_out"].push_back(fn->name);
  }

  if (!flags.json_path.empty()) {
    std::ofstream file(flags.json_path);
    file << out.dump(1) << "\n";
    if (!file) {
      fmt::print("cannot write {}\n", flags.json_path);
      return 2;
    }
  }
  return failed ? 1 : 0;
}

}  // namespace
}  // namespace trainyard::tune::bench

int main(int argc, char** argv) { return trainyard::tune::bench::Main(argc, argv); }
