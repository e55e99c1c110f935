// The algorithms behind MakeSampler, one factory per file. Internal to tune/.
#pragma once

#include <memory>
#include <optional>
#include <string_view>

#include "common/status.h"
#include "tune/sampler.h"
#include "tune/space.h"

namespace trainyard::tune {

// A label a sampler set on its trial, read back as an integer >= 0;
// nullopt when absent or not one.
std::optional<int> LabelInt(const TrialRecord& trial, std::string_view key);

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
Result<std::unique_ptr<Sampler>> MakePbtSampler(const Space& space, const SamplerOptions& options);

}  // namespace trainyard::tune
