#include "tune/sampler.h"

#include "tune/samplers.h"

namespace trainyard::tune {

const std::vector<std::string>& SamplerNames() {
  static const std::vector<std::string> kNames = {
      "random", "grid", "sobol", "tpe", "multivariate-tpe", "bayesianoptimization", "cmaes",
      "hyperband"};
  return kNames;
}

Result<std::unique_ptr<Sampler>> MakeSampler(const Space&, const SamplerOptions&) {
  return UnimplementedError("not written yet");
}

}  // namespace trainyard::tune
