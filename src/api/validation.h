// Validation: upstream's webhook rules for every kind (with its known holes
// closed), Kubernetes' rules for names, quantities and pod templates, and the
// checks users expect (negative replicas, duplicate env names, unknown
// replica types, minAvailable above the total, ...).
//
// Validation runs on the defaulted object and reports every error at once,
// each with its field path, in the Kubernetes form
// `spec.pytorchReplicaSpecs[Master].replicas: Forbidden: must be 1`.
#pragma once

#include <string>
#include <vector>

#include "api/object.h"
#include "common/field_path.h"

namespace trainyard::api {

struct ValidationResult {
  FieldErrors errors;
  std::vector<std::string> warnings;  // accepted, but worth telling the user
  bool ok() const { return errors.empty(); }
};

ValidationResult Validate(const Object& object);

// Rules that compare an update with the stored object: kind, name and
// namespace, runPolicy.managedBy and schedulingPolicy.queue never change.
FieldErrors ValidateUpdate(const Object& old_object, const Object& new_object);

// A Katib trial template read from its ConfigMap when the experiment
// starts, checked by the rules an inline trialSpec meets at admission.
FieldErrors ValidateTrialTemplateDocument(const ExperimentSpec& spec, const Json& document);

struct CheckedObject {
  std::optional<Object> object;  // decoded and defaulted; unset if undecodable
  ValidationResult result;
};

// Decode, default and validate in one step, as every entry point does. Errors
// from validation that fall inside a field that failed to decode are dropped:
// they would only repeat the decode error.
CheckedObject DecodeAndValidate(const Json& document);

}  // namespace trainyard::api
