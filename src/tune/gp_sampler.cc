// bayesianoptimization: skopt's settings over a Gaussian process (gp_model.h)
// in the unit cube of Space::ToUnit. Unlike upstream's skopt service (§2.5
// and §8 item 24 of the Katib reference) every parameter keeps its
// distribution (log scale only where the experiment asks for it) and int
// steps hold, since suggestions are snapped with Space::FromUnit. Categorical
// parameters enter the kernel by equality (one-hot with a shared
// lengthscale); discrete ones, being numbers, by their index.
//
// A suggestion:
//  1. While fewer than n_initial_points trials have a loss (failed and
//     running trials don't count), the next points of a Sobol sequence
//     shifted by a random vector of the seed's (modulo 1): they fill the
//     cube more evenly than random draws (SMAC and HEBO start so; skopt
//     draws at random), and differ per seed.
//  2. The GP is fitted to the trials with a loss, warped as gp_warp.h says;
//     a non-finite loss counts as the worst finite one. Above kMaxTraining
//     (300) such trials it sees the best quarter of that cap and the most
//     recent others. Above kMaxFit (128), its hyperparameters are those
//     fitted to the first 129, 145, 161, ... (every kRefitEvery) trials
//     with a loss, on kMaxFit of them chosen the same way, and the sampler
//     keeps the last such fit: a sampler kept between suggestions refits
//     once in 16, and answers as a new one would. At 1,000 trials and
//     d <= 20 a kept sampler answers in some 20 to 30 ms, a new one (the
//     fit) in 0.1 to 0.2 s (docs/benchmarks.md); the controllers keep a
//     job's sampler between reconciles (controller/sampler_cache.h).
//  3. Running trials, and each point already chosen for this batch, are told
//     the best loss seen (skopt's constant liar, "cl_min"), noise-free: the
//     model is sure of them, so the acquisition moves away and a batch, or
//     requests made while trials run, spread out.
//  4. The acquisition is minimised as gp_search.h says: 2,048 random
//     candidates, then L-BFGS from the best of them (acq_optimizer auto and
//     lbfgs; sampling scores 8,192 candidates and stops there); half as
//     many candidates above kMaxFit trials.
//  5. gp_hedge picks among EI, LCB and PI with softmax probabilities of their
//     gains, as skopt, but the gains are those of this suggestion's three
//     proposals under the current model (minus their predicted mean) rather
//     than sums over past asks: skopt keeps those sums in the optimiser's
//     memory, and trainyard's samplers keep none.
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <set>
#include <string>

#include "tune/gp_acquisition.h"
#include "tune/gp_model.h"
#include "tune/gp_search.h"
#include "tune/gp_warp.h"
#include "tune/history_rng.h"
#include "tune/samplers.h"
#include "tune/settings.h"
#include "tune/sobol_points.h"

