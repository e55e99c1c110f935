#include "server/handler.h"

#include <fmt/format.h>

#include <random>

#include "api/names.h"
#include "api/object.h"
#include "api/validation.h"
#include "api/yaml.h"
#include "server/auth.h"
#include "server/metrics.h"
#include "server/selectors.h"
#include "server/streams.h"
#include "server/table.h"

namespace trainyard::server {
namespace {

ApiError BadRequest(const std::string& message) { return MakeApiError(400, "BadRequest", message); }

// A request body: one JSON (or YAML) object.
Result<api::Json> ParseBody(const ApiRequest& request) {
  if (request.body.empty()) return InvalidArgumentError("the request has no body");
  ASSIGN_OR_RETURN(std::vector<api::SourceDocument> docs,
                   api::ParseManifests(request.body, "request body"));
  if (docs.size() != 1 || !docs[0].value.is_object()) {
    return InvalidArgumentError("the request body must be one object");
  }
  return std::move(docs[0].value);
}

std::string Meta(const api::Json& object, const char* field) {
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return "";
  auto it = meta->find(field);
  return it != meta->end() && it->is_string() ? it->get<std::string>() : "";
}

// Kubernetes' generateName suffix: five characters no word can be made of.
std::string RandomSuffix() {
  static constexpr std::string_view kAlphabet = "bcdfghjklmnpqrstvwxz2456789";
  static thread_local std::mt19937 gen{std::random_device{}()};
  std::string out;
  for (int i = 0; i < 5; ++i) out += kAlphabet[gen() % kAlphabet.size()];
  return out;
}

bool Creatable(const Resource& r) {
  return std::find(r.verbs.begin(), r.verbs.end(), "create") != r.verbs.end();
}

// The identity fields a body must agree with the URL on, filled in where
// the body leaves them out.
std::optional<ApiError> Reconcile(const ApiTarget& target, api::Json& body) {
  const Resource& r = *target.resource;
  std::string api_version = body.value("apiVersion", "");
  std::string kind = body.value("kind", "");
  if (api_version.empty()) body["apiVersion"] = api_version = r.GroupVersion();
  if (kind.empty()) body["kind"] = kind = r.kind;
  if (api_version != r.GroupVersion() || kind != r.kind) {
    return BadRequest(fmt::format("the object is a {} {} but the request is for {} {}", api_version,
                                  kind, r.GroupVersion(), r.kind));
  }
  if (!body["metadata"].is_object()) body["metadata"] = api::Json::object();
  api::Json& meta = body["metadata"];
  if (r.namespaced) {
    std::string ns = Meta(body, "namespace");
    if (ns.empty()) meta["namespace"] = target.namespace_;
    if (!ns.empty() && ns != target.namespace_) {
      return BadRequest(
          "the namespace of the provided object does not match the namespace sent on the request");
    }
  }
  if (!target.name.empty()) {
    std::string name = Meta(body, "name");
    if (name.empty()) meta["name"] = target.name;
    if (!name.empty() && name != target.name) {
      return BadRequest(
          fmt::format("the name of the object ({}) does not match the name on the URL ({})", name,
                      target.name));
    }
  }
  return std::nullopt;
}

bool IsDryRun(const ApiRequest& request) { return request.Param("dryRun") == "All"; }

}  // namespace

std::string ApiRequest::Param(const std::string& name) const {
  auto it = query.find(name);
  return it == query.end() ? "" : it->second;
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
  if (auth_ != nullptr) {
    if (std::optional<ApiError> denied = auth_->Check(request)) return ErrorResponse(*denied);
  }
  try {
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
  if (p == "/apis" || p == "/apis/") return json(GroupListDocument());
  if (p == "/api/v1") return json(ResourceListDocument("", "v1"));
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
    if (slash == std::string::npos) return json(GroupDocument(rest));
    std::string group = rest.substr(0, slash);
    std::string version = rest.substr(slash + 1);
    if (version.find('/') == std::string::npos) return json(ResourceListDocument(group, version));
  }
  return std::nullopt;
}

ApiResponse ApiHandler::Dispatch(const ApiRequest& request) {
  if (request.method == "GET") {
    if (std::optional<ApiResponse> doc = Discovery(request)) return std::move(*doc);
  }
  Result<ApiTarget> target = ParseApiPath(request.path);
  if (!target.ok()) return ErrorResponse(ApiErrorOf(target.status()));
  const Resource& r = *target->resource;
  const std::string& m = request.method;
  bool collection = target->name.empty();
  auto not_allowed = [&] {
    return ErrorResponse(MakeApiError(
        405, "MethodNotAllowed",
        fmt::format("the server does not allow this method on the requested resource ({} {})", m,
                    r.Qualified())));
  };
  if (target->subresource == "log") {
    return m == "GET" ? Logs(*target, request) : not_allowed();
  }
  if (m == "GET") return collection ? List(*target, request) : Read(*target, request);
  if (m == "POST" && collection && target->subresource.empty() && Creatable(r)) {
    return Create(*target, request);
  }
  if (m == "PUT" && !collection && Creatable(r)) return Replace(*target, request);
  if (m == "PATCH" && !collection && Creatable(r)) return Patch(*target, request);
  if (m == "DELETE" && !collection && target->subresource.empty() && r.kind != "Node" &&
      r.kind != "Event") {
    return Delete(*target, request);
  }
  return not_allowed();
}

ApiResponse ApiHandler::Render(const ApiTarget& target, const ApiRequest& request,
                               const std::vector<const api::Json*>& objects,
                               int64_t resource_version, bool single) const {
  const Resource& r = *target.resource;
  if (WantsTable(request.accept)) {
    std::string include = request.Param("includeObject");
    return Object(200, MakeTable(r, objects, std::to_string(resource_version),
                                 {.now = clock_.Now(),
                                  .include_object = include.empty() ? "Metadata" : include}));
  }
  if (single) return Object(200, *objects.front());
  api::Json items = api::Json::array();
  for (const api::Json* o : objects) items.push_back(*o);
  return Object(200,
                api::Json{{"apiVersion", r.GroupVersion()},
                          {"kind", r.kind + "List"},
                          {"metadata", {{"resourceVersion", std::to_string(resource_version)}}},
                          {"items", std::move(items)}});
}

ApiResponse ApiHandler::Read(const ApiTarget& target, const ApiRequest& request) {
  const Resource& r = *target.resource;
  if (request.Flag("watch")) {
    return Watch(target, request);
  }
  Result<api::Json> object =
      r.kind == "Node"
          ? (Meta(backend_.Node(), "name") == target.name ? Result<api::Json>(backend_.Node())
                                                          : NotFoundError("no such node"))
          : backend_.store().Get({r.kind, target.namespace_, target.name});
  if (!object.ok()) return ErrorResponse(ApiErrorOf(object.status(), &r, target.name));
  int64_t rv =
      std::stoll(Meta(*object, "resourceVersion").empty() ? "0" : Meta(*object, "resourceVersion"));
  return Render(target, request, {&*object}, rv, true);
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
  std::vector<api::Json> items;
  int64_t rv = 0;
  if (r.kind == "Node") {
    items.push_back(backend_.Node());
    rv = backend_.store().CurrentResourceVersion();
  } else {
    Result<store::ObjectStore::ListResult> listed =
        backend_.store().List(r.kind, target.namespace_);
    if (!listed.ok()) return ErrorResponse(ApiErrorOf(listed.status()));
    items = std::move(listed->items);
    rv = listed->resource_version;
  }
  std::vector<const api::Json*> matching;
  for (const api::Json& item : items) {
    if (labels->Matches(item) && fields->Matches(item)) matching.push_back(&item);
  }
  return Render(target, request, matching, rv, false);
}

std::variant<ApiHandler::Checked, ApiError> ApiHandler::Check(const ApiTarget& target,
                                                              api::Json body,
                                                              const ApiRequest& request) const {
  const Resource& r = *target.resource;
  if (std::optional<ApiError> e = Reconcile(target, body)) return *e;
  std::string name = Meta(body, "name");
  if (r.kind == "Namespace") {
    api::NameProblems problems = api::Dns1123LabelProblems(name);
    if (!problems.empty()) {
      return InvalidError(
          r, name,
          {FieldError::Invalid(FieldPath("metadata").Child("name"), name, problems.front())});
    }
    body["spec"] = {{"finalizers", {"kubernetes"}}};
    body["status"] = {{"phase", "Active"}};
    return Checked{std::move(body), {}};
  }
  api::CheckedObject checked = api::DecodeAndValidate(body);
  // fieldValidation: Strict refuses unknown fields; Warn (the default, as
  // on Kubernetes) and Ignore drop them, Warn saying so.
  std::string mode = request.Param("fieldValidation");
  std::vector<std::string> warnings = checked.result.warnings;
  FieldErrors errors;
  for (FieldError& e : checked.result.errors) {
    if (e.type == FieldErrorType::kUnknownField && mode != "Strict") {
      if (mode != "Ignore") warnings.push_back(e.ToString());
      continue;
    }
    errors.push_back(std::move(e));
  }
  if (!errors.empty() || !checked.object) {
    if (errors.empty())
      errors.push_back(FieldError::Invalid(FieldPath("kind"), r.kind, "cannot be decoded"));
    return InvalidError(r, name, errors);
  }
  return Checked{api::EncodeObject(*checked.object), std::move(warnings)};
}

ApiResponse ApiHandler::Write(const ApiTarget& target, const std::string& name, int code,
                              const CheckedWrite& write, std::vector<std::string> warnings) {
  std::optional<ApiError> own;
  Result<api::Json> written =
      backend_.Execute([&](store::ObjectStore& store) { return write(store, own); });
  if (own) return ErrorResponse(*own);
  if (!written.ok()) return ErrorResponse(ApiErrorOf(written.status(), target.resource, name));
  ApiResponse response = Object(code, *written);
  response.warnings = std::move(warnings);
  return response;
}

ApiResponse ApiHandler::Create(const ApiTarget& target, const ApiRequest& request) {
  const Resource& r = *target.resource;
  Result<api::Json> body = ParseBody(request);
  if (!body.ok()) return ErrorResponse(BadRequest(body.status().message()));
  if (body->contains("metadata") && (*body)["metadata"].is_object() &&
      Meta(*body, "name").empty() && !Meta(*body, "generateName").empty()) {
    (*body)["metadata"]["name"] = Meta(*body, "generateName") + RandomSuffix();
  }
  std::variant<Checked, ApiError> checked = Check(target, std::move(*body), request);
  if (auto* e = std::get_if<ApiError>(&checked)) return ErrorResponse(*e);
  Checked& ok = std::get<Checked>(checked);
  std::string name = Meta(ok.object, "name");
  if (IsDryRun(request)) return Object(201, ok.object);
  std::string ns = target.namespace_;
  return Write(
      target, name, 201,
      [&](store::ObjectStore& store, std::optional<ApiError>& own) -> Result<api::Json> {
        if (r.namespaced && !store.Get({"Namespace", "", ns}).ok()) {
          own = ApiErrorOf(NotFoundError(""), ResourceOfKind("Namespace"), ns);
          return NotFoundError("namespace");
        }
        return store.Create(ok.object);
      },
      std::move(ok.warnings));
}

ApiResponse ApiHandler::Replace(const ApiTarget& target, const ApiRequest& request) {
  const Resource& r = *target.resource;
  Result<api::Json> body = ParseBody(request);
  if (!body.ok()) return ErrorResponse(BadRequest(body.status().message()));
  if (target.subresource == "status") {
    if (std::optional<ApiError> e = Reconcile(target, *body)) return ErrorResponse(*e);
    return Write(target, target.name, 200,
                 [&](store::ObjectStore& store, std::optional<ApiError>&) {
                   return store.UpdateStatus(*body);
                 });
  }
  std::variant<Checked, ApiError> checked = Check(target, std::move(*body), request);
  if (auto* e = std::get_if<ApiError>(&checked)) return ErrorResponse(*e);
  Checked& ok = std::get<Checked>(checked);
  if (IsDryRun(request)) return Object(200, ok.object);
  return Write(
      target, target.name, 200,
      [&](store::ObjectStore& store, std::optional<ApiError>& own) -> Result<api::Json> {
        ASSIGN_OR_RETURN(api::Json stored, store.Get({r.kind, target.namespace_, target.name}));
        if (r.kind != "Namespace") {
          api::DecodeResult before = api::DecodeObject(stored);
          api::DecodeResult after = api::DecodeObject(ok.object);
          if (before.object && after.object) {
            FieldErrors errors = api::ValidateUpdate(*before.object, *after.object);
            if (!errors.empty()) {
              own = InvalidError(r, target.name, errors);
              return FailedPreconditionError("invalid update");
            }
          }
        }
        return store.Update(ok.object);
      },
      std::move(ok.warnings));
}

ApiResponse ApiHandler::Patch(const ApiTarget& target, const ApiRequest& request) {
  const Resource& r = *target.resource;
  Result<api::Json> patch = ParseBody(request);
  // A JSON patch is an array, which ParseBody refuses: parse it here.
  bool json_patch = request.content_type.starts_with("application/json-patch+json");
  if (json_patch) {
    try {
      patch = api::Json::parse(request.body);
    } catch (const std::exception& e) {
      return ErrorResponse(
          BadRequest(fmt::format("the JSON patch cannot be parsed: {}", e.what())));
    }
  }
  if (!patch.ok()) return ErrorResponse(BadRequest(patch.status().message()));
  bool merge = request.content_type.starts_with("application/merge-patch+json") ||
               // Strategic merge patch is a merge patch that merges some
               // lists by key; trainyard replaces lists, as a merge patch does.
               request.content_type.starts_with("application/strategic-merge-patch+json");
  if (!merge && !json_patch) {
    return ErrorResponse(MakeApiError(
        415, "UnsupportedMediaType",
        fmt::format("the body of the request was in an unknown format - accepted media types "
                    "include: application/json-patch+json, application/merge-patch+json, "
                    "application/strategic-merge-patch+json (not {:?})",
                    request.content_type)));
  }
  ApiTarget t = target;
  return Write(target, target.name, 200,
               [&](store::ObjectStore& store, std::optional<ApiError>& own) -> Result<api::Json> {
                 ASSIGN_OR_RETURN(api::Json stored, store.Get({r.kind, t.namespace_, t.name}));
                 api::Json patched = stored;
                 try {
                   if (json_patch) {
                     patched = stored.patch(*patch);
                   } else {
                     patched.merge_patch(*patch);
                   }
                 } catch (const std::exception& e) {
                   own = MakeApiError(422, "Invalid",
                                      fmt::format("the patch cannot be applied: {}", e.what()));
                   return FailedPreconditionError("patch");
                 }
                 if (!patched.is_object()) {
                   own = MakeApiError(422, "Invalid", "the patch does not leave an object");
                   return FailedPreconditionError("patch");
                 }
                 if (std::optional<ApiError> e = Reconcile(t, patched)) {
                   own = *e;
                   return FailedPreconditionError("patch");
                 }
                 if (t.subresource == "status") return store.UpdateStatus(patched);
                 std::variant<Checked, ApiError> checked = Check(t, std::move(patched), request);
                 if (auto* e = std::get_if<ApiError>(&checked)) {
                   own = *e;
                   return FailedPreconditionError("patch");
                 }
                 api::Json& object = std::get<Checked>(checked).object;
                 if (r.kind != "Namespace") {
                   api::DecodeResult before = api::DecodeObject(stored);
                   api::DecodeResult after = api::DecodeObject(object);
                   if (before.object && after.object) {
                     FieldErrors errors = api::ValidateUpdate(*before.object, *after.object);
                     if (!errors.empty()) {
                       own = InvalidError(r, t.name, errors);
                       return FailedPreconditionError("invalid update");
                     }
                   }
                 }
                 object["metadata"]["resourceVersion"] = Meta(stored, "resourceVersion");
                 return store.Update(object);
               });
}

ApiResponse ApiHandler::Delete(const ApiTarget& target, const ApiRequest&) {
  const Resource& r = *target.resource;
  if (r.kind == "Namespace" && target.name == "default") {
    return ErrorResponse(
        MakeApiError(403, "Forbidden",
                     "namespaces \"default\" is forbidden: this namespace may not be deleted"));
  }
  return Write(
      target, target.name, 200,
      [&](store::ObjectStore& store, std::optional<ApiError>&) -> Result<api::Json> {
        if (r.kind == "Namespace") {
          // Its objects go with it; the controllers take their pods.
          for (const Resource& each : AllResources()) {
            if (!each.namespaced || each.kind == "Pod") continue;
            ASSIGN_OR_RETURN(auto listed, store.List(each.kind, target.name));
            for (const api::Json& o : listed.items) {
              RETURN_IF_ERROR(store.Delete({each.kind, target.name, Meta(o, "name")}).status());
            }
          }
        }
        return store.Delete({r.kind, target.namespace_, target.name});
      });
}

Status ApiHandler::EnsureDefaultNamespace() {
  if (backend_.store().Get({"Namespace", "", "default"}).ok()) return OkStatus();
  api::Json ns = {{"apiVersion", "v1"},
                  {"kind", "Namespace"},
                  {"metadata", {{"name", "default"}}},
                  {"spec", {{"finalizers", {"kubernetes"}}}},
                  {"status", {{"phase", "Active"}}}};
  Result<api::Json> created =
      backend_.Execute([&](store::ObjectStore& store) { return store.Create(ns); });
  if (!created.ok() && created.status().code() != StatusCode::kAlreadyExists)
    return created.status();
  return OkStatus();
}

}  // namespace trainyard::server
