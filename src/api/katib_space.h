// Where the object model meets the tuning library: an Experiment's
// parameters as tune's search space. Apart from katib.h so that the 27
// files that include the object model do not include tune; api uses tune
// only here and to check algorithm settings as Katib's webhook asks its
// suggestion service to.
#pragma once

#include <vector>

#include "api/katib.h"
#include "api/optimization_job.h"
#include "common/status.h"
#include "tune/space.h"

namespace trainyard::api {

// The experiment's parameters as a search space: feasibleSpace strings parsed
// and checked (min < max, numbers that parse, positive log bounds), which
// Katib leaves to its algorithms. Errors name the parameter.
Result<tune::Space> SearchSpaceOf(const std::vector<ParameterSpec>& parameters);

// An OptimizationJob's parameters as a search space: uniform and
// logUniform bounds parsed (Int: the whole numbers between them),
// categorical choices as a list.
Result<tune::Space> OptimizationSpaceOf(const std::vector<OptimizationParameter>& parameters);

}  // namespace trainyard::api
