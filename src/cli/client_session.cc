#include "cli/client_session.h"

#include <fmt/format.h>

#include <iostream>

#include "api/registry.h"

namespace trainyard::cli {

std::string NamespaceOf(const ClientCommand& c) {
  return c.namespace_.empty() ? "default" : c.namespace_;
}

std::string CollectionPath(const server::Resource& r, const std::string& ns) {
  std::string base = r.group.empty() ? "/api/v1" : fmt::format("/apis/{}/{}", r.group, r.version);
  return r.namespaced && !ns.empty() ? fmt::format("{}/namespaces/{}/{}", base, ns, r.plural)
                                     : fmt::format("{}/{}", base, r.plural);
}

std::string ObjectPath(const server::Resource& r, const std::string& ns, const std::string& name) {
  return CollectionPath(r, ns) + "/" + name;
}

int Fail(const std::string& message) {
  std::cerr << "error: " << message << '\n';
  return 1;
}

Result<std::unique_ptr<ApiClient>> Connect(const ClientCommand& c) {
  return ApiClient::Connect(c.connection);
}

Result<Session> OpenSession(const ClientCommand& command, const std::string& kind) {
  const server::Resource* r = api::ResolveResourceType(kind);
  if (r == nullptr) {
    return NotFoundError(fmt::format("the server doesn't have a resource type {:?}", kind));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<ApiClient> client, Connect(command));
  return Session{r, std::move(client)};
}

}  // namespace trainyard::cli
