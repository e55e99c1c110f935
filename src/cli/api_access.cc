#include "cli/api_access.h"

#include <fmt/format.h>

#include "kube/cluster_config.h"

namespace trainyard::cli {

Result<node::ApiAccess> LoadApiAccess(const std::string& kubeconfig) {
  ASSIGN_OR_RETURN(kube::ClusterConfig config, kube::LoadKubeconfig(kubeconfig));
  constexpr std::string_view kHttps = "https://";
  if (!config.server.starts_with(kHttps)) {
    return InvalidArgumentError(fmt::format(
        "--kubeconfig {}: its server {} is not HTTPS, and pods' in-cluster clients reach the API "
        "server over HTTPS only (start trainyard server with --tls-cert and --tls-key)",
        kubeconfig, config.server));
  }
  if (config.token.empty() && (!config.client_cert_pem.empty() || !config.username.empty())) {
    return InvalidArgumentError(fmt::format(
        "--kubeconfig {}: its user signs in with a client certificate or a password, and pods "
        "sign in with a bearer token only, as a service account does: give a kubeconfig whose "
        "user has a token",
        kubeconfig));
  }
  if (config.insecure_skip_tls_verify) {
    return InvalidArgumentError(
        fmt::format("--kubeconfig {}: insecure-skip-tls-verify: pods check the server against "
                    "the CA they are given; give the kubeconfig its certificate-authority",
                    kubeconfig));
  }
  std::string address = config.server.substr(kHttps.size());
  if (size_t slash = address.find('/');
      slash != std::string::npos && address.find_first_not_of('/', slash) != std::string::npos) {
    return InvalidArgumentError(fmt::format(
        "--kubeconfig {}: its server {} has a path, and in-cluster clients reach the API server "
        "at https://KUBERNETES_SERVICE_HOST:KUBERNETES_SERVICE_PORT alone",
        kubeconfig, config.server));
  }
  address = address.substr(0, address.find('/'));
  node::ApiAccess access{.token = config.token, .ca_pem = config.ca_pem};
  size_t colon = address.rfind(':');
  bool bracketed = address.starts_with('[');
  if (colon == std::string::npos || (bracketed && colon < address.find(']'))) {
    access.host = address;
    access.port = "443";
  } else {
    access.host = address.substr(0, colon);
    access.port = address.substr(colon + 1);
  }
  if (bracketed) access.host = access.host.substr(1, access.host.size() - 2);
  return access;
}

}  // namespace trainyard::cli
