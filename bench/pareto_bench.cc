// Two objectives at once: trainyard's samplers searching for a Pareto front
// as an OptimizationJob (or a Katib Experiment in multi-objective mode)
// drives them, against random search at the same budget, judged by the
// hypervolume the front dominates (bigger is better).
//
// Each (problem, algorithm, seed) runs a sequential loop: ask one point,
// evaluate both objectives, tell the trial; the history's losses are the
// Pareto ranks the controller gives (tune::ParetoRankLosses), recomputed
// after each trial. Printed: per problem and algorithm, the median and IQR
// of the final hypervolume over the seeds, and how many seeds beat random's
// median. bench/pareto_optuna.py runs Optuna's samplers on the same
// problems and reference points, for the side-by-side in docs/benchmarks.md.
//
//   cmake --build build-release --target pareto_bench
//   build-release/bench/pareto_bench --trials 60 --seeds 20
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "tune/pareto.h"
#include "tune/sampler.h"
#include "tune/space.h"

namespace trainyard::tune::bench {
namespace {

// A two-objective problem on a box; `reference` bounds the hypervolume.
struct Problem {
  std::string name;
  int dim;
  double low, high;
  Losses reference;
  Losses (*evaluate)(const std::vector<double>& x);
};

double ZdtG(const std::vector<double>& x) {
  double sum = 0;
  for (size_t i = 1; i < x.size(); ++i) sum += x[i];
  return 1 + 9 * sum / static_cast<double>(x.size() - 1);
}

// Zitzler, Deb and Thiele's ZDT1 (convex front) and ZDT2 (concave).
Losses Zdt1(const std::vector<double>& x) {
  double g = ZdtG(x);
  return {x[0], g * (1 - std::sqrt(x[0] / g))};
}
Losses Zdt2(const std::vector<double>& x) {
  double g = ZdtG(x);
  return {x[0], g * (1 - (x[0] / g) * (x[0] / g))};
}
// Fonseca and Fleming's: two Gaussians' complements, a concave front.
Losses Fonseca(const std::vector<double>& x) {
  double a = 0, b = 0, shift = 1 / std::sqrt(static_cast<double>(x.size()));
  for (double v : x) {
    a += (v - shift) * (v - shift);
    b += (v + shift) * (v + shift);
  }
  return {1 - std::exp(-a), 1 - std::exp(-b)};
}

const std::vector<Problem>& Problems() {
  static const std::vector<Problem> problems = {
      {"zdt1-5d", 5, 0, 1, {1.1, 11}, Zdt1},
      {"zdt2-5d", 5, 0, 1, {1.1, 11}, Zdt2},
      {"fonseca-3d", 3, -4, 4, {1.1, 1.1}, Fonseca},
  };
  return problems;
}

Space SpaceOf(const Problem& p) {
  std::vector<Parameter> parameters;
  for (int i = 0; i < p.dim; ++i) {
    parameters.push_back({.name = fmt::format("x{}", i), .min = p.low, .max = p.high});
  }
  return *Space::Make(std::move(parameters));
}

// The hypervolume of one run's trials after `trials` of them.
Result<double> RunOnce(const Problem& p, const std::string& algorithm, uint64_t seed, int trials) {
  Space space = SpaceOf(p);
  ASSIGN_OR_RETURN(std::unique_ptr<Sampler> sampler, MakeSampler(space, {.algorithm = algorithm,
                                                                         .max_trial_count = trials,
                                                                         .parallel_trial_count = 1,
                                                                         .default_seed = seed}));
  std::vector<TrialRecord> history;
  std::vector<Losses> values;
  for (int t = 0; t < trials; ++t) {
    ASSIGN_OR_RETURN(SuggestResult result, sampler->Suggest(history, 1));
    if (result.suggestions.empty()) break;
    Point point = result.suggestions[0].point;
    values.push_back(p.evaluate(point));
    history.push_back(
        {.name = fmt::format("t{}", t), .point = point, .state = TrialState::kSucceeded});
    std::vector<double> ranks = ParetoRankLosses(values);
    for (size_t k = 0; k < history.size(); ++k) history[k].loss = ranks[k];
  }
  return Hypervolume(values, p.reference);
}

double Quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  double at = q * static_cast<double>(v.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(at));
  size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (at - static_cast<double>(lo));
}

int Main(int argc, char** argv) {
  CLI::App app{"trainyard's samplers on two-objective problems: hypervolume at a budget"};
  int trials = 60, seeds = 20;
  std::vector<std::string> algorithms = {"random", "multivariate-tpe", "tpe", "sobol"};
  app.add_option("--trials", trials, "trials per run (the budget)");
  app.add_option("--seeds", seeds, "runs per problem and algorithm");
  app.add_option("--algorithms", algorithms, "Katib's algorithm names");
  CLI11_PARSE(app, argc, argv);
  bool ok = true;
  fmt::print("{:<11} {:<17} {:>10} {:>10} {:>10} {:>14} {:>10}\n", "problem", "algorithm",
             "HV median", "HV p25", "HV p75", "seeds > random", "s/trial");
  for (const Problem& p : Problems()) {
    double random_median = 0;
    for (const std::string& algorithm : algorithms) {
      std::vector<double> volumes;
      auto start = std::chrono::steady_clock::now();
      for (int s = 0; s < seeds; ++s) {
        Result<double> hv = RunOnce(p, algorithm, 1000 + static_cast<uint64_t>(s), trials);
        if (!hv.ok()) {
          fmt::print(stderr, "{} {}: {}\n", p.name, algorithm, hv.status().ToString());
          ok = false;
          break;
        }
        volumes.push_back(*hv);
      }
      if (volumes.empty()) continue;
      double median = Quantile(volumes, 0.5);
      if (algorithm == "random") random_median = median;
      int better = static_cast<int>(std::count_if(volumes.begin(), volumes.end(),
                                                  [&](double v) { return v > random_median; }));
      double per_trial =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() /
          (seeds * trials);
      fmt::print("{:<11} {:<17} {:>10.4f} {:>10.4f} {:>10.4f} {:>11}/{} {:>10.5f}\n", p.name,
                 algorithm, median, Quantile(volumes, 0.25), Quantile(volumes, 0.75), better, seeds,
                 per_trial);
    }
  }
  return ok ? 0 : 1;
}

}  // namespace
}  // namespace trainyard::tune::bench

int main(int argc, char** argv) { return trainyard::tune::bench::Main(argc, argv); }
