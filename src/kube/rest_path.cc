#include "kube/rest_path.h"

#include <fmt/format.h>

namespace trainyard::kube {
namespace {

Result<const api::ResourceType*> TypeOf(std::string_view kind) {
  const api::ResourceType* type = api::ResourceTypeOfKind(kind);
  if (type == nullptr) return NotFoundError(fmt::format("no resource serves kind {}", kind));
  return type;
}

std::string Root(const api::ResourceType& type) {
  return type.group.empty() ? "/api/" + type.version
                            : fmt::format("/apis/{}/{}", type.group, type.version);
}

}  // namespace

Result<std::string> CollectionPath(std::string_view kind, std::string_view namespace_) {
  ASSIGN_OR_RETURN(const api::ResourceType* type, TypeOf(kind));
  if (type->namespaced && !namespace_.empty()) {
    return fmt::format("{}/namespaces/{}/{}", Root(*type), namespace_, type->plural);
  }
  return fmt::format("{}/{}", Root(*type), type->plural);
}

Result<std::string> ObjectPath(std::string_view kind, std::string_view namespace_,
                               std::string_view name, std::string_view subresource) {
  ASSIGN_OR_RETURN(const api::ResourceType* type, TypeOf(kind));
  if (type->namespaced && namespace_.empty()) {
    return InvalidArgumentError(fmt::format("a {} needs a namespace", kind));
  }
  if (name.empty()) return InvalidArgumentError(fmt::format("a {} needs a name", kind));
  ASSIGN_OR_RETURN(std::string collection, CollectionPath(kind, namespace_));
  std::string path = fmt::format("{}/{}", collection, name);
  if (!subresource.empty()) path += fmt::format("/{}", subresource);
  return path;
}

}  // namespace trainyard::kube