namespace trainyard::tune {
namespace {

constexpr size_t kMaxTraining = 300;
constexpr size_t kMaxFit = 128;
// Above kMaxFit trials with a loss, the hyperparameters are refitted when
// that count reaches kMaxFit + 1 + a multiple of this (the anchor), and kept
// until the next anchor.
constexpr size_t kRefitEvery = 16;
constexpr uint64_t kFitStream = 1;   // HistoryRng's stream for anchored fits
constexpr double kBestShare = 0.25;  // of either set, the best trials
constexpr size_t kMaxPending = 100;  // running trials told a lie, the most recent
constexpr int kCandidates = 2048;
constexpr int kSamplingCandidates = 8192;
// Above kMaxFit trials with a loss, the search scores half as many
// candidates: each costs O(kMaxTraining (d + kMaxTraining)), and at 1,000
// trials and d = 20 scoring 2,048 took some 40 of the 51 ms a kept
// sampler spent. The L-BFGS runs from the best of them search finer.
constexpr int kLargeHistoryDivisor = 2;
constexpr size_t kBestPoints = 5;  // the search draws candidates near these
constexpr int kRandomAttempts = 100;

// Replaces non-finite losses by the worst finite one (0 when there is none).
std::vector<double> FiniteLosses(std::vector<double> losses) {
  double worst = -std::numeric_limits<double>::infinity();
  for (double loss : losses) {
    if (std::isfinite(loss)) worst = std::max(worst, loss);
  }
  for (double& loss : losses) {
    if (!std::isfinite(loss)) loss = std::isfinite(worst) ? worst : 0.0;
  }
  return losses;
}

// The number of trials with a loss whose hyperparameters serve `observed`
// of them, above kMaxFit.
size_t FitAnchor(size_t observed) {
  return kMaxFit + 1 + (observed - kMaxFit - 1) / kRefitEvery * kRefitEvery;
}

struct GpConfig {
  bool hedge = true;
  Acquisition acquisition = Acquisition::kEi;  // when not hedging
  bool local_search = true;
  int64_t initial_points = 10;
};

// Indices into `losses` (creation order) the model sees: all of them up to
// `cap`; above, the best share of `cap` and the most recent others.
std::vector<size_t> SelectTraining(const std::vector<double>& losses, size_t cap) {
  std::vector<size_t> all(losses.size());
  std::iota(all.begin(), all.end(), 0);
  if (losses.size() <= cap) return all;
  std::vector<size_t> by_loss = all;
  std::stable_sort(by_loss.begin(), by_loss.end(),
                   [&](size_t a, size_t b) { return losses[a] < losses[b]; });
  size_t best = static_cast<size_t>(static_cast<double>(cap) * kBestShare);
  std::vector<bool> chosen(losses.size(), false);
  for (size_t k = 0; k < best; ++k) chosen[by_loss[k]] = true;
  size_t recent = cap - best;
  for (size_t t = losses.size(); t-- > 0 && recent > 0;) {
    if (!chosen[t]) {
      chosen[t] = true;
      --recent;
    }
  }
  std::vector<size_t> out;
  for (size_t t = 0; t < losses.size(); ++t) {
    if (chosen[t]) out.push_back(t);
  }
  return out;
}

class GpSampler : public Sampler {
 public:
  GpSampler(Space space, GpConfig config, uint64_t seed)
      : space_(std::move(space)), config_(config), seed_(seed) {
    for (size_t i = 0; i < space_.size(); ++i) {
      categorical_.push_back(space_[i].type == ParameterType::kCategorical);
    }
  }

  // The fit it keeps is remade whenever the history it was fitted on
  // changes (tests show a kept sampler answering as a new one).
  bool worth_keeping() const override { return true; }

  Result<SuggestResult> Suggest(std::span<const TrialRecord> trials, int count) override {
    SuggestResult result;
    if (count <= 0) return result;
    std::set<std::string> taken;
    for (const TrialRecord& trial : trials) taken.insert(space_.Key(trial.point));
    std::mt19937_64 rng = HistoryRng(seed_, trials.size());

    // The trials with a loss; a non-finite loss counts as the worst finite one.
    std::vector<size_t> observed;
    std::vector<double> losses;
    double worst = -std::numeric_limits<double>::infinity();
    for (size_t t = 0; t < trials.size(); ++t) {
      const TrialRecord& trial = trials[t];
      if (trial.state == TrialState::kPending || trial.state == TrialState::kFailed ||
          !trial.loss) {
        continue;
      }
      observed.push_back(t);
      losses.push_back(*trial.loss);
      if (std::isfinite(*trial.loss)) worst = std::max(worst, *trial.loss);
    }
    if (observed.empty() || static_cast<int64_t>(observed.size()) < config_.initial_points ||
        !std::isfinite(worst) || space_.size() == 0) {
      AddInitial(trials.size(), count, taken, result);
      // Random draws stand in for design points a trial already took.
      AddRandom(count, rng, taken, result);
      return Finish(taken, std::move(result));
    }

    GaussianProcess gp = FitModel(trials, observed, losses, rng);
    const double best = std::ranges::min(gp.standardized_outputs());
    int candidates = config_.local_search ? kCandidates : kSamplingCandidates;
    if (observed.size() > kMaxFit) candidates /= kLargeHistoryDivisor;
    AcquisitionSearch search(space_,
                             {.local_search = config_.local_search, .candidates = candidates},
                             BestPoints(gp), rng);
    std::vector<size_t> pending;
    for (size_t t = 0; t < trials.size(); ++t) {
      if (trials[t].state == TrialState::kPending) pending.push_back(t);
    }
    if (pending.size() > kMaxPending) {
      pending.erase(pending.begin(), pending.end() - static_cast<std::ptrdiff_t>(kMaxPending));
    }
    for (size_t t : pending) gp.AddObservation(space_.ToUnit(trials[t].point), best);
    for (int k = 0; k < count; ++k) {
      std::optional<Point> unit = config_.hedge ? search.Hedge(gp, best, taken, rng)
                                                : search.Next(gp, config_.acquisition, best, taken);
      if (!unit) break;
      Point point = space_.FromUnit(*unit);
      taken.insert(space_.Key(point));
      result.suggestions.push_back({.point = std::move(point)});
      gp.AddObservation(*unit, best);
    }
    if (static_cast<int>(result.suggestions.size()) < count) AddRandom(count, rng, taken, result);
    return Finish(taken, std::move(result));
  }

