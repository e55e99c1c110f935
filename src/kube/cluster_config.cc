#include "kube/cluster_config.h"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "api/json.h"
#include "api/yaml.h"
#include "common/strings.h"

namespace trainyard::kube {
namespace {

namespace fs = std::filesystem;

Result<std::string> ReadWhole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFoundError(fmt::format("cannot read {}", path));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The entry of `list` (clusters, users, contexts) called `name`, with its
// body under `field`; nullptr when there is none.
const api::Json* Named(const api::Json& config, const char* list, const std::string& name,
                       const char* field) {
  for (const api::Json& entry : api::ArrayRefAt(config, {list})) {
    if (api::StringAt(entry, "name") != name) continue;
    const api::Json* body = api::FindAt(entry, {field});
    if (body != nullptr && body->is_object()) return body;
  }
  return nullptr;
}

// A credential given inline (`<key>-data`, base64) or as a file (`<key>`,
// relative to the kubeconfig's folder).
Result<std::string> DataOrFile(const api::Json& body, const std::string& key,
                               const std::string& dir, const std::string& where) {
  std::string data = api::StringAt(body, (key + "-data").c_str());
  if (!data.empty()) {
    std::optional<std::string> decoded = Base64Decode(data);
    if (!decoded) {
      return InvalidArgumentError(fmt::format("{}: {}-data is not base64", where, key));
    }
    return *decoded;
  }
  std::string path = api::StringAt(body, key.c_str());
  if (path.empty()) return std::string();
  if (fs::path(path).is_relative() && !dir.empty()) path = (fs::path(dir) / path).string();
  Result<std::string> read = ReadWhole(path);
  if (!read.ok())
    return InvalidArgumentError(fmt::format("{}: {}: {}", where, key, read.status().message()));
  return read;
}

Status ReadCluster(const api::Json& cluster, const std::string& dir, const std::string& where,
                   ClusterConfig& out) {
  out.server = api::StringAt(cluster, "server");
  if (out.server.empty())
    return InvalidArgumentError(fmt::format("{}: the cluster has no server", where));
  if (const api::Json* skip = api::FindAt(cluster, {"insecure-skip-tls-verify"});
      skip != nullptr && skip->is_boolean()) {
    out.insecure_skip_tls_verify = skip->get<bool>();
  }
  ASSIGN_OR_RETURN(out.ca_pem, DataOrFile(cluster, "certificate-authority", dir, where));
  return OkStatus();
}

Status ReadUser(const api::Json& user, const std::string& dir, const std::string& where,
                ClusterConfig& out) {
  for (const char* plugin : {"exec", "auth-provider"}) {
    if (user.contains(plugin)) {
      return UnimplementedError(fmt::format(
          "{}: the user authenticates through an {} plugin, which trainyard does not run; give "
          "it a token, a client certificate, or a service account's kubeconfig",
          where, plugin));
    }
  }
  ASSIGN_OR_RETURN(out.client_cert_pem, DataOrFile(user, "client-certificate", dir, where));
  ASSIGN_OR_RETURN(out.client_key_pem, DataOrFile(user, "client-key", dir, where));
  if (out.client_cert_pem.empty() != out.client_key_pem.empty()) {
    return InvalidArgumentError(
        fmt::format("{}: a client certificate needs its key and a key its certificate", where));
  }
  out.token = api::StringAt(user, "token");
  if (std::string file = api::StringAt(user, "tokenFile"); out.token.empty() && !file.empty()) {
    if (fs::path(file).is_relative() && !dir.empty()) file = (fs::path(dir) / file).string();
    ASSIGN_OR_RETURN(std::string token, ReadWhole(file));
    out.token = std::string(Trim(token));
  }
  out.username = api::StringAt(user, "username");
  out.password = api::StringAt(user, "password");
  return OkStatus();
}

}  // namespace

std::optional<std::string> ProcessEnv(const std::string& name) {
  const char* value = std::getenv(name.c_str());
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

Result<ClusterConfig> ParseKubeconfig(const std::string& text, const std::string& dir,
                                      const std::string& source, const std::string& context) {
  ASSIGN_OR_RETURN(std::vector<api::SourceDocument> docs, api::ParseManifests(text, source));
  if (docs.empty() || !docs[0].value.is_object()) {
    return InvalidArgumentError(fmt::format("{} holds no kubeconfig", source));
  }
  const api::Json& config = docs[0].value;
  std::string name = context.empty() ? api::StringAt(config, "current-context") : context;
  if (name.empty()) {
    return InvalidArgumentError(
        fmt::format("{} has no current-context: name one with --context", source));
  }
  const api::Json* ctx = Named(config, "contexts", name, "context");
  if (ctx == nullptr) return NotFoundError(fmt::format("{} has no context {:?}", source, name));
  ClusterConfig out;
  out.source = fmt::format("{} (context {})", source, name);
  std::string cluster_name = api::StringAt(*ctx, "cluster");
  const api::Json* cluster = Named(config, "clusters", cluster_name, "cluster");
  if (cluster == nullptr) {
    return NotFoundError(
        fmt::format("{}: context {:?} names cluster {:?}, which it does not define", source, name,
                    cluster_name));
  }
  RETURN_IF_ERROR(ReadCluster(*cluster, dir, out.source, out));
  // A context without a user is anonymous, as in kubectl.
  if (std::string user_name = api::StringAt(*ctx, "user"); !user_name.empty()) {
    const api::Json* user = Named(config, "users", user_name, "user");
    if (user == nullptr) {
      return NotFoundError(fmt::format("{}: context {:?} names user {:?}, which it does not define",
                                       source, name, user_name));
    }
    RETURN_IF_ERROR(ReadUser(*user, dir, out.source, out));
  }
  if (std::string ns = api::StringAt(*ctx, "namespace"); !ns.empty()) out.namespace_ = ns;
  return out;
}

Result<ClusterConfig> LoadKubeconfig(const std::string& path, const std::string& context) {
  ASSIGN_OR_RETURN(std::string text, ReadWhole(path));
  return ParseKubeconfig(text, fs::path(path).parent_path().string(), path, context);
}

Result<ClusterConfig> LoadInCluster(const EnvLookup& env, const std::string& root) {
  std::optional<std::string> host = env("KUBERNETES_SERVICE_HOST");
  std::optional<std::string> port = env("KUBERNETES_SERVICE_PORT");
  if (!host || !port || host->empty() || port->empty()) {
    return NotFoundError("not in a pod: KUBERNETES_SERVICE_HOST and _PORT are not set");
  }
  ClusterConfig out;
  out.source = "the pod's service account (" + root + ")";
  // An IPv6 address is bracketed in a URL.
  std::string h = host->find(':') != std::string::npos ? "[" + *host + "]" : *host;
  out.server = fmt::format("https://{}:{}", h, *port);
  Result<std::string> token = ReadWhole(root + "/token");
  if (!token.ok())
    return UnavailableError(fmt::format("in a pod, but {}", token.status().message()));
  out.token = std::string(Trim(*token));
  ASSIGN_OR_RETURN(out.ca_pem, ReadWhole(root + "/ca.crt"));
  if (Result<std::string> ns = ReadWhole(root + "/namespace"); ns.ok() && !Trim(*ns).empty()) {
    out.namespace_ = std::string(Trim(*ns));
  }
  return out;
}

Result<ClusterConfig> LoadClusterConfig(const std::string& explicit_path,
                                        const std::string& context, const EnvLookup& env) {
  if (!explicit_path.empty()) return LoadKubeconfig(explicit_path, context);
  if (std::optional<std::string> list = env("KUBECONFIG"); list && !list->empty()) {
    // client-go merges the list; the first file that exists is what it
    // takes its current context and credentials from in practice.
    for (const std::string& path : SplitNonEmpty(*list, ':')) {
      if (!path.empty() && fs::exists(path)) return LoadKubeconfig(path, context);
    }
  }
  Result<ClusterConfig> in_cluster = LoadInCluster(env);
  if (in_cluster.status().code() != StatusCode::kNotFound) return in_cluster;
  std::optional<std::string> home = env("HOME");
  std::string path = (home ? *home : std::string()) + "/.kube/config";
  if (!fs::exists(path)) {
    return NotFoundError(
        "no cluster to talk to: give --kubeconfig, set $KUBECONFIG, write ~/.kube/config, or run "
        "in a pod");
  }
  return LoadKubeconfig(path, context);
}

}  // namespace trainyard::kube
