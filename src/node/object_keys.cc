#include "node/object_keys.h"

#include <fmt/format.h>

#include "api/json.h"
#include "api/registry.h"
#include "common/strings.h"

namespace trainyard::node {

Result<std::optional<ObjectKeys>> ReadObjectKeys(const store::ObjectReader& store,
                                                 std::string_view kind,
                                                 const std::string& namespace_,
                                                 const std::string& name, bool binary_data) {
  Result<api::Json> stored = store.Get({std::string(kind), namespace_, name});
  if (!stored.ok()) return std::optional<ObjectKeys>();
  bool secret = api::HoldsSecrets(kind);
  ObjectKeys keys;
  for (const char* field : {"data", "binaryData"}) {
    bool encoded = secret || std::string_view(field) == "binaryData";
    if (!secret && encoded && !binary_data) continue;
    for (const auto& [key, value] : api::ObjectAt(*stored, {field}).items()) {
      if (!value.is_string()) continue;
      std::optional<std::string> bytes =
          encoded ? Base64Decode(value.get<std::string>()) : value.get<std::string>();
      if (!bytes) {
        return InvalidArgumentError(fmt::format("{} {} key {}: not base64", kind, name, key));
      }
      keys[key] = std::move(*bytes);
    }
  }
  return std::optional(std::move(keys));
}

}  // namespace trainyard::node
