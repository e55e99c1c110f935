// What the experiment controller needs to turn suggestions into trials: the
// trial template (inline or from its ConfigMap), the sampler's view of the
// trials so far, and the Trial objects themselves. Internal to controller/.
#pragma once

#include <random>
#include <string>
#include <vector>

#include "api/katib.h"
#include "api/well_known.h"
#include "store/object_store.h"
#include "tune/sampler.h"
#include "tune/space.h"

namespace trainyard::controller {

// The template document: spec.trialTemplate.trialSpec, or the ConfigMap
// entry it names, parsed and checked by the webhook's rules. An error says
// which ConfigMap or entry is missing or wrong.
Result<api::Json> TrialTemplateDocument(const store::ObjectStore& store,
                                        const api::Experiment& experiment);

// The trials as the sampler sees them: points parsed from their
// assignments, losses from their observations (negated when maximising).
Result<std::vector<tune::TrialRecord>> TrialRecords(const tune::Space& space,
                                                    const api::Experiment& experiment,
                                                    const std::vector<api::Trial>& trials);

// The Trial for one suggestion: name `<experiment>-<8 random chars>`, the
// job rendered from the template, owned by the experiment.
Result<api::Trial> BuildTrial(const api::Experiment& experiment, const tune::Space& space,
                              const api::Json& template_document,
                              const tune::Suggestion& suggestion, int64_t index,
                              std::mt19937& random);

// The sampler settings and seed for an experiment (the seed derived from its
// uid when random_state is not set).
tune::SamplerOptions SamplerOptionsOf(const api::Experiment& experiment);

}  // namespace trainyard::controller
