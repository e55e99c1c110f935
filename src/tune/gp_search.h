// Where a GP sampler looks next: the point, not taken by any trial, that an
// acquisition function scores best. Internal to tune/.
//
// The search scores random candidates (half uniform in the unit cube, half
// near the best points observed), then, with local search, runs
// box-constrained L-BFGS from the best five candidates and the incumbent,
// holding categorical coordinates, and tries each categorical value in turn
// after. Every point is scored where it lands once snapped onto the
// parameters' values (Space::FromUnit); the best one no trial has taken wins.
#pragma once

#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "tune/gp_acquisition.h"
#include "tune/gp_model.h"
#include "tune/space.h"

namespace trainyard::tune {

struct AcquisitionSearchOptions {
  bool local_search = true;  // false: the candidates alone (skopt's "sampling")
  int candidates = 2048;
};

class AcquisitionSearch {
 public:
  // Draws the candidates. `best_points`: unit points, best first (at least
  // one). `space` must outlive the search.
  AcquisitionSearch(const Space& space, AcquisitionSearchOptions options,
                    std::vector<Point> best_points, std::mt19937_64& rng);

  // The unit point for `acquisition` under `gp`, whose lowest standardised
  // observation is `best`; nullopt when every candidate is taken.
  std::optional<Point> Next(const GaussianProcess& gp, Acquisition acquisition, double best,
                            const std::set<std::string>& taken) const;
  // skopt's gp_hedge: the points of EI, LCB and PI, one of them picked with
  // softmax probabilities of their gains (minus their predicted means).
  std::optional<Point> Hedge(const GaussianProcess& gp, double best,
                             const std::set<std::string>& taken, std::mt19937_64& rng) const;

 private:
  struct Scored {
    double score;
    Point unit;
  };
  std::optional<Point> Search(const GaussianProcess& gp, Acquisition acquisition,
                              const AcquisitionParams& params, const std::vector<double>& mean,
                              const std::vector<double>& variance,
                              const std::set<std::string>& taken) const;
  Point LocalSearch(const GaussianProcess& gp, Acquisition acquisition,
                    const AcquisitionParams& params, const Point& start) const;
  Point Canonical(const Point& u) const { return space_.ToUnit(space_.FromUnit(u)); }
  void Predict(const GaussianProcess& gp, std::vector<double>* mean,
               std::vector<double>* variance) const;

  const Space& space_;
  AcquisitionSearchOptions options_;
  std::vector<Point> best_points_;
  std::vector<bool> categorical_;
  std::vector<Point> candidates_;
};

}  // namespace trainyard::tune
