// What upstream's TrainJob webhook checks at admission, against the other
// objects it reads: the runtime the job names must exist ("must be created
// before the TrainJob is created"), and what the runtime cannot do for the
// job (CheckAgainstRuntime) is refused before anything is stored, not
// found by the controller afterwards. A deprecated runtime is admitted with
// upstream's warning.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "api/object.h"
#include "api/registry.h"
#include "common/field_path.h"
#include "common/status.h"
#include "controller/trainjob_build.h"
#include "store/object_store.h"

namespace trainyard::controller {

// The runtime `ref` names for a TrainJob in `namespace_`; nullopt when
// there is none of that name.
Result<std::optional<RuntimeSource>> ReadRuntime(const store::ObjectReader& store,
                                                 const api::RuntimeRef& ref,
                                                 const std::string& namespace_);

struct Admission {
  FieldErrors errors;
  std::vector<std::string> warnings;
};

// `trainjob`, valid on its own, about to be created (or to replace a
// stored one, `update`). An update whose runtime has gone is admitted: the
// job was checked against it when created.
Result<Admission> AdmitTrainJob(const store::ObjectReader& store, const api::Object& trainjob,
                                bool update);

// What is checked at admission against the other objects, per resource
// (as an admission webhook's rules name resources): a TrainJob's runtime.
// Nothing for a resource without such a check, nor for an object refused
// on its own already.
Result<Admission> AdmitAgainstOthers(const store::ObjectReader& store,
                                     const api::ResourceType& type, const api::Json& object,
                                     bool update);

}  // namespace trainyard::controller
