// Registry credentials for a pull, as the kubelet gathers them: the pod's
// imagePullSecrets (kubernetes.io/dockerconfigjson or the older
// kubernetes.io/dockercfg), then the host's own (the auth file skopeo
// would read), merged into one containers-auth.json(5) document: a
// registry a pull secret names is its, the rest the host's.
#pragma once

#include <string>
#include <vector>

#include "api/json.h"
#include "common/status.h"

namespace trainyard::image {

// The `auths` a pull Secret holds; INVALID_ARGUMENT, naming the Secret,
// when it is not a docker config Secret or its data does not decode.
Result<api::Json> AuthsOfSecret(const api::Json& secret);

// The host's auth file: $REGISTRY_AUTH_FILE, else
// $XDG_RUNTIME_DIR/containers/auth.json, else ~/.docker/config.json, the
// first that exists; "" when none does.
std::string HostAuthFile();

// {"auths": ...}: the host file's entries (if any), each of `secrets`'
// over them, in order.
Result<api::Json> MergedAuths(const std::vector<api::Json>& secrets, const std::string& host_file);

// Credentials written for one pull: a file of trainyard's alone (0600),
// removed when this goes.
class AuthFile {
 public:
  static Result<AuthFile> Write(std::string path, const api::Json& auths);
  AuthFile(AuthFile&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }
  AuthFile(const AuthFile&) = delete;
  AuthFile& operator=(const AuthFile&) = delete;
  AuthFile& operator=(AuthFile&&) = delete;
  ~AuthFile();
  const std::string& path() const { return path_; }

 private:
  explicit AuthFile(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

}  // namespace trainyard::image
