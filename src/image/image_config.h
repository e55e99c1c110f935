// What an image says about the process it runs (the OCI image config's
// `config`: Entrypoint, Cmd, Env, WorkingDir, User), and how a container
// of a pod combines it with its own fields, as the kubelet does.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "api/json.h"
#include "common/status.h"

namespace trainyard::image {

struct ImageConfig {
  std::vector<std::string> entrypoint;
  std::vector<std::string> cmd;
  std::vector<std::pair<std::string, std::string>> env;  // in the image's order
  std::string working_dir;                               // "" for "/"
  std::string user;                                      // "", "1000", "1000:1000", "app"
  std::string os;                                        // "linux"
  std::string architecture;                              // "amd64"
  bool operator==(const ImageConfig&) const = default;
};

// Reads an OCI (or Docker v2) image config document. INVALID_ARGUMENT when
// a field has the wrong type.
Result<ImageConfig> ParseImageConfig(const api::Json& document);

// The process a container runs, by Kubernetes' rules:
// - neither command nor args: the image's Entrypoint and Cmd;
// - command: it and the container's args, the image's both ignored;
// - args only: the image's Entrypoint and the container's args.
// FAILED_PRECONDITION when that leaves nothing to run.
Result<std::vector<std::string>> ContainerArgv(const ImageConfig& image,
                                               const std::vector<std::string>& command,
                                               const std::vector<std::string>& args);

// The image's environment under the container's: a variable the container
// sets replaces the image's of that name, in the image's place; the
// container's others follow in their order.
std::vector<std::pair<std::string, std::string>> MergedEnv(
    const ImageConfig& image, const std::vector<std::pair<std::string, std::string>>& container);

// The container's workingDir, else the image's WorkingDir, else "/".
std::string WorkingDirOf(const ImageConfig& image, const std::string& container_working_dir);

}  // namespace trainyard::image
