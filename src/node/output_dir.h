// A job's output folder, as each of its replicas is given it
// (api::kOutputDirEnv): made before the replica starts, mounted at its
// own path in the replica's sandbox, and handed to the replica's user.
#pragma once

#include <optional>
#include <string>

#include "api/pod_object.h"
#include "common/status.h"
#include "node/container_env.h"
#include "node/volumes.h"
#include "runtime/local/credentials.h"

namespace trainyard::node {

// Makes the folder of the job or trial whose uid is `owner_uid` under
// `root` (api::ArtifactsDirOf) and returns its mount; with `user`, hands
// it to that user.
Result<Mount> PrepareOutputDir(const std::string& root, const std::string& namespace_,
                               const std::string& owner_uid,
                               const std::optional<runtime::Credentials>& user);

// TRAINYARD_OUTPUT_DIR, unless the container sets it itself.
void AddOutputDirEnv(const api::Container& container, const std::string& dir, EnvList& env);

}  // namespace trainyard::node
