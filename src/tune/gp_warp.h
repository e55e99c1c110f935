// Output warping for the Gaussian process: losses are standardised, then
// Yeo-Johnson power-transformed with the exponent that makes them most
// Gaussian (maximum likelihood), as HEBO does. A GP assumes Gaussian
// outputs; losses that span orders of magnitude (Rosenbrock, Goldstein-
// Price, a diverging learning rate) would otherwise have their few large
// values set the lengthscales and the noise, and the region near the best
// would look flat. The transform is monotone, so the order of the losses,
// and with it the best trial, is kept.
#pragma once

#include <vector>

namespace trainyard::tune {

struct Warped {
  std::vector<double> values;
  double lambda = 1;  // 1: the standardised losses, unchanged
};

Warped WarpLosses(const std::vector<double>& losses);

// Yeo-Johnson's transform of one value.
double YeoJohnson(double x, double lambda);

}  // namespace trainyard::tune
