#include "image/pull_auth.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "common/strings.h"

namespace trainyard::image {
namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxAuthFile = 1 << 20;

// A Secret's value for `key`: data (base64) or stringData.
std::optional<std::string> SecretValue(const api::Json& secret, const char* key) {
  if (const api::Json* plain = api::FindAt(secret, {"stringData", key});
      plain && plain->is_string()) {
    return plain->get<std::string>();
  }
  const api::Json* encoded = api::FindAt(secret, {"data", key});
  if (encoded == nullptr || !encoded->is_string()) return std::nullopt;
  return Base64Decode(encoded->get<std::string>());
}

}  // namespace

Result<api::Json> AuthsOfSecret(const api::Json& secret) {
  std::string name = api::StringAt(secret, {"metadata", "name"});
  std::string type = api::StringAt(secret, "type");
  bool legacy = type == "kubernetes.io/dockercfg";
  if (type != "kubernetes.io/dockerconfigjson" && !legacy) {
    return InvalidArgumentError(fmt::format(
        "Secret {} is of type \"{}\", not kubernetes.io/dockerconfigjson: an imagePullSecret holds "
        "registry credentials (kubectl create secret docker-registry)",
        name, type));
  }
  std::optional<std::string> text =
      SecretValue(secret, legacy ? ".dockercfg" : ".dockerconfigjson");
  api::Json doc =
      text ? api::Json::parse(*text, nullptr, /*allow_exceptions=*/false) : api::Json(nullptr);
  // The older format is the `auths` object itself.
  const api::Json* auths = legacy ? &doc : api::FindAt(doc, {"auths"});
  if (!text || doc.is_discarded() || auths == nullptr || !auths->is_object()) {
    return InvalidArgumentError(
        fmt::format("Secret {}: {} is not a docker config with registry credentials", name,
                    legacy ? ".dockercfg" : ".dockerconfigjson"));
  }
  return *auths;
}

std::string HostAuthFile() {
  std::vector<std::string> candidates;
  if (const char* file = std::getenv("REGISTRY_AUTH_FILE"); file && *file) {
    candidates.push_back(file);
  }
  if (const char* runtime = std::getenv("XDG_RUNTIME_DIR"); runtime && *runtime) {
    candidates.push_back(std::string(runtime) + "/containers/auth.json");
  }
  if (const char* home = std::getenv("HOME"); home && *home) {
    candidates.push_back(std::string(home) + "/.docker/config.json");
  }
  std::error_code ec;
  for (const std::string& file : candidates) {
    if (fs::is_regular_file(file, ec)) return file;
  }
  return "";
}

Result<api::Json> MergedAuths(const std::vector<api::Json>& secrets, const std::string& host_file) {
  api::Json auths = api::Json::object();
  if (!host_file.empty()) {
    std::ifstream in(host_file, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) return InvalidArgumentError("cannot read " + host_file);
    if (text.size() > kMaxAuthFile)
      return InvalidArgumentError(host_file + " is larger than 1 MiB");
    api::Json doc = api::Json::parse(text, nullptr, /*allow_exceptions=*/false);
    const api::Json* host = api::FindAt(doc, {"auths"});
    if (doc.is_discarded() || !doc.is_object() || (host != nullptr && !host->is_object())) {
      return InvalidArgumentError(
          fmt::format("{} is not an auth file (JSON with \"auths\")", host_file));
    }
    if (host != nullptr) auths = *host;
  }
  for (const api::Json& secret : secrets) {
    for (const auto& [registry, entry] : secret.items()) auths[registry] = entry;
  }
  return api::Json{{"auths", std::move(auths)}};
}

Result<AuthFile> AuthFile::Write(std::string path, const api::Json& auths) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  std::string text = auths.dump();
  bool written = fd >= 0 && write(fd, text.data(), text.size()) == ssize_t(text.size());
  if (fd >= 0) close(fd);
  AuthFile file(std::move(path));  // removed however the write went
  if (!written) return InternalError("cannot write " + file.path());
  return file;
}

AuthFile::~AuthFile() {
  if (!path_.empty()) unlink(path_.c_str());
}

}  // namespace trainyard::image
