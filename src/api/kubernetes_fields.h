// The field names Kubernetes defines for each core/v1 type trainyard models
// in part ("Container", "PodSpec", ...), generated from upstream's CRD
// schema. Decoding keeps the listed fields it does not model verbatim and
// reports any other as an unknown field, as kubectl's strict validation does.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace trainyard::api {

// Null when `type` has no list (its unknown fields are all kept).
const std::vector<std::string>* KubernetesFieldNames(std::string_view type);

}  // namespace trainyard::api
