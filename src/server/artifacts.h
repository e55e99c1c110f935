// A job's artifact as an answer to a download (the artifacts subresource,
// MLflow's artifacts service): the files themselves are read by
// common/artifact_files.h.
#pragma once

#include <string_view>

#include "common/artifact_files.h"
#include "server/handler.h"

namespace trainyard::server {

// The answer that downloads an opened file (whose descriptor it takes):
// whole when small, else streamed a chunk at a time.
ApiResponse ArtifactDownload(OpenedArtifact file, std::string_view path);

}  // namespace trainyard::server
