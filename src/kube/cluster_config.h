// Where a Kubernetes API server is and how to talk to it, as kubectl and
// client-go find it: a kubeconfig (--kubeconfig, else the first file of
// $KUBECONFIG, else ~/.kube/config) or, inside a pod, the service
// account's token and CA with KUBERNETES_SERVICE_HOST/PORT.
//
// Credentials are held as data, never as paths to re-read: a file named
// by a kubeconfig is read once, relative to the kubeconfig's folder.
// Exec and auth-provider plugins are refused with that reason rather than
// tried without credentials.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "common/status.h"

namespace trainyard::kube {

struct ClusterConfig {
  std::string server;  // "https://10.0.0.1:6443"
  std::string ca_pem;  // empty: the system's trust store
  std::string client_cert_pem;
  std::string client_key_pem;
  std::string token;               // a bearer token
  std::string username, password;  // basic auth (old clusters)
  bool insecure_skip_tls_verify = false;
  std::string namespace_ = "default";  // the context's, or the pod's own
  std::string source;                  // where this came from, for messages
};

// The kubeconfig at `path`, its `context` (empty: current-context).
Result<ClusterConfig> LoadKubeconfig(const std::string& path, const std::string& context = "");

// Parses kubeconfig text; `dir` resolves relative file names.
Result<ClusterConfig> ParseKubeconfig(const std::string& text, const std::string& dir,
                                      const std::string& source, const std::string& context = "");

// What a pod's service account gives it; `root` holds token, ca.crt and
// namespace. NOT_FOUND when not in a pod.
using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;
Result<ClusterConfig> LoadInCluster(
    const EnvLookup& env,
    const std::string& root = "/var/run/secrets/kubernetes.io/serviceaccount");

// As client-go decides: `explicit_path` if given, else $KUBECONFIG's
// first file, else in-cluster, else ~/.kube/config.
Result<ClusterConfig> LoadClusterConfig(const std::string& explicit_path,
                                        const std::string& context, const EnvLookup& env);

// The process's environment.
std::optional<std::string> ProcessEnv(const std::string& name);

}  // namespace trainyard::kube
