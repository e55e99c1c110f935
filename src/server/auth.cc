#include "server/auth.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "common/strings.h"
#include "server/api_path.h"
#include "server/handler_internal.h"
#include "server/mlflow_api.h"

namespace trainyard::server {
namespace {

// The dashboard's files hold no data: its pages ask for a token, and every
// request they make carries it.
bool IsPublic(const std::string& path) {
  return path == "/healthz" || path == "/readyz" || path == "/livez" || path == "/version" ||
         path == "/" || path.starts_with("/ui/");
}

bool Reads(const std::string& method) { return method == "GET"; }

// The Kubernetes verb a request is, for messages.
std::string Verb(const ApiRequest& request, const ApiTarget& target) {
  if (request.method == "GET") return internal::ReadVerb(request, target.name.empty());
  if (request.method == "POST") return "create";
  if (request.method == "PUT") return "update";
  return request.method == "PATCH" ? "patch" : "delete";
}

}  // namespace

Result<Authorizer> Authorizer::Load(const std::string& path) {
  std::ifstream in(path);
  if (!in) return InvalidArgumentError(fmt::format("cannot read the token file {}", path));
  std::stringstream text;
  text << in.rdbuf();
  Result<Authorizer> parsed = Parse(text.str());
  if (!parsed.ok()) {
    return InvalidArgumentError(fmt::format("{}: {}", path, parsed.status().message()));
  }
  return parsed;
}

Result<Authorizer> Authorizer::Parse(const std::string& text) {
  Authorizer auth;
  std::istringstream lines(text);
  std::string line;
  int number = 0;
  while (std::getline(lines, line)) {
    ++number;
    std::istringstream fields(line);
    Entry e;
    std::string namespaces, extra;
    if (!(fields >> e.token) || e.token.starts_with('#')) continue;
    if (!(fields >> e.user >> namespaces) || (fields >> extra)) {
      return InvalidArgumentError(
          fmt::format("line {}: want TOKEN USER NAMESPACES (comma-separated, or *)", number));
    }
    std::stringstream list(namespaces);
    for (std::string ns; std::getline(list, ns, ',');) {
      if (!ns.empty()) e.namespaces.push_back(ns);
    }
    if (e.token.size() < 8) {
      return InvalidArgumentError(
          fmt::format("line {}: a token needs 8 characters at least", number));
    }
    auth.entries_.push_back(std::move(e));
  }
  if (auth.entries_.empty()) return InvalidArgumentError("no tokens: nobody could use the server");
  return auth;
}

const Authorizer::Entry* Authorizer::Find(const std::string& token) const {
  const Entry* found = nullptr;
  for (const Entry& e : entries_) {
    if (ConstantTimeEquals(e.token, token)) found = &e;
  }
  return found;
}

std::optional<std::string> Authorizer::AdminToken() const {
  for (const Entry& e : entries_) {
    if (e.namespaces == std::vector<std::string>{"*"}) return e.token;
  }
  return std::nullopt;
}

std::optional<ApiError> Authorizer::Check(const ApiRequest& request) const {
  if (IsPublic(request.path)) return std::nullopt;
  std::string token = request.BearerToken();
  const Entry* who = token.empty() ? nullptr : Find(token);
  if (who == nullptr) return MakeApiError(401, "Unauthorized", "Unauthorized");
  bool all =
      std::find(who->namespaces.begin(), who->namespaces.end(), "*") != who->namespaces.end();
  if (all) return std::nullopt;
  auto mine = [&](const std::string& ns) {
    return std::find(who->namespaces.begin(), who->namespaces.end(), ns) != who->namespaces.end();
  };
  // A namespace's tracking API is its own, as its objects are.
  if (std::optional<MlflowPath> tracking = ParseMlflowPath(request.path)) {
    if (mine(tracking->namespace_)) return std::nullopt;
    return MakeApiError(403, "Forbidden",
                        fmt::format("User \"{}\" cannot use the tracking API in the namespace "
                                    "\"{}\"",
                                    who->user, tracking->namespace_));
  }
  Result<ApiTarget> target = ParseApiPath(request.path);
  if (!target.ok()) {
    // Discovery documents are for every user; /metrics names every
    // namespace's jobs, so it is only for those who may see them all.
    bool discovery = Reads(request.method) && request.path != "/metrics";
    return discovery ? std::nullopt
                     : std::optional(MakeApiError(403, "Forbidden",
                                                  fmt::format("User \"{}\" cannot {} {}", who->user,
                                                              request.method, request.path)));
  }
  const Resource& r = *target->resource;
  // Cluster-wide things (namespaces, nodes) may be read; a namespace's
  // objects only by those given it.
  if (r.namespaced ? mine(target->namespace_) : Reads(request.method)) return std::nullopt;
  std::string where = r.namespaced
                          ? (target->namespace_.empty()
                                 ? " at the cluster scope"
                                 : fmt::format(" in the namespace \"{}\"", target->namespace_))
                          : " at the cluster scope";
  return MakeApiError(
      403, "Forbidden",
      fmt::format("{} is forbidden: User \"{}\" cannot {} resource \"{}\" in API "
                  "group \"{}\"{}",
                  r.Qualified(), who->user, Verb(request, *target), r.plural, r.group, where));
}

}  // namespace trainyard::server