 private:
  // A finite space is exhausted once every point is taken.
  SuggestResult Finish(const std::set<std::string>& taken, SuggestResult result) const {
    std::optional<int64_t> size = space_.Size();
    result.exhausted = size && static_cast<int64_t>(taken.size()) >= *size;
    return result;
  }

  // The initial design: the Sobol sequence from `first` on, shifted by a
  // random vector of the seed's (modulo 1), so that the points fill the
  // cube evenly and differ per seed.
  void AddInitial(size_t first, int count, std::set<std::string>& taken,
                  SuggestResult& result) const {
    // Beyond Boost's directions, and for an empty space, AddRandom alone
    // draws the initial points.
    if (space_.size() == 0 || space_.size() > kMaxSobolDimensions) return;
    std::mt19937_64 shift_rng(seed_ ^ 0x5eedULL);
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    Point shift(space_.size());
    for (double& s : shift) s = uniform(shift_rng);
    SobolPoints sequence(space_.size(), first);
    for (int k = 0; k < count && static_cast<int>(result.suggestions.size()) < count; ++k) {
      Point unit = sequence.Next();
      for (size_t j = 0; j < unit.size(); ++j) {
        double u = unit[j] + shift[j];
        unit[j] = u - std::floor(u);
      }
      Point point = space_.FromUnit(unit);
      if (taken.insert(space_.Key(point)).second) {
        result.suggestions.push_back({.point = std::move(point)});
      }
    }
  }

  void AddRandom(int count, std::mt19937_64& rng, std::set<std::string>& taken,
                 SuggestResult& result) const {
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    while (static_cast<int>(result.suggestions.size()) < count) {
      bool found = false;
      for (int attempt = 0; attempt < kRandomAttempts && !found; ++attempt) {
        Point unit(space_.size());
        for (double& u : unit) u = uniform(rng);
        Point point = space_.FromUnit(unit);
        if (taken.insert(space_.Key(point)).second) {
          result.suggestions.push_back({.point = std::move(point)});
          found = true;
        }
      }
      if (!found) return;  // the space is (nearly) used up
    }
  }

  // The model of the observed trials (raw `losses`, in their order): up to
  // kMaxFit of them, fitted to all; above, conditioned on SelectTraining's
  // kMaxTraining with the anchor's hyperparameters (AnchoredHyperparameters).
  GaussianProcess FitModel(std::span<const TrialRecord> trials, const std::vector<size_t>& observed,
                           const std::vector<double>& losses, std::mt19937_64& rng) {
    std::vector<double> warped = WarpLosses(FiniteLosses(losses)).values;
    std::vector<size_t> training = SelectTraining(warped, kMaxTraining);
    std::vector<double> x;
    std::vector<double> y;
    for (size_t c : training) {
      Point u = space_.ToUnit(trials[observed[c]].point);
      x.insert(x.end(), u.begin(), u.end());
      y.push_back(warped[c]);
    }
    if (observed.size() <= kMaxFit) return GaussianProcess::Fit(x, y, categorical_, rng);
    return GaussianProcess::WithHyperparameters(x, y, categorical_,
                                                AnchoredHyperparameters(trials, observed, losses));
  }

