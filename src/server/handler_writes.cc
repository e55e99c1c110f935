// The API's writes: create, replace, patch and delete, each checked as
// `trainyard validate` checks and run through Backend::Execute.
#include <fmt/format.h>

#include <charconv>
#include <random>

#include "api/names.h"
#include "api/object.h"
#include "api/pod_object.h"
#include "api/validation.h"
#include "api/yaml.h"
#include "common/strings.h"
#include "server/field_managers.h"
#include "server/handler.h"
#include "server/handler_internal.h"
#include "server/json_patch.h"
#include "server/pod_security.h"
#include "server/strategic_merge.h"

namespace trainyard::server {

using internal::BadRequest;
using internal::ParseBody;
using internal::UnsupportedBody;

namespace {

// The media type of a Content-Type header, without its parameters.
std::string MediaType(const std::string& content_type) {
  std::string type = AsciiLower(content_type.substr(0, content_type.find(';')));
  type.erase(type.find_last_not_of(" \t") + 1);
  return type;
}

}  // namespace

std::optional<ApiError> internal::UnsupportedBody(const ApiRequest& request) {
  std::string type = MediaType(request.content_type);
  if (type.empty() || type == "application/json" || type == "application/yaml") {
    return std::nullopt;
  }
  return MakeApiError(415, "UnsupportedMediaType",
                      fmt::format("the body of the request was in an unknown format - accepted "
                                  "media types include: application/json, application/yaml "
                                  "(not {:?})",
                                  request.content_type));
}

Result<api::Json> internal::ParseBody(const ApiRequest& request) {
  if (request.body.empty()) return InvalidArgumentError("the request has no body");
  ASSIGN_OR_RETURN(std::vector<api::SourceDocument> docs,
                   api::ParseManifests(request.body, "request body"));
  if (docs.size() != 1 || !docs[0].value.is_object()) {
    return InvalidArgumentError("the request body must be one object");
  }
  return std::move(docs[0].value);
}

namespace {

// Kubernetes' generateName suffix: five characters no word can be made of.
std::string RandomSuffix() {
  static thread_local std::mt19937 gen{std::random_device{}()};
  return api::RandomNameSuffix(gen);
}

// The identity fields a body must agree with the URL on, filled in where
// the body leaves them out.
std::optional<ApiError> Reconcile(const ApiTarget& target, api::Json& body) {
  const Resource& r = *target.resource;
  std::string api_version = api::StringAt(body, "apiVersion");
  std::string kind = api::StringAt(body, "kind");
  if ((body.contains("apiVersion") && !body["apiVersion"].is_string()) ||
      (body.contains("kind") && !body["kind"].is_string())) {
    return BadRequest("apiVersion and kind must be strings");
  }
  if (api_version.empty()) body["apiVersion"] = api_version = r.GroupVersion();
  if (kind.empty()) body["kind"] = kind = r.kind;
  if (api_version != r.GroupVersion() || kind != r.kind) {
    return BadRequest(fmt::format("the object is a {} {} but the request is for {} {}", api_version,
                                  kind, r.GroupVersion(), r.kind));
  }
  if (!body["metadata"].is_object()) body["metadata"] = api::Json::object();
  api::Json& meta = body["metadata"];
  if (r.namespaced) {
    std::string ns = api::StringAt(body, {"metadata", "namespace"});
    if (ns.empty()) meta["namespace"] = target.namespace_;
    if (!ns.empty() && ns != target.namespace_) {
      return BadRequest(
          "the namespace of the provided object does not match the namespace sent on the request");
    }
  }
  if (!target.name.empty()) {
    std::string name = api::StringAt(body, {"metadata", "name"});
    if (name.empty()) meta["name"] = target.name;
    if (!name.empty() && name != target.name) {
      return BadRequest(
          fmt::format("the name of the object ({}) does not match the name on the URL ({})", name,
                      target.name));
    }
  }
  return std::nullopt;
}

// What may not change from `stored` to `updated` (kind, name, managedBy,
// the queue, ...): the 422 to answer with, if anything did.
// A uid in the body is a precondition, as on Kubernetes: an update meant
// for another object of the same name (one deleted and made again) is a
// conflict, never applied to this one, and a uid is never changed.
std::optional<ApiError> UidConflict(const Resource& r, const std::string& name,
                                    const api::Json& stored, const api::Json& updated) {
  std::string sent = api::StringAt(updated, {"metadata", "uid"});
  std::string uid = api::StringAt(stored, {"metadata", "uid"});
  if (sent.empty() || sent == uid) return std::nullopt;
  return MakeApiError(
      409, "Conflict",
      fmt::format("Operation cannot be fulfilled on {} \"{}\": Precondition failed: UID in "
                  "precondition: {}, UID in object meta: {}",
                  r.Qualified(), name, sent, uid));
}

std::optional<ApiError> CheckUpdate(const Resource& r, const std::string& name,
                                    const api::Json& stored, const api::Json& updated) {
  if (std::optional<ApiError> e = UidConflict(r, name, stored, updated)) return e;
  api::DecodeResult before = api::DecodeObject(stored);
  api::DecodeResult after = api::DecodeObject(updated);
  if (!before.object || !after.object) return std::nullopt;
  FieldErrors errors = api::ValidateUpdate(*before.object, *after.object);
  if (errors.empty()) return std::nullopt;
  return InvalidError(r, name, errors);
}

// A JSON patch that cannot be applied, answered as kube-apiserver does: too
// many operations is 413, a malformed patch 400, anything else 422.
ApiError PatchError(const Status& status) {
  if (status.code() == StatusCode::kResourceExhausted) {
    return MakeApiError(413, "RequestEntityTooLarge", status.message());
  }
  if (status.code() == StatusCode::kInvalidArgument) return BadRequest(status.message());
  return MakeApiError(422, "Invalid",
                      fmt::format("the patch cannot be applied: {}", status.message()));
}

bool IsDryRun(const ApiRequest& request) { return request.Param("dryRun") == "All"; }

}  // namespace

// A pod, event or lease a client writes (pods and events on an API-only
// server: an operator, or a test playing the kubelet): kept as sent, as
// kube-apiserver keeps them, once its name and the fields that make it
// what it is hold.
std::variant<ApiHandler::Checked, ApiError> ApiHandler::CheckKeptAsSent(const Resource& r,
                                                                        api::Json body) {
  std::string name = api::StringAt(body, {"metadata", "name"});
  const api::ApiStrategy& strategy = r.strategy;
  api::NameProblems problems =
      strategy.name_problems ? strategy.name_problems(name) : api::Dns1123SubdomainProblems(name);
  if (!problems.empty()) {
    return InvalidError(
        r, name,
        {FieldError::Invalid(FieldPath("metadata").Child("name"), name, problems.front())});
  }
  if (strategy.validate_kept) {
    FieldErrors errors = strategy.validate_kept(body);
    if (!errors.empty()) return InvalidError(r, name, errors);
  }
  if (strategy.prepare_for_write) strategy.prepare_for_write(body);
  return Checked{std::move(body), {}};
}

std::variant<ApiHandler::Checked, ApiError> ApiHandler::Check(const ApiTarget& target,
                                                              api::Json body,
                                                              const ApiRequest& request) const {
  const Resource& r = *target.resource;
  if (std::optional<ApiError> e = Reconcile(target, body)) return *e;
  std::string name = api::StringAt(body, {"metadata", "name"});
  if (!r.hooks.decode) return CheckKeptAsSent(r, std::move(body));
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

std::optional<ApiError> ApiHandler::PodSecurity(const ApiTarget& target,
                                                const api::Json& object) const {
  // Without tokens the server has one user, its administrator.
  if (auth_ == nullptr || !target.resource->namespaced) return std::nullopt;
  Result<api::Json> ns = backend_.store().Get({"Namespace", "", target.namespace_});
  return PodSecurityViolation(*target.resource, api::StringAt(object, {"metadata", "name"}), object,
                              ns.ok() ? &*ns : nullptr);
}

std::optional<ApiError> ApiHandler::Admit(const ApiTarget& target, Checked& checked,
                                          bool update) const {
  Result<Backend::Admission> admission = backend_.Admit(*target.resource, checked.object, update);
  std::string name = api::StringAt(checked.object, {"metadata", "name"});
  if (!admission.ok()) return ApiErrorOf(admission.status(), target.resource, name);
  if (!admission->errors.empty()) return InvalidError(*target.resource, name, admission->errors);
  checked.warnings.insert(checked.warnings.end(), admission->warnings.begin(),
                          admission->warnings.end());
  return std::nullopt;
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
  if (std::optional<ApiError> e = UnsupportedBody(request)) return ErrorResponse(*e);
  Result<api::Json> body = ParseBody(request);
  if (!body.ok()) return ErrorResponse(BadRequest(body.status().message()));
  if (body->contains("metadata") && (*body)["metadata"].is_object() &&
      api::StringAt(*body, {"metadata", "name"}).empty() &&
      !api::StringAt(*body, {"metadata", "generateName"}).empty()) {
    (*body)["metadata"]["name"] =
        api::StringAt(*body, {"metadata", "generateName"}) + RandomSuffix();
  }
  return CreateObject(target, request, std::move(*body), /*applied=*/false);
}

ApiResponse ApiHandler::CreateObject(const ApiTarget& target, const ApiRequest& request,
                                     api::Json body, bool applied) {
  const Resource& r = *target.resource;
  std::variant<Checked, ApiError> checked = Check(target, std::move(body), request);
  if (auto* e = std::get_if<ApiError>(&checked)) return ErrorResponse(*e);
  Checked& ok = std::get<Checked>(checked);
  if (std::optional<ApiError> e = PodSecurity(target, ok.object)) return ErrorResponse(*e);
  if (std::optional<ApiError> e = Admit(target, ok, /*update=*/false)) return ErrorResponse(*e);
  ok.object["metadata"].erase("deletionTimestamp");  // the server's to set
  AsCreated(r, ok.object);
  if (!applied) {
    ok.object["metadata"].erase("managedFields");
    RecordUpdate(nullptr, ok.object, internal::ManagerOf(request, ok.object, clock_),
                 PatchSchemaOf(r.group, r.kind));
  }
  std::string name = api::StringAt(ok.object, {"metadata", "name"});
  if (IsDryRun(request)) return Object(201, ok.object);
  std::string ns = target.namespace_;
  return Write(
      target, name, 201,
      [&](store::ObjectStore& store, std::optional<ApiError>& own) -> Result<api::Json> {
        if (r.namespaced && !store.Get({"Namespace", "", ns}).ok()) {
          own = ApiErrorOf(NotFoundError(""), api::ResourceTypeOfKind("Namespace"), ns);
          return NotFoundError("namespace");
        }
        return store.Create(ok.object);
      },
      std::move(ok.warnings));
}

ApiResponse ApiHandler::Replace(const ApiTarget& target, const ApiRequest& request) {
  const Resource& r = *target.resource;
  if (std::optional<ApiError> e = UnsupportedBody(request)) return ErrorResponse(*e);
  Result<api::Json> body = ParseBody(request);
  if (!body.ok()) return ErrorResponse(BadRequest(body.status().message()));
  if (target.subresource == "status") {
    if (std::optional<ApiError> e = Reconcile(target, *body)) return ErrorResponse(*e);
    return WriteChecked(target, [&](const api::Json& stored) {
      return StatusReplaced(target, stored, *body, request);
    });
  }
  std::variant<Checked, ApiError> checked = Check(target, std::move(*body), request);
  if (auto* e = std::get_if<ApiError>(&checked)) return ErrorResponse(*e);
  Checked& ok = std::get<Checked>(checked);
  if (std::optional<ApiError> e = PodSecurity(target, ok.object)) return ErrorResponse(*e);
  if (std::optional<ApiError> e = Admit(target, ok, /*update=*/true)) return ErrorResponse(*e);
  if (IsDryRun(request)) return Object(200, ok.object);
  return Write(
      target, target.name, 200,
      [&](store::ObjectStore& store, std::optional<ApiError>& own) -> Result<api::Json> {
        ASSIGN_OR_RETURN(api::Json stored,
                         store.Get({r.store_kind, target.namespace_, target.name}));
        if ((own = CheckUpdate(r, target.name, stored, ok.object))) {
          return FailedPreconditionError("invalid update");
        }
        RecordUpdate(stored, ok.object, internal::ManagerOf(request, ok.object, clock_),
                     PatchSchemaOf(r.group, r.kind));
        return Finish(store, stored, ok.object);
      },
      std::move(ok.warnings));
}

std::variant<ApiHandler::Checked, ApiError> ApiHandler::StatusReplaced(
    const ApiTarget& target, const api::Json& stored, const api::Json& updated,
    const ApiRequest& request) const {
  // The status is checked as part of the whole object, as kube-apiserver's
  // status strategies do: a status that does not decode would leave the
  // object unreadable to its controller and to every list it is in.
  if (std::optional<ApiError> e = UidConflict(*target.resource, target.name, stored, updated)) {
    return *e;
  }
  api::Json merged = stored;
  merged.erase("status");
  if (updated.contains("status")) merged["status"] = updated["status"];
  std::string version = api::StringAt(updated, {"metadata", "resourceVersion"});
  if (!version.empty()) merged["metadata"]["resourceVersion"] = version;
  std::variant<Checked, ApiError> checked = Check(target, std::move(merged), request);
  if (auto* ok = std::get_if<Checked>(&checked)) {
    // The store keeps its own metadata and spec; only the status and the
    // version the client based it on are taken from what was checked.
    api::Json out = stored;
    out.erase("status");
    if (ok->object.contains("status")) out["status"] = std::move(ok->object["status"]);
    out["metadata"]["resourceVersion"] =
        version.empty() ? api::StringAt(stored, {"metadata", "resourceVersion"}) : version;
    ok->object = std::move(out);
  }
  return checked;
}

std::variant<ApiHandler::Checked, ApiError> ApiHandler::Patched(const ApiTarget& target,
                                                                const ApiRequest& request,
                                                                const api::Json& stored,
                                                                const ParsedPatch& patch) const {
  api::Json patched = stored;
  if (patch.json_patch) {
    Status applied = ApplyJsonPatch(patched, patch.body);
    if (!applied.ok()) return PatchError(applied);
  } else if (patch.strategic != nullptr) {
    Status applied = ApplyStrategicMergePatch(patched, patch.body, *patch.strategic);
    if (!applied.ok()) return PatchError(applied);
  } else {
    patched.merge_patch(patch.body);
  }
  if (!patched.is_object())
    return MakeApiError(422, "Invalid", "the patch does not leave an object");
  return ChangeChecked(target, request, stored, std::move(patched), /*record_update=*/true);
}

std::variant<ApiHandler::Checked, ApiError> ApiHandler::ChangeChecked(const ApiTarget& target,
                                                                      const ApiRequest& request,
                                                                      const api::Json& stored,
                                                                      api::Json changed,
                                                                      bool record_update) const {
  const Resource& r = *target.resource;
  if (std::optional<ApiError> e = Reconcile(target, changed)) return *e;
  // A change that names a resourceVersion is a precondition, as on
  // Kubernetes: a stale one is a conflict, not an overwrite.
  if (api::StringAt(changed, {"metadata", "resourceVersion"}) !=
      api::StringAt(stored, {"metadata", "resourceVersion"})) {
    return ApiErrorOf(Status(StatusCode::kAborted, "stale"), &r, target.name);
  }
  if (target.subresource == "status") return StatusReplaced(target, stored, changed, request);
  std::variant<Checked, ApiError> checked = Check(target, std::move(changed), request);
  auto* ok = std::get_if<Checked>(&checked);
  if (ok == nullptr) return checked;
  if (std::optional<ApiError> e = CheckUpdate(r, target.name, stored, ok->object)) return *e;
  if (std::optional<ApiError> e = PodSecurity(target, ok->object)) return *e;
  if (std::optional<ApiError> e = Admit(target, *ok, /*update=*/true)) return *e;
  ok->object["metadata"]["resourceVersion"] =
      api::StringAt(stored, {"metadata", "resourceVersion"});
  if (record_update) {
    RecordUpdate(stored, ok->object, internal::ManagerOf(request, ok->object, clock_),
                 PatchSchemaOf(r.group, r.kind));
  }
  return checked;
}

ApiResponse ApiHandler::Patch(const ApiTarget& target, const ApiRequest& request) {
  const std::string& type = request.content_type;
  if (type.starts_with("application/apply-patch+yaml")) return Apply(target, request);
  bool json_patch = type.starts_with("application/json-patch+json");
  bool merge = type.starts_with("application/merge-patch+json");
  // Only the kinds Kubernetes builds in have a strategic merge patch (the
  // tags of their Go types); kubectl sends custom resources a merge patch.
  const PatchSchema* strategic = type.starts_with("application/strategic-merge-patch+json")
                                     ? PatchSchemaOf(target.resource->group, target.resource->kind)
                                     : nullptr;
  if (!merge && !json_patch && strategic == nullptr) {
    return ErrorResponse(MakeApiError(
        415, "UnsupportedMediaType",
        fmt::format("the body of the request was in an unknown format - accepted media types "
                    "include: application/json-patch+json, application/merge-patch+json{}, "
                    "application/apply-patch+yaml",
                    PatchSchemaOf(target.resource->group, target.resource->kind) != nullptr
                        ? ", application/strategic-merge-patch+json"
                        : "")));
  }
  // A JSON patch is an array, which ParseBody refuses: it is parsed here,
  // within the same depth bound.
  Result<api::Json> body =
      json_patch ? api::ParseJsonValue(request.body, "the JSON patch") : ParseBody(request);
  if (!body.ok()) return ErrorResponse(BadRequest(body.status().message()));
  ParsedPatch patch{.body = std::move(*body), .json_patch = json_patch, .strategic = strategic};
  auto check = [&](const api::Json& stored) { return Patched(target, request, stored, patch); };
  if (IsDryRun(request)) {
    // What the patch would make, checked in full and not stored (kubectl
    // diff, apply --dry-run=server).
    const Resource& r = *target.resource;
    Result<api::Json> stored = backend_.store().Get({r.store_kind, target.namespace_, target.name});
    if (!stored.ok()) return ErrorResponse(ApiErrorOf(stored.status(), &r, target.name));
    std::variant<Checked, ApiError> checked = check(*stored);
    if (auto* e = std::get_if<ApiError>(&checked)) return ErrorResponse(*e);
    ApiResponse response = Object(200, std::get<Checked>(checked).object);
    response.warnings = std::move(std::get<Checked>(checked).warnings);
    return response;
  }
  return WriteChecked(target, check);
}

ApiResponse ApiHandler::WriteChecked(const ApiTarget& target, const CheckAgainst& check) {
  const Resource& r = *target.resource;
  store::ObjectKey key{r.store_kind, target.namespace_, target.name};
  // The change is made and checked off the control loop, against the object
  // as read, and written only if nothing changed that object meanwhile (as
  // kube-apiserver's GuaranteedUpdate does): the loop never does work whose
  // size a request decides. A race is retried on a fresh read.
  constexpr int kAttempts = 5;
  for (int attempt = 1;; ++attempt) {
    Result<api::Json> stored = backend_.store().Get(key);
    if (!stored.ok()) return ErrorResponse(ApiErrorOf(stored.status(), &r, target.name));
    std::variant<Checked, ApiError> checked = check(*stored);
    if (auto* e = std::get_if<ApiError>(&checked)) return ErrorResponse(*e);
    Checked& ok = std::get<Checked>(checked);
    std::string based_on = api::StringAt(*stored, {"metadata", "resourceVersion"});
    bool raced = false;
    ApiResponse response = Write(
        target, target.name, 200,
        [&](store::ObjectStore& store, std::optional<ApiError>&) -> Result<api::Json> {
          ASSIGN_OR_RETURN(api::Json current, store.Get(key));
          if (api::StringAt(current, {"metadata", "resourceVersion"}) != based_on) {
            raced = true;
            return Status(StatusCode::kAborted, "changed meanwhile");
          }
          if (target.subresource == "status") return store.UpdateStatus(ok.object);
          return Finish(store, current, std::move(ok.object));
        },
        std::move(ok.warnings));
    if (!raced || attempt == kAttempts) return response;
  }
}

ApiResponse ApiHandler::Bind(const ApiTarget& target, const ApiRequest& request) {
  if (std::optional<ApiError> e = UnsupportedBody(request)) return ErrorResponse(*e);
  Result<api::Json> body = ParseBody(request);
  if (!body.ok()) return ErrorResponse(BadRequest(body.status().message()));
  const Resource& r = *target.resource;
  std::string node = api::StringAt(*body, {"target", "name"});
  std::string kind = api::StringAt(*body, {"target", "kind"});
  if (node.empty() || (!kind.empty() && kind != "Node")) {
    return ErrorResponse(InvalidError(
        r, target.name,
        {FieldError::Invalid(FieldPath("target"), node, "must name a Node (kind empty or Node)")}));
  }
  std::string now = FormatRfc3339(clock_.Now());
  ApiResponse written = Write(
      target, target.name, 201,
      [&](store::ObjectStore& store, std::optional<ApiError>& own) -> Result<api::Json> {
        ASSIGN_OR_RETURN(api::Json pod, store.Get({r.store_kind, target.namespace_, target.name}));
        std::string assigned = api::StringAt(pod, {"spec", "nodeName"});
        if (!assigned.empty()) {
          own = MakeApiError(409, "Conflict",
                             fmt::format("Operation cannot be fulfilled on pods/binding \"{}\": "
                                         "pod {} is already assigned to node \"{}\"",
                                         target.name, target.name, assigned));
          return Status(StatusCode::kAborted, "assigned");
        }
        if (!api::StringAt(pod, {"metadata", "deletionTimestamp"}).empty()) {
          own = MakeApiError(
              409, "Conflict",
              fmt::format("pod {} is being deleted, cannot be assigned to a host", target.name));
          return Status(StatusCode::kAborted, "deleted");
        }
        pod["spec"]["nodeName"] = node;
        if (const api::Json* notes = api::FindAt(*body, {"metadata", "annotations"});
            notes != nullptr && notes->is_object()) {
          for (const auto& [k, v] : notes->items()) {
            if (v.is_string()) pod["metadata"]["annotations"][k] = v;  // annotations are text
          }
        }
        ASSIGN_OR_RETURN(pod, store.Update(std::move(pod)));
        // As kube-apiserver: a bound pod's PodScheduled condition is True.
        api::Json conditions = api::Json::array();
        if (const api::Json* held = api::FindAt(pod, {"status", "conditions"});
            held != nullptr && held->is_array()) {
          for (const api::Json& c : *held) {
            if (api::StringAt(c, "type") != "PodScheduled") conditions.push_back(c);
          }
        }
        conditions.push_back({{"type", "PodScheduled"},
                              {"status", "True"},
                              {"lastProbeTime", nullptr},
                              {"lastTransitionTime", now}});
        pod["status"]["conditions"] = std::move(conditions);
        return store.UpdateStatus(std::move(pod));
      });
  if (written.code != 201) return written;
  return Object(201, {{"kind", "Status"},
                      {"apiVersion", "v1"},
                      {"metadata", api::Json::object()},
                      {"status", "Success"},
                      {"code", 201}});
}

void ApiHandler::AsCreated(const Resource& r, api::Json& object) const {
  // kube-apiserver keeps no status sent with a create where the kind has a
  // status subresource (that is for its controllers to write): a pod
  // starts Pending. A Node is the exception: its kubelet registers it with
  // what it has.
  const api::ApiStrategy& strategy = r.strategy;
  if (strategy.prepare_for_create) strategy.prepare_for_create(object);
  if (api_only_ && strategy.kube_defaults) strategy.kube_defaults(object);
  if (!r.has_status) return;
  object.erase("status");
  if (!strategy.initial_status.is_null()) object["status"] = strategy.initial_status;
}

Result<api::Json> ApiHandler::Finish(store::ObjectStore& store, const api::Json& stored,
                                     api::Json updated) {
  // deletionTimestamp is the server's to set, and is never taken back.
  std::string deleting = api::StringAt(stored, {"metadata", "deletionTimestamp"});
  if (deleting.empty()) {
    updated["metadata"].erase("deletionTimestamp");
  } else {
    updated["metadata"]["deletionTimestamp"] = deleting;
  }
  ASSIGN_OR_RETURN(api::Json written, store.Update(std::move(updated)));
  if (!deleting.empty() && api::ArrayAt(written["metadata"], "finalizers").empty()) {
    ASSIGN_OR_RETURN(store::ObjectKey key, store::KeyOf(written));
    return store.Delete(key);  // the last finalizer is gone: so is the object
  }
  return written;
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
