#include "tune/samplers.h"

namespace trainyard::tune {

Result<std::unique_ptr<Sampler>> MakeTpeSampler(const Space&, const SamplerOptions&) {
  return UnimplementedError("not written yet");
}
Result<std::unique_ptr<Sampler>> MakeMultivariateTpeSampler(const Space&, const SamplerOptions&) {
  return UnimplementedError("not written yet");
}

}  // namespace trainyard::tune
