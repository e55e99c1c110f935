// Bearer-token authentication with per-namespace access, from a token file
// (`trainyard server --token-file`). One token a line:
//
//   # token      user   namespaces
//   s3cr3t-a     alice  team-a,team-b
//   s3cr3t-ops   ops    *
//
// A token with `*` may do anything; any other may read and write only in
// its namespaces, and read what is cluster-wide (namespaces, nodes,
// discovery). /healthz, /readyz, /livez and /version need no token, as on
// Kubernetes.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "server/api_status.h"
#include "server/handler.h"

namespace trainyard::server {

class Authorizer {
 public:
  // INVALID_ARGUMENT naming the line for a malformed file.
  static Result<Authorizer> Load(const std::string& path);
  static Result<Authorizer> Parse(const std::string& text);

  // Nothing when `request` (with its Authorization header) may proceed;
  // else the 401 or 403 to answer.
  std::optional<ApiError> Check(const ApiRequest& request) const;
  // A token that may do anything, for the kubeconfig the server writes.
  std::optional<std::string> AdminToken() const;

 private:
  struct Entry {
    std::string token;
    std::string user;
    std::vector<std::string> namespaces;  // {"*"}: every one
  };
  const Entry* Find(const std::string& token) const;
  std::vector<Entry> entries_;
};

}  // namespace trainyard::server
