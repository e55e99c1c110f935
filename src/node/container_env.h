// A container's environment as the kubelet builds it: what the image gives
// (here: `base`), HOSTNAME, every key of the ConfigMaps and Secrets its
// envFrom names (prefixed, never expanded), then the container's env in
// order, each value expanded against the variables before it ($(VAR)),
// with valueFrom resolved from the pod (fieldRef), its resources
// (resourceFieldRef) and ConfigMaps and Secrets in the store.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "api/pod_object.h"
#include "common/status.h"
#include "store/object_store.h"

namespace trainyard::node {

using EnvList = std::vector<std::pair<std::string, std::string>>;

struct NodeFacts {
  int64_t cpus = 1;          // what limits.cpu means when no limit is set
  int64_t memory_bytes = 0;  // likewise for limits.memory
};

// The most a host name may hold (a DNS label).
inline constexpr size_t kMaxHostnameLength = 63;

// HOSTNAME, as the kubelet gives it: spec.hostname, else the pod's name cut
// to 63 characters with any '-' or '.' it then ends in trimmed.
std::string PodHostname(const api::Pod& pod);

// Fails, naming the variable or argument, when $(VAR) expansion would pass
// runtime::kMaxExpandedBytes for one value or kMaxEnvAndArgvBytes for all;
// fails naming the object when a ConfigMap or Secret it needs is missing.
// An envFrom key that is no variable name is skipped, as the kubelet skips
// it, and said in `skipped` (the kubelet's InvalidEnvironmentVariableNames
// event): "keys [a b] of Secret s".
Result<EnvList> ContainerEnv(const api::Pod& pod, const api::Container& container,
                             const EnvList& base, const NodeFacts& node,
                             const store::ObjectStore& store,
                             std::vector<std::string>* skipped = nullptr);

// command and args, each expanded against `env`, within the same bounds.
struct ExpandedCommand {
  std::vector<std::string> command;
  std::vector<std::string> args;
};
Result<ExpandedCommand> ExpandCommand(const api::Container& container, const EnvList& env);

// command + args, expanded, for a container on the machine's files: one
// without a command cannot run there, with no image entrypoint to fall
// back on.
Result<std::vector<std::string>> ContainerArgv(const api::Container& container, const EnvList& env);

}  // namespace trainyard::node
