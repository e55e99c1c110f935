// `trainyard server`: the control plane kept up behind a Kubernetes-style
// HTTP API. State (the store, every replica's log) lives in
// <home>/server/; a kubeconfig for kubectl and client libraries is written
// to <home>/kubeconfig once the API listens. On start it reconciles every
// job it finds from where the store says it stands. SIGINT or SIGTERM stops
// every replica gracefully and exits 0.
#pragma once

#include <string>
#include <vector>

#include "cli/image_flags.h"

namespace trainyard::cli {

struct ServerOptions {
  std::string home;  // default: DefaultHome()
  std::string address = "127.0.0.1";
  int port = 7443;  // 0: any free port (the kubeconfig says which)
  std::string tls_cert;
  std::string tls_key;
  std::string token_file;  // set: bearer tokens, per namespace (server/auth.h)
  std::string nodes_file;  // set: a simulated inventory of Node objects
  // Listen on an address other hosts can reach with no --token-file: anyone
  // who reaches the port may then run anything as the replicas' user.
  bool allow_unauthenticated = false;
  // Who replicas run as: a user (empty: nobody when the server is root,
  // else the server's own user), and NAMESPACE=USER exceptions.
  std::string run_as;
  std::vector<std::string> run_as_namespace;
  // The store and the API only (engine::EngineOptions::api_only).
  bool api_only = false;
  // Replicas run without sandboxes (cli::RunOptions::no_sandbox).
  bool no_sandbox = false;
  std::string root = "image";  // cli::RunOptions::root
  ImageFlags images;           // cli::RunOptions::images
  // How long a deleted job's artifacts are kept, as a Go duration ("0s":
  // they go with it).
  std::string keep_artifacts = "168h";
  // The tasks a pod may have at once (node/cgroups.h); 0: the machine's
  // default (DefaultPodMaxPids), -1: no bound.
  int64_t pod_max_pids = 0;
};

int RunServer(const ServerOptions& options);

}  // namespace trainyard::cli
