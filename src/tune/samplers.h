// The algorithms behind MakeSampler, one factory per file. Internal to tune/.
#pragma once

#include <memory>

#include "common/status.h"
#include "tune/sampler.h"
#include "tune/space.h"

namespace trainyard::tune {

Result<std::unique_ptr<Sampler>> MakeRandomSampler(const Space& space,
                                                   const SamplerOptions& options);
Result<std::unique_ptr<Sampler>> MakeGridSampler(const Space& space, const SamplerOptions& options);
Result<std::unique_ptr<Sampler>> MakeSobolSampler(const Space& space,
                                                  const SamplerOptions& options);
// `tpe` (hyperopt's settings) and `multivariate-tpe` (Optuna's).
Result<std::unique_ptr<Sampler>> MakeTpeSampler(const Space& space, const SamplerOptions& options);
Result<std::unique_ptr<Sampler>> MakeMultivariateTpeSampler(const Space& space,
                                                            const SamplerOptions& options);
Result<std::unique_ptr<Sampler>> MakeGpSampler(const Space& space, const SamplerOptions& options);
Result<std::unique_ptr<Sampler>> MakeCmaEsSampler(const Space& space,
                                                  const SamplerOptions& options);
Result<std::unique_ptr<Sampler>> MakeHyperbandSampler(const Space& space,
                                                      const SamplerOptions& options);

}  // namespace trainyard::tune
