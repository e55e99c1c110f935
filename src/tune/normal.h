// The standard normal distribution's CDF and quantile, to double precision.
#pragma once

namespace trainyard::tune {

double NormalCdf(double z);
double NormalPdf(double z);
// The inverse of NormalCdf for p in (0, 1); -inf and +inf at 0 and 1.
double NormalQuantile(double p);

}  // namespace trainyard::tune
