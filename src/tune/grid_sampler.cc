#include "tune/samplers.h"

namespace trainyard::tune {

Result<std::unique_ptr<Sampler>> MakeGridSampler(const Space&, const SamplerOptions&) {
  return UnimplementedError("not written yet");
}

}  // namespace trainyard::tune
