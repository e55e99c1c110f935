// A job's output folder, as each of its replicas is given it
// (api::kOutputDirEnv): made before the replica starts, mounted at its
// own path in the replica's sandbox, and handed to the replica's user.
#pragma once

#include <optional>
#include <string>

#include "api/pod_object.h"
#include "api/tracking.h"
#include "common/status.h"
#include "node/container_env.h"
#include "node/volumes.h"
#include "runtime/local/credentials.h"

namespace trainyard::node {

// Makes the folder of `owner` (the job or trial whose replicas write it)
// under `root` (api::ArtifactsDirOf), with the record of whose it is
// (ArtifactOwner), and returns its mount; with `user`, hands it to that
// user.
Result<Mount> PrepareOutputDir(const std::string& root, const std::string& namespace_,
                               const api::TrackedOwner& owner,
                               const std::optional<runtime::Credentials>& user);

// TRAINYARD_OUTPUT_DIR, unless the container sets it itself.
void AddOutputDirEnv(const api::Container& container, const std::string& dir, EnvList& env);

}  // namespace trainyard::node
