// A Pod's state as the success and failure rules read it.
#pragma once

#include <string>
#include <vector>

#include "api/pod_object.h"
#include "api/well_known.h"
#include "frameworks/framework.h"

namespace trainyard::controller {

// Kubernetes' rule, kept by upstream: exit codes 128-255 (killed by a
// signal) are worth retrying; 1-127 are the program's own verdict.
inline bool IsRetryableExitCode(int code) { return code >= 128; }

// The exit code of the pod's first container that ended, else 0.
int ExitCodeOf(const api::Pod& pod);

// Restarts a replica has had: the node agent's in-place restarts plus the
// controller's re-creations, carried on the pod.
int32_t RestartsOf(const api::Pod& pod);

// Pending, Running, Restarting (a container waits to restart, or an
// ExitCode replica failed with a retryable code), Succeeded, or Failed for
// good.
// Whether a replica whose pod ended Failed is made again: a retryable exit
// code under ExitCode, or any failure of the whole pod under OnFailure or
// Always (eviction, a lost node).
bool RestartsWhenFailed(const api::Pod& pod, const std::string& replica_restart_policy);

// The latest failure among `pods`' containers, said for a condition:
// "pod p, container c, exit code 2, Error: <the last lines of its
// termination message>"; empty when none failed.
std::string LatestContainerFailure(const std::vector<const api::Pod*>& pods);

frameworks::ReplicaState StateOf(const api::Pod& pod, const std::string& replica_restart_policy);

}  // namespace trainyard::controller
