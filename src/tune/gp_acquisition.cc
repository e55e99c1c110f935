#include "tune/gp_acquisition.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "tune/normal.h"

namespace trainyard::tune {
namespace {

// Below -kTail the direct formulas lose too many digits (or underflow), and
// the asymptotic series for x = -z are exact to double precision.
constexpr double kTail = 25;

double LogNormalPdf(double z) { return -0.5 * z * z - 0.5 * std::log(2 * std::numbers::pi); }

// Mills-type series in 1 / x^2 for x >= kTail:
//   Phi(-x) = phi(x) / x * (1 - 1/x^2 + 3/x^4 - 15/x^6 + 105/x^8 ...)
//   h(-x)   = phi(x) / x^2 * (1 - 3/x^2 + 15/x^4 - 105/x^6 + 945/x^8 ...)
double CdfSeries(double x) {
  double t = 1 / (x * x);
  return 1 + t * (-1 + t * (3 + t * (-15 + t * 105)));
}
double EiSeries(double x) {
  double t = 1 / (x * x);
  return 1 + t * (-3 + t * (15 + t * (-105 + t * 945)));
}

// Phi(z) / h(z): d log h / dz.
double CdfOverEi(double z) {
  if (z > -kTail) return NormalCdf(z) / (NormalPdf(z) + z * NormalCdf(z));
  double x = -z;
  return x * CdfSeries(x) / EiSeries(x);
}

// phi(z) / Phi(z): d log Phi / dz.
double PdfOverCdf(double z) {
  if (z > -kTail) return NormalPdf(z) / NormalCdf(z);
  double x = -z;
  return x / CdfSeries(x);
}

}  // namespace

double LogExpectedImprovementFactor(double z) {
  if (z > -kTail) return std::log(NormalPdf(z) + z * NormalCdf(z));
  double x = -z;
  return LogNormalPdf(x) - 2 * std::log(x) + std::log(EiSeries(x));
}

double LogNormalCdf(double z) {
  if (z > 0) return std::log1p(-NormalCdf(-z));
  if (z > -kTail) return std::log(NormalCdf(z));
  double x = -z;
  return LogNormalPdf(x) - std::log(x) + std::log(CdfSeries(x));
}

double AcquisitionLoss(Acquisition acquisition, const AcquisitionParams& params, double mean,
                       double variance, double* d_mean, double* d_variance) {
  // A floor on the deviation keeps logs finite at observed points.
  constexpr double kMinVariance = 1e-18;
  bool floored = variance < kMinVariance;
  double sd = std::sqrt(std::max(variance, kMinVariance));
  double value = 0;
  double d_sd = 0;
  double dm = 0;
  switch (acquisition) {
    case Acquisition::kEi: {
      double z = (params.best - params.xi - mean) / sd;
      double ratio = CdfOverEi(z);
      value = -(std::log(sd) + LogExpectedImprovementFactor(z));
      dm = ratio / sd;
      d_sd = -(1 - z * ratio) / sd;
      break;
    }
    case Acquisition::kPi: {
      double z = (params.best - params.xi - mean) / sd;
      double ratio = PdfOverCdf(z);
      value = -LogNormalCdf(z);
      dm = ratio / sd;
      d_sd = ratio * z / sd;
      break;
    }
    case Acquisition::kLcb:
      value = mean - params.kappa * sd;
      dm = 1;
      d_sd = -params.kappa;
      break;
  }
  if (d_mean) *d_mean = dm;
  if (d_variance) *d_variance = floored ? 0 : d_sd / (2 * sd);
  return value;
}

}  // namespace trainyard::tune
