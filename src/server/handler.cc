#include "server/handler.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/strings.h"
#include "server/auth.h"
#include "server/handler_internal.h"
#include "server/metrics.h"
#include "server/selectors.h"
#include "server/streams.h"
#include "server/table.h"
#include "server/ui_assets.h"

namespace trainyard::server {

using internal::BadRequest;

std::string internal::ReadVerb(const ApiRequest& request, bool collection) {
  if (request.Flag("watch")) return "watch";
  return collection ? "list" : "get";
}

std::string ApiRequest::Param(const std::string& name) const {
  auto it = query.find(name);
  return it == query.end() ? "" : it->second;
}

std::string ApiRequest::BearerToken() const {
  size_t space = authorization.find(' ');
  if (space == std::string::npos || AsciiLower(authorization.substr(0, space)) != "bearer")
    return "";
  size_t start = authorization.find_first_not_of(' ', space);
  return start == std::string::npos ? "" : authorization.substr(start);
}

bool ApiRequest::Flag(const std::string& name) const {
  std::string v = Param(name);
  return v == "1" || v == "t" || v == "T" || v == "true" || v == "True" || v == "TRUE";
}

ApiResponse ErrorResponse(const ApiError& error) {
  ApiResponse response;
  response.code = error.code;
  response.body = error.body.dump();
  return response;
}

ApiResponse ApiHandler::Object(int code, const api::Json& object) const {
  ApiResponse response;
  response.code = code;
  response.body = object.dump();
  return response;
}

ApiResponse ApiHandler::Handle(const ApiRequest& request) {
  auto start = std::chrono::steady_clock::now();  // a measurement, not a decision
  ApiResponse response = Authorized(request);
  if (metrics_ != nullptr) {
    metrics_->ObserveRequest(
        request, response.code,
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return response;
}

ApiResponse ApiHandler::Authorized(const ApiRequest& request) {
  try {
    if (auth_ != nullptr && !IsTrialsOwnPush(request) && !IsTrainJobsOwnPush(request) &&
        !mlflow_.IsRunsOwnRequest(request)) {
      if (std::optional<ApiError> denied = auth_->Check(request)) {
        // MLflow's client reads MLflow's error documents.
        if (ParseMlflowPath(request.path)) return MlflowApi::Denied(*denied);
        return ErrorResponse(*denied);
      }
    }
    return Dispatch(request);
  } catch (const std::exception& e) {
    // A JSON type surprise in a client's object must not take the server
    // down; it is the client's request that is wrong.
    return ErrorResponse(BadRequest(fmt::format("cannot handle the request: {}", e.what())));
  }
}

std::optional<ApiResponse> ApiHandler::Discovery(const ApiRequest& request) {
  const std::string& p = request.path;
  auto json = [&](const api::Json& doc) -> std::optional<ApiResponse> {
    if (doc.is_null()) return std::nullopt;
    return Object(200, doc);
  };
  if (p == "/" || p.starts_with("/ui/")) return Dashboard(request);
  if (p == "/healthz" || p == "/readyz" || p == "/livez") {
    ApiResponse ok;
    ok.content_type = "text/plain";
    ok.body = "ok";
    return ok;
  }
  if (p == "/metrics" && metrics_ != nullptr) {
    ApiResponse text;
    text.content_type = "text/plain; version=0.0.4";
    text.body = metrics_->Render(backend_.store());
    return text;
  }
  if (p == "/version" || p == "/version/") return json(VersionDocument());
  if (p == "/api" || p == "/api/") return json(CoreVersionsDocument());
  if (p == "/apis" || p == "/apis/") return json(GroupListDocument(api_only_));
  if (p == "/api/v1") return json(ResourceListDocument("", "v1", api_only_));
  if (p == "/openapi/v2") {
    // An empty OpenAPI document (the protobuf encoding of no fields): kubectl
    // validates against the schemas it finds, and finds none, as for a CRD
    // published without one. The server validates every object anyway.
    ApiResponse response;
    response.content_type = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";
    return response;
  }
  if (p == "/openapi/v3") return json(api::Json{{"paths", api::Json::object()}});
  if (p.starts_with("/apis/")) {
    std::string rest = p.substr(6);
    size_t slash = rest.find('/');
    if (slash == std::string::npos) return json(GroupDocument(rest, api_only_));
    std::string group = rest.substr(0, slash);
    std::string version = rest.substr(slash + 1);
    if (version.find('/') == std::string::npos) {
      return json(ResourceListDocument(group, version, api_only_));
    }
  }
  return std::nullopt;
}

std::optional<ApiResponse> ApiHandler::Dashboard(const ApiRequest& request) const {
  // "/" is the dashboard for a browser; for an API client, the paths
  // served, as kube-apiserver answers it.
  if (request.path == "/" && request.accept.find("text/html") == std::string::npos) {
    return Object(200, api::Json{{"paths",
                                  {"/api", "/api/v1", "/apis", "/healthz", "/livez", "/metrics",
                                   "/openapi/v2", "/openapi/v3", "/readyz", "/version"}}});
  }
  std::optional<UiAsset> asset = FindUiAsset(request.path);
  if (!asset) return std::nullopt;
  ApiResponse file;
  file.content_type = std::move(asset->content_type);
  file.body = std::move(asset->body);
  // No other site may frame the dashboard: signed in by the token it keeps,
  // a page under a page could be clicked through for its user.
  file.headers = {{"X-Frame-Options", "DENY"},
                  {"Content-Security-Policy", "frame-ancestors 'none'"},
                  {"X-Content-Type-Options", "nosniff"}};
  return file;
}

bool ApiHandler::Permits(const Resource& r, std::string_view verb) const {
  if (r.Allows(verb)) return true;
  // On an API-only server clients play the kubelets too: they register
  // Nodes, as kubelets do.
  bool written_by_controllers = r.role == api::ResourceRole::kPod ||
                                r.role == api::ResourceRole::kRecord ||
                                r.strategy.kubelet_registered;
  return api_only_ && written_by_controllers &&
         (verb == "create" || verb == "update" || verb == "patch" || verb == "delete");
}

ApiResponse ApiHandler::NotAllowed(const ApiRequest& request, const Resource& r) const {
  return ErrorResponse(MakeApiError(
      405, "MethodNotAllowed",
      fmt::format("the server does not allow this method on the requested resource ({} {})",
                  request.method, r.Qualified())));
}

std::optional<ApiResponse> ApiHandler::Subresource(const ApiTarget& target,
                                                   const ApiRequest& request) {
  const Resource& r = *target.resource;
  const std::string& m = request.method;
  auto not_allowed = [&] { return NotAllowed(request, r); };
  if (target.subresource == "binding") {
    return m == "POST" && api_only_ ? Bind(target, request) : not_allowed();
  }
  if (target.subresource == "log") {
    return m == "GET" ? Logs(target, request) : not_allowed();
  }
  if (target.subresource == "exec") {
    // GET for WebSocket (kubectl 1.30 on), POST for SPDY (before).
    return m == "GET" || m == "POST" ? Exec(target, request) : not_allowed();
  }
  if (target.subresource == "observations") {
    if (m == "GET") return Observations(target, request);
    // Only a trial's code pushes; a job's metrics are read from its output.
    bool pushed = r.strategy.tracking == api::Tracking::kPushed;
    return m == "POST" && pushed ? PushObservations(target, request) : not_allowed();
  }
  if (target.subresource == "artifacts") {
    return m == "GET" ? Artifacts(target, request) : not_allowed();
  }
  if (target.subresource == "token" && r.strategy.token_request) {
    return m == "POST" ? RequestToken(target, request) : not_allowed();
  }
  if (target.subresource == "status" && m == "POST" && r.strategy.trainer_status_push) {
    return PushTrainerStatus(target, request);
  }
  return std::nullopt;
}

ApiResponse ApiHandler::Dispatch(const ApiRequest& request) {
  // The tracking API is trainyard's own: an API-only server, standing in
  // for kube-apiserver, serves what kube-apiserver serves alone.
  std::optional<MlflowPath> tracking = ParseMlflowPath(request.path);
  if (tracking && !api_only_) return mlflow_.Handle(*tracking, request);
  if (request.method == "GET") {
    if (std::optional<ApiResponse> doc = Discovery(request)) return std::move(*doc);
  }
  // Where service accounts are (an API-only server's clients play the
  // kubelets that ask for their tokens).
  if (request.path == kTokenReviewsPath && api_only_) return ReviewToken(request);
  Result<ApiTarget> target = ParseApiPath(request.path);
  if (target.ok() && !Served(*target->resource, api_only_)) {
    target = NotFoundError(fmt::format("the server could not find {}", request.path));
  }
  if (!target.ok()) return ErrorResponse(ApiErrorOf(target.status()));
  const Resource& r = *target->resource;
  const std::string& m = request.method;
  bool collection = target->name.empty();
  auto not_allowed = [&] { return NotAllowed(request, r); };
  if (std::optional<ApiResponse> answered = Subresource(*target, request)) {
    return std::move(*answered);
  }
  bool scale = target->subresource == "scale";
  if (scale && m == "GET") return Permits(r, "get") ? Scale(*target, request) : not_allowed();
  if (m == "GET") return collection ? List(*target, request) : Read(*target, request);
  if (std::string dry = request.Param("dryRun"); !dry.empty() && dry != "All") {
    // Refused rather than applied: a dry run must never write. As
    // kube-apiserver words it.
    std::string options = m == "POST"    ? "CreateOptions"
                          : m == "PUT"   ? "UpdateOptions"
                          : m == "PATCH" ? "PatchOptions"
                                         : "DeleteOptions";
    return ErrorResponse(
        MakeApiError(422, "Invalid",
                     fmt::format("{}.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: "
                                 "[]string{{{:?}}}: supported values: \"All\"",
                                 options, dry)));
  }
  if (scale) {
    bool allowed = m == "PUT" ? Permits(r, "update") : m == "PATCH" && Permits(r, "patch");
    return allowed ? Scale(*target, request) : not_allowed();
  }
  if (m == "POST" && collection && target->subresource.empty() && Permits(r, "create")) {
    return Create(*target, request);
  }
  if (m == "DELETE" && !request.Param("dryRun").empty()) {
    return ErrorResponse(
        BadRequest("dryRun is supported on create, update and patch (POST, PUT, PATCH) only"));
  }
  if (m == "PUT" && !collection && Permits(r, "update")) return Replace(*target, request);
  if (m == "PATCH" && !collection && Permits(r, "patch")) return Patch(*target, request);
  if (m == "DELETE" && !collection && target->subresource.empty() && Permits(r, "delete")) {
    return Delete(*target, request);
  }
  return not_allowed();
}

ApiResponse ApiHandler::Render(const ApiTarget& target, const ApiRequest& request,
                               std::vector<api::Json> objects, int64_t resource_version,
                               bool single, const api::Json& list_metadata) const {
  const Resource& r = *target.resource;
  if (WantsTable(request.accept)) {
    std::vector<const api::Json*> rows;
    for (const api::Json& o : objects) rows.push_back(&o);
    std::string include = request.Param("includeObject");
    api::Json table =
        MakeTable(r, rows, std::to_string(resource_version),
                  {.now = clock_.Now(), .include_object = include.empty() ? "Metadata" : include});
    table["metadata"].update(list_metadata);
    return Object(200, table);
  }
  if (single) return Object(200, objects.front());
  api::Json items = api::Json::array();
  for (api::Json& o : objects) items.push_back(std::move(o));
  api::Json metadata = list_metadata;
  metadata["resourceVersion"] = std::to_string(resource_version);
  return Object(200, api::Json{{"apiVersion", r.GroupVersion()},
                               {"kind", r.kind + "List"},
                               {"metadata", std::move(metadata)},
                               {"items", std::move(items)}});
}

ApiResponse ApiHandler::Read(const ApiTarget& target, const ApiRequest& request) {
  const Resource& r = *target.resource;
  if (request.Flag("watch")) {
    return Watch(target, request);
  }
  Result<api::Json> object = NotFoundError("no such node");
  if (!r.strategy.kubelet_registered || api_only_) {
    object = backend_.store().Get({r.store_kind, target.namespace_, target.name});
  } else {
    for (api::Json& node : backend_.Nodes()) {
      if (api::StringAt(node, {"metadata", "name"}) == target.name) object = std::move(node);
    }
  }
  if (!object.ok()) return ErrorResponse(ApiErrorOf(object.status(), &r, target.name));
  std::string version = api::StringAt(*object, {"metadata", "resourceVersion"});
  int64_t rv = version.empty() ? 0 : std::stoll(version);
  std::vector<api::Json> one;
  one.push_back(std::move(*object));
  return Render(target, request, std::move(one), rv, true);
}

ApiResponse ApiHandler::List(const ApiTarget& target, const ApiRequest& request) {
  const Resource& r = *target.resource;
  if (request.Flag("watch")) {
    return Watch(target, request);
  }
  Result<Selector> labels = Selector::ParseLabels(request.Param("labelSelector"));
  if (!labels.ok()) return ErrorResponse(BadRequest(labels.status().message()));
  Result<Selector> fields = Selector::ParseFields(request.Param("fieldSelector"));
  if (!fields.ok()) return ErrorResponse(BadRequest(fields.status().message()));
  store::ListQuery query{.kind = r.store_kind,
                         .namespace_ = target.namespace_,
                         .labels = labels->Equalities(),
                         .fields = fields->Equalities()};
  // The store reads what the query's equalities select, from its indexes;
  // the selectors' other terms are checked here.
  ListScan scan = [&](const store::ListQuery& q,
                      const std::function<bool(const api::Json&)>& take) {
    return backend_.store().ScanWhere(q, [&](const api::Json& object) {
      return !labels->Matches(object) || !fields->Matches(object) || take(object);
    });
  };
  if (r.strategy.kubelet_registered && !api_only_) {
    scan = [&](const store::ListQuery& q, const std::function<bool(const api::Json&)>& take) {
      // In key order, as pages are cut (the inventory is in its file's).
      std::vector<api::Json> nodes = backend_.Nodes();
      std::ranges::sort(nodes, {}, [](const api::Json& n) {
        return api::StringAt(n, {"metadata", "name"});
      });
      for (const api::Json& node : nodes) {
        if (store::MatchesQuery(q, node) && labels->Matches(node) && fields->Matches(node) &&
            !take(node)) {
          break;
        }
      }
      return Result<int64_t>(backend_.store().CurrentResourceVersion());
    };
  }
  std::variant<ListPage, ApiError> paged =
      Paged(request, std::move(query), !labels->empty() || !fields->empty(), scan);
  if (auto* error = std::get_if<ApiError>(&paged)) return ErrorResponse(*error);
  ListPage& page = std::get<ListPage>(paged);
  api::Json list_metadata = api::Json::object();
  if (!page.continue_token.empty()) {
    // Said in the list's metadata, as kube-apiserver says it, whether the
    // answer is a List or a Table.
    list_metadata["continue"] = page.continue_token;
    if (page.remaining) list_metadata["remainingItemCount"] = *page.remaining;
  }
  return Render(target, request, std::move(page.items), page.resource_version, false,
                list_metadata);
}

}  // namespace trainyard::server
