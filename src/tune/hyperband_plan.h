// Hyperband's schedule (Li et al. 2018, as Katib derives it): brackets of
// successive halving, each a ladder of rungs. Internal to tune/.
//
//   s_max = floor(log(r_l) / log(eta))      (0 when r_l < eta)
//   bracket s = s_max .. 0:  n = ceil((s_max + 1) * eta^s / (s + 1)),  r = r_l * eta^-s
//   rung i = 0 .. s:         floor(n * eta^-i) configurations, resource r * eta^i
//
// Rung i + 1 re-runs the best configurations of rung i, as many as it holds.
#pragma once

#include <vector>

#include "common/status.h"

namespace trainyard::tune {

struct HyperbandRung {
  int configs = 0;
  double resource = 0;
};

struct HyperbandBracket {
  int s = 0;
  std::vector<HyperbandRung> rungs;  // rungs[i] is rung i
};

struct HyperbandPlan {
  double r_l = 0;
  double eta = 3;
  int s_max = 0;
  std::vector<HyperbandBracket> brackets;  // in running order: s = s_max first
};

// r_l > 0, eta > 1 (callers map Katib's eta <= 0 to 3 first). Fails when a
// bracket would need more than a million configurations.
Result<HyperbandPlan> MakeHyperbandPlan(double r_l, double eta);

}  // namespace trainyard::tune
