// What the client verbs (client_commands.h, artifacts_command.h) share:
// the namespace and paths a command names, a connection, and failing with
// the server's word.
#pragma once

#include <memory>
#include <string>

#include "cli/api_client.h"
#include "cli/client_commands.h"
#include "server/resources.h"

namespace trainyard::cli {

// The command's namespace: --namespace, or "default".
std::string NamespaceOf(const ClientCommand& c);
std::string CollectionPath(const server::Resource& r, const std::string& ns);
std::string ObjectPath(const server::Resource& r, const std::string& ns, const std::string& name);
// Prints "error: <message>" to stderr; returns 1, the exit code.
int Fail(const std::string& message);
Result<std::unique_ptr<ApiClient>> Connect(const ClientCommand& c);

// What a verb on a kind needs: the resource the word names, and a client.
struct Session {
  const server::Resource* resource;
  std::unique_ptr<ApiClient> client;
};
Result<Session> OpenSession(const ClientCommand& command, const std::string& kind);

}  // namespace trainyard::cli
