// `trainyard run --kubeconfig FILE`: the API server that FILE names, given
// to the run's pods as a service account's (node/service_account.h), so
// that what runs in them (an operator, a launcher with kubectl, a client
// library's in-cluster configuration) talks to it as on Kubernetes.
#pragma once

#include <string>

#include "common/status.h"
#include "node/service_account.h"

namespace trainyard::cli {

// The server, its CA and its user's bearer token from the kubeconfig's
// current context. An error says why pods could not use it: in-cluster
// clients speak HTTPS and send a bearer token, nothing else.
Result<node::ApiAccess> LoadApiAccess(const std::string& kubeconfig);

}  // namespace trainyard::cli
