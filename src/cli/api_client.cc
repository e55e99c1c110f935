#include "cli/api_client.h"

#include <fmt/format.h>
#include <httplib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "api/yaml.h"
#include "cli/local_api.h"
#include "cli/run_command.h"

namespace trainyard::cli {
namespace {

struct Kubeconfig {
  std::string server, token, ca_file;
};

// The current context's cluster and user, from a kubeconfig.
Result<Kubeconfig> ReadKubeconfig(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFoundError(fmt::format("no kubeconfig at {}", path));
  std::stringstream text;
  text << in.rdbuf();
  ASSIGN_OR_RETURN(std::vector<api::SourceDocument> docs, api::ParseManifests(text.str(), path));
  if (docs.empty()) return InvalidArgumentError(fmt::format("{} is empty", path));
  const api::Json& config = docs[0].value;
  std::string current = api::StringAt(config, "current-context");
  std::string cluster_name, user_name;
  for (const api::Json& c : api::ArrayAt(config, "contexts")) {
    if (api::StringAt(c, "name") != current || !c.contains("context")) continue;
    cluster_name = api::StringAt(c["context"], "cluster");
    user_name = api::StringAt(c["context"], "user");
  }
  Kubeconfig out;
  for (const api::Json& c : api::ArrayAt(config, "clusters")) {
    if (api::StringAt(c, "name") != cluster_name || !c.contains("cluster")) continue;
    out.server = api::StringAt(c["cluster"], "server");
    out.ca_file = api::StringAt(c["cluster"], "certificate-authority");
  }
  for (const api::Json& u : api::ArrayAt(config, "users")) {
    if (api::StringAt(u, "name") == user_name && u.contains("user")) {
      out.token = api::StringAt(u["user"], "token");
    }
  }
  if (out.server.empty()) return InvalidArgumentError(fmt::format("{} names no server", path));
  return out;
}

std::string KubeconfigPath(const ClientOptions& options) {
  if (!options.kubeconfig.empty()) return options.kubeconfig;
  if (!options.home.empty()) return options.home + "/kubeconfig";
  if (const char* env = std::getenv("KUBECONFIG"); env != nullptr && *env != '\0') {
    std::stringstream list(env);
    std::string first;
    for (std::string path; std::getline(list, path, ':');) {
      if (path.empty()) continue;
      if (first.empty()) first = path;
      std::error_code ec;
      if (std::filesystem::exists(path, ec)) return path;
    }
    if (!first.empty()) return first;  // said as missing, by name
  }
  return DefaultHome() + "/kubeconfig";
}

ApiAnswer Answer(const httplib::Result& result) {
  ApiAnswer answer{.code = result->status};
  answer.body = api::Json::parse(result->body, nullptr, /*allow_exceptions=*/false);
  if (answer.body.is_discarded()) answer.body = result->body;
  return answer;
}

}  // namespace

std::string ApiAnswer::Error() const {
  if (api::StringAt(body, "kind") == "Status") {
    return fmt::format("{}: {}", api::StringAt(body, "reason"), api::StringAt(body, "message"));
  }
  return fmt::format("HTTP {}", code);
}

ApiClient::~ApiClient() = default;

Result<std::unique_ptr<ApiClient>> ApiClient::Connect(const ClientOptions& options) {
  Kubeconfig config;
  std::string where;
  std::unique_ptr<RunReader> run;
  if (!options.run.empty()) {
    ASSIGN_OR_RETURN(run, RunReader::Open(options.run));
    config.server = run->url();
    config.token = run->token();
    where = "--run";
  } else if (!options.server.empty()) {
    config.server = options.server;
    where = "--server";
  } else if (const char* env = std::getenv("TRAINYARD_SERVER"); env != nullptr && *env != '\0') {
    config.server = env;
    where = "$TRAINYARD_SERVER";
  } else {
    where = KubeconfigPath(options);
    Result<Kubeconfig> read = ReadKubeconfig(where);
    if (!read.ok()) {
      return UnavailableError(fmt::format(
          "{}: start `trainyard server`, or say where one is with --kubeconfig, $KUBECONFIG, "
          "--home, --server or $TRAINYARD_SERVER",
          read.status().message()));
    }
    config = *read;
    // As kubectl: a relative path in a kubeconfig is relative to its folder.
    if (!config.ca_file.empty() && config.ca_file[0] != '/') {
      config.ca_file = (std::filesystem::path(where).parent_path() / config.ca_file).string();
    }
  }
  if (!options.token.empty()) config.token = options.token;
  std::unique_ptr<ApiClient> client(new ApiClient());
  client->run_ = std::move(run);
  client->url_ = config.server;
  client->http_ = std::make_unique<httplib::Client>(config.server);
  if (!client->http_->is_valid()) {
    return InvalidArgumentError(
        fmt::format("{} (from {}) is not a server URL", config.server, where));
  }
  if (!config.ca_file.empty()) client->http_->set_ca_cert_path(config.ca_file.c_str());
  if (!config.token.empty()) client->http_->set_bearer_token_auth(config.token.c_str());
  client->http_->set_tcp_nodelay(true);
  client->http_->set_read_timeout(std::chrono::seconds(60));
  return client;
}

Result<ApiAnswer> ApiClient::Get(const std::string& path, bool table) {
  httplib::Headers headers;
  if (table) headers.emplace("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io");
  httplib::Result result = http_->Get(path, headers);
  if (!result) {
    return UnavailableError(
        fmt::format("cannot reach the server at {}: {}", url_, httplib::to_string(result.error())));
  }
  return Answer(result);
}

Result<ApiAnswer> ApiClient::Send(const std::string& method, const std::string& path,
                                  const api::Json& body, const std::string& content_type) {
  std::string text = body.is_null() ? "" : body.dump();
  httplib::Result result = method == "POST"    ? http_->Post(path, text, content_type)
                           : method == "PUT"   ? http_->Put(path, text, content_type)
                           : method == "PATCH" ? http_->Patch(path, text, content_type)
                                               : http_->Delete(path);
  if (!result) {
    return UnavailableError(
        fmt::format("cannot reach the server at {}: {}", url_, httplib::to_string(result.error())));
  }
  return Answer(result);
}

Status ApiClient::Stream(const std::string& path,
                         const std::function<bool(std::string_view)>& sink) {
  int code = 0;
  std::string error;
  httplib::Result result = http_->Get(
      path, httplib::Headers{},
      [&](const httplib::Response& response) {
        code = response.status;
        return true;
      },
      [&](const char* data, size_t n) {
        if (code >= 300) {
          error.append(data, n);
          return true;
        }
        return sink(std::string_view(data, n));
      });
  if (!result && result.error() != httplib::Error::Canceled) {
    return UnavailableError(
        fmt::format("cannot reach the server at {}: {}", url_, httplib::to_string(result.error())));
  }
  if (code >= 300) {
    ApiAnswer answer{.code = code, .body = api::Json::parse(error, nullptr, false)};
    return FailedPreconditionError(answer.Error());
  }
  return OkStatus();
}

}  // namespace trainyard::cli
