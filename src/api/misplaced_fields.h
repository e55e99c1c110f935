// Where a misplaced field belongs. A field Kubernetes or Kubeflow defines in
// one place of an object is often written in another: a TFJob's
// `spec.ttlSecondsAfterFinished` belongs at
// `spec.runPolicy.ttlSecondsAfterFinished`, a container's `restartPolicy`
// at the replica. An unknown field with no near name at its own level is
// looked up, by its exact name, among every field the kind has, and the
// error says where it belongs.
#pragma once

#include <string_view>
#include <vector>

#include "common/field_path.h"

namespace trainyard::api {

// Every place a field named `name` belongs in `kind`'s objects, as paths
// with `[*]` for any list item or map entry; empty for a kind without a
// field model (the core kinds) or a name it has nowhere.
std::vector<FieldPath> PlacesOfField(std::string_view kind, std::string_view name);

// Gives each unknown-field error of `errors` that has no hint yet, and
// whose name belongs elsewhere in `kind`'s objects, the place nearest it
// (two when they are as near) in FieldError::belongs_at, with the error's
// own list indices and map keys where the paths share them: "; did you
// mean spec.runPolicy.ttlSecondsAfterFinished?".
void HintMisplacedFields(std::string_view kind, FieldErrors& errors);

}  // namespace trainyard::api
