#include "store/object_lookup.h"

#include "api/registry.h"

namespace trainyard::store {

api::ObjectLookup LookupIn(const ObjectReader& store, std::string namespace_) {
  return [&store, ns = std::move(namespace_)](const std::string& kind,
                                              const std::string& name) -> std::optional<api::Json> {
    const api::ResourceType* type = api::ResourceTypeOfKind(kind);
    if (type == nullptr) return std::nullopt;
    Result<api::Json> object = store.Get({type->store_kind, ns, name});
    if (!object.ok()) return std::nullopt;
    return std::move(*object);
  };
}

}  // namespace trainyard::store
