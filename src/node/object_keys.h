// The keys of a ConfigMap or a Secret as a container is given them, for
// its env (configMapKeyRef, secretKeyRef, envFrom) and its volumes.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"
#include "store/object_store.h"

namespace trainyard::node {

using ObjectKeys = std::map<std::string, std::string>;

// `kind` ("ConfigMap" or "Secret") `name`'s keys in `namespace_`: a
// Secret's `data` decoded from base64; a ConfigMap's `data` as it is and,
// with `binary_data`, its `binaryData` decoded too (volumes take both; env
// takes `data` alone, as the kubelet does). Nullopt when the object does
// not exist; INVALID_ARGUMENT naming a value that is not base64, never the
// value.
Result<std::optional<ObjectKeys>> ReadObjectKeys(const store::ObjectReader& store,
                                                 std::string_view kind,
                                                 const std::string& namespace_,
                                                 const std::string& name, bool binary_data);

}  // namespace trainyard::node
