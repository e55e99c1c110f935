#include "image/image_config.h"

#include <fmt/format.h>

#include <map>

namespace trainyard::image {
namespace {

Status Strings(const api::Json& config, const char* key, std::vector<std::string>& out) {
  const api::Json* value = api::FindAt(config, {key});
  if (value == nullptr || value->is_null()) return OkStatus();
  if (!value->is_array()) {
    return InvalidArgumentError(fmt::format("image config: {} is not a list of strings", key));
  }
  for (const api::Json& item : *value) {
    if (!item.is_string()) {
      return InvalidArgumentError(fmt::format("image config: {} is not a list of strings", key));
    }
    out.push_back(item.get<std::string>());
  }
  return OkStatus();
}

}  // namespace

Result<ImageConfig> ParseImageConfig(const api::Json& document) {
  if (!document.is_object()) return InvalidArgumentError("image config is not a JSON object");
  ImageConfig out;
  out.os = api::StringAt(document, "os");
  out.architecture = api::StringAt(document, "architecture");
  const api::Json* config = api::FindAt(document, {"config"});
  if (config == nullptr || config->is_null()) return out;  // an image may set nothing
  if (!config->is_object()) return InvalidArgumentError("image config: config is not an object");
  RETURN_IF_ERROR(Strings(*config, "Entrypoint", out.entrypoint));
  RETURN_IF_ERROR(Strings(*config, "Cmd", out.cmd));
  std::vector<std::string> env;
  RETURN_IF_ERROR(Strings(*config, "Env", env));
  for (const std::string& entry : env) {
    size_t eq = entry.find('=');
    // Docker keeps a bare NAME as NAME with no value; so does the kubelet.
    if (eq == std::string::npos) {
      out.env.emplace_back(entry, "");
    } else {
      out.env.emplace_back(entry.substr(0, eq), entry.substr(eq + 1));
    }
  }
  out.working_dir = api::StringAt(*config, "WorkingDir");
  out.user = api::StringAt(*config, "User");
  return out;
}

Result<std::vector<std::string>> ContainerArgv(const ImageConfig& image,
                                               const std::vector<std::string>& command,
                                               const std::vector<std::string>& args) {
  std::vector<std::string> argv;
  if (!command.empty()) {
    argv = command;
    argv.insert(argv.end(), args.begin(), args.end());
  } else {
    argv = image.entrypoint;
    const std::vector<std::string>& tail = args.empty() ? image.cmd : args;
    argv.insert(argv.end(), tail.begin(), tail.end());
  }
  if (argv.empty()) {
    return FailedPreconditionError(
        "the container sets no command and its image no Entrypoint or Cmd: set command");
  }
  return argv;
}

std::vector<std::pair<std::string, std::string>> MergedEnv(
    const ImageConfig& image, const std::vector<std::pair<std::string, std::string>>& container) {
  std::map<std::string, std::string, std::less<>> overrides;
  for (const auto& [name, value] : container) overrides[name] = value;  // the last one wins
  std::vector<std::pair<std::string, std::string>> out;
  std::map<std::string, bool, std::less<>> placed;
  for (const auto& [name, value] : image.env) {
    auto it = overrides.find(name);
    out.emplace_back(name, it == overrides.end() ? value : it->second);
    placed[name] = true;
  }
  for (const auto& [name, value] : container) {
    if (placed.emplace(name, true).second) out.emplace_back(name, overrides[name]);
  }
  return out;
}

std::string WorkingDirOf(const ImageConfig& image, const std::string& container_working_dir) {
  if (!container_working_dir.empty()) return container_working_dir;
  return image.working_dir.empty() ? "/" : image.working_dir;
}

}  // namespace trainyard::image