  // The hyperparameters fitted to the first FitAnchor(n) of the n observed
  // trials, as FitModel would fit them there (warped among themselves, the
  // kMaxFit chosen by SelectTraining), drawing from a generator of the
  // anchor's. They change every kRefitEvery trials rather than every trial:
  // a fit (L-BFGS with restarts, O(kMaxFit^3) per step) costs 0.1 to 0.2 s,
  // four times the rest of a suggestion at 1,000 trials (docs/benchmarks.md).
  // Since they depend on the trials alone, a sampler that has fitted them
  // before (memo_) answers as a new one would, only sooner.
  GpHyperparameters AnchoredHyperparameters(std::span<const TrialRecord> trials,
                                            const std::vector<size_t>& observed,
                                            const std::vector<double>& losses) {
    const size_t anchor = FitAnchor(observed.size());
    FitInputs inputs;
    for (size_t c = 0; c < anchor; ++c) {
      Point u = space_.ToUnit(trials[observed[c]].point);
      inputs.x.insert(inputs.x.end(), u.begin(), u.end());
      inputs.losses.push_back(losses[c]);
    }
    if (memo_ && memo_->inputs == inputs) return memo_->hyper;
    std::vector<double> warped = WarpLosses(FiniteLosses(inputs.losses)).values;
    std::vector<double> x;
    std::vector<double> y;
    for (size_t c : SelectTraining(warped, kMaxFit)) {
      x.insert(x.end(), inputs.x.begin() + static_cast<std::ptrdiff_t>(c * space_.size()),
               inputs.x.begin() + static_cast<std::ptrdiff_t>((c + 1) * space_.size()));
      y.push_back(warped[c]);
    }
    std::mt19937_64 rng = HistoryRng(seed_, anchor, kFitStream);
    memo_ = FitMemo{.inputs = std::move(inputs),
                    .hyper = GaussianProcess::Fit(x, y, categorical_, rng).hyperparameters()};
    return memo_->hyper;
  }

  // The best few points the model was fitted to, best first.
  static std::vector<Point> BestPoints(const GaussianProcess& gp) {
    std::span<const double> z = gp.standardized_outputs();
    std::vector<size_t> order(z.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return z[a] < z[b]; });
    std::vector<Point> out;
    for (size_t k = 0; k < std::min<size_t>(order.size(), kBestPoints); ++k) {
      std::span<const double> u = gp.input(static_cast<int>(order[k]));
      out.emplace_back(u.begin(), u.end());
    }
    return out;
  }

  // The anchor's trials, unit points one after another and raw losses.
  struct FitInputs {
    std::vector<double> x;
    std::vector<double> losses;
    // Bit for bit, so that a NaN loss (a diverged trial) matches itself.
    bool operator==(const FitInputs& other) const {
      auto same = [](double a, double b) {
        return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b);
      };
      return std::ranges::equal(x, other.x, same) && std::ranges::equal(losses, other.losses, same);
    }
  };
  struct FitMemo {
    FitInputs inputs;
    GpHyperparameters hyper;
  };

  Space space_;
  GpConfig config_;
  uint64_t seed_;
  std::vector<bool> categorical_;
  std::optional<FitMemo> memo_;  // the last anchored fit
};

}  // namespace

Result<std::unique_ptr<Sampler>> MakeGpSampler(const Space& space, const SamplerOptions& options) {
  ASSIGN_OR_RETURN(SettingsReader reader,
                   SettingsReader::Make("bayesianoptimization", options.settings,
                                        {"base_estimator", "n_initial_points", "acq_func",
                                         "acq_optimizer", "random_state"}));
  ASSIGN_OR_RETURN(std::string estimator,
                   reader.OneOf("base_estimator", "GP", {"GP", "RF", "ET", "GBRT"}));
  if (estimator != "GP") {
    return InvalidArgumentError(
        fmt::format("base_estimator {} is not supported by trainyard; use GP", estimator));
  }
  GpConfig config;
  ASSIGN_OR_RETURN(config.initial_points, reader.Int("n_initial_points", 10, 0));
  ASSIGN_OR_RETURN(
      std::string acquisition,
      reader.OneOf("acq_func", "gp_hedge", {"gp_hedge", "LCB", "EI", "PI", "EIps", "PIps"}));
  if (acquisition == "EIps" || acquisition == "PIps") {
    return InvalidArgumentError(fmt::format(
        "acq_func {} is not supported by trainyard: it needs each trial's run time as a second "
        "objective; use {}",
        acquisition, acquisition.substr(0, 2)));
  }
  config.hedge = acquisition == "gp_hedge";
  config.acquisition = acquisition == "LCB"  ? Acquisition::kLcb
                       : acquisition == "PI" ? Acquisition::kPi
                                             : Acquisition::kEi;
  ASSIGN_OR_RETURN(std::string optimizer,
                   reader.OneOf("acq_optimizer", "auto", {"auto", "sampling", "lbfgs"}));
  config.local_search = optimizer != "sampling";
  ASSIGN_OR_RETURN(uint64_t seed, reader.Seed(options.default_seed));
  return std::unique_ptr<Sampler>(std::make_unique<GpSampler>(space, config, seed));
}

}  // namespace trainyard::tune
