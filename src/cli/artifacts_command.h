// `trainyard artifacts KIND NAME [PATH] [-o FILE]`: what a job's replicas
// left in its output folder, listed; or one of those files downloaded.
#pragma once

#include <string>

#include "cli/client_commands.h"

namespace trainyard::cli {

struct ArtifactsOptions {
  std::string kind;
  std::string name;
  std::string path;  // empty: list them
  // Where a download goes: "-" stdout; empty: the artifact's own name in
  // the current directory, never over a file already there.
  std::string output;
};

int RunArtifacts(const ClientCommand& command, const ArtifactsOptions& options);

}  // namespace trainyard::cli
