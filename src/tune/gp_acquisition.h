// Acquisition functions for minimisation, as losses to minimise, from the
// GP's posterior mean and variance (standardised units). Internal to tune/.
//
//   EI   -log E[max(best - xi - f, 0)]   (log-EI: stays finite and smooth far
//                                          from the incumbent, Ament et al. 2023)
//   PI   -log P(f < best - xi)
//   LCB  mean - kappa * sd
//
// xi = 0.01 and kappa = 1.96 are skopt's defaults (here in standardised units).
#pragma once

namespace trainyard::tune {

enum class Acquisition { kEi, kPi, kLcb };

struct AcquisitionParams {
  double best = 0;  // the lowest observed (standardised) value
  double xi = 0.01;
  double kappa = 1.96;
};

// The loss, and its derivatives with respect to the mean and the variance.
double AcquisitionLoss(Acquisition acquisition, const AcquisitionParams& params, double mean,
                       double variance, double* d_mean = nullptr, double* d_variance = nullptr);

// log(phi(z) + z Phi(z)), accurate for every z (the EI of a unit normal).
double LogExpectedImprovementFactor(double z);
// log Phi(z), accurate in both tails.
double LogNormalCdf(double z);

}  // namespace trainyard::tune
