#include "tune/hyperband_plan.h"

#include <fmt/format.h>

#include <cmath>

namespace trainyard::tune {

Result<HyperbandPlan> MakeHyperbandPlan(double r_l, double eta) {
  if (!(r_l > 0) || !std::isfinite(r_l)) {
    return InvalidArgumentError("r_l must be a positive float number.");
  }
  if (!(eta > 1) || !std::isfinite(eta)) {
    return InvalidArgumentError(fmt::format("eta must be greater than 1, not {}", eta));
  }
  // The tolerance keeps log(27) / log(3) at 3 whichever way it rounds.
  constexpr double kTolerance = 1e-9;
  HyperbandPlan plan{.r_l = r_l, .eta = eta};
  plan.s_max =
      std::max(0, static_cast<int>(std::floor(std::log(r_l) / std::log(eta) + kTolerance)));
  constexpr double kMaxConfigs = 1e6;
  for (int s = plan.s_max; s >= 0; --s) {
    double n = std::ceil((plan.s_max + 1) * std::pow(eta, s) / (s + 1) - kTolerance);
    if (n > kMaxConfigs) {
      return InvalidArgumentError(fmt::format(
          "r_l {} with eta {} needs {} configurations in one bracket; use a smaller r_l or a "
          "larger eta",
          r_l, eta, n));
    }
    HyperbandBracket bracket{.s = s};
    for (int i = 0; i <= s; ++i) {
      bracket.rungs.push_back(
          {.configs = static_cast<int>(std::floor(n / std::pow(eta, i) + kTolerance)),
           .resource = r_l / std::pow(eta, s - i)});
    }
    plan.brackets.push_back(std::move(bracket));
  }
  return plan;
}

}  // namespace trainyard::tune
