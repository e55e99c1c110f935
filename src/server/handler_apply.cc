// Server-side apply: PATCH with application/apply-patch+yaml, as
// `kubectl apply --server-side` and `kubectl diff --server-side` send it.
#include <fmt/format.h>

#include <map>

#include "api/defaults.h"
#include "api/object.h"
#include "api/yaml.h"
#include "common/clock.h"
#include "server/field_managers.h"
#include "server/handler.h"
#include "server/handler_internal.h"

namespace trainyard::server {

using internal::BadRequest;

namespace internal {

FieldManager ManagerOf(const ApiRequest& request, const api::Json& object, const Clock& clock) {
  std::string name = request.Param("fieldManager");
  if (name.empty()) name = request.user_agent.substr(0, request.user_agent.find('/'));
  if (name.empty()) name = "unknown";
  return {.name = std::move(name),
          .api_version = api::StringAt(object, "apiVersion"),
          .time = FormatRfc3339(clock.Now())};
}

}  // namespace internal

namespace {

// Kubernetes' words for apply conflicts, one manager's fields together.
ApiError ConflictError(const std::vector<ApplyConflict>& conflicts) {
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> by_manager;
  for (const ApplyConflict& c : conflicts)
    by_manager[{c.manager, c.api_version}].push_back(c.field);
  std::string said;
  for (const auto& [who, fields] : by_manager) {
    if (!said.empty()) said += "\n";
    if (fields.size() == 1) {
      said += fmt::format("conflict with {:?} using {}: {}", who.first, who.second, fields[0]);
    } else {
      said += fmt::format("conflicts with {:?} using {}:\n- {}", who.first, who.second,
                          fmt::join(fields, "\n- "));
    }
  }
  return MakeApiError(409, "Conflict",
                      fmt::format("Apply failed with {} conflict{}: {}", conflicts.size(),
                                  conflicts.size() == 1 ? "" : "s", said));
}

// The applied configuration: one object, of the kind and name the path
// names.
Result<api::Json> AppliedConfiguration(const ApiTarget& target, const ApiRequest& request) {
  ASSIGN_OR_RETURN(std::vector<api::SourceDocument> docs,
                   api::ParseManifests(request.body, "the applied configuration"));
  if (docs.size() != 1 || !docs[0].value.is_object()) {
    return InvalidArgumentError("an apply patch is one object (YAML or JSON)");
  }
  api::Json applied = std::move(docs[0].value);
  const Resource& r = *target.resource;
  if (api::StringAt(applied, "apiVersion") != r.GroupVersion() ||
      api::StringAt(applied, "kind") != r.kind) {
    return InvalidArgumentError(
        fmt::format("the applied configuration is {} {}, not {} {} as the path says",
                    api::StringAt(applied, "apiVersion"), api::StringAt(applied, "kind"),
                    r.GroupVersion(), r.kind));
  }
  if (api::StringAt(applied, {"metadata", "name"}) != target.name) {
    return InvalidArgumentError(
        fmt::format("the applied configuration's metadata.name {:?} is not {:?}, as the path says",
                    api::StringAt(applied, {"metadata", "name"}), target.name));
  }
  return applied;
}

// As kube-apiserver defaults an applied configuration before it merges
// it: the defaults are then the applier's, and what the server stored
// (the same defaults) is no conflict with the applied value.
api::Json Defaulted(const api::Json& applied) {
  api::DecodeResult decoded = api::DecodeObject(applied);
  if (!decoded.object || !decoded.errors.empty()) return applied;  // refused later, as it is
  api::SetDefaults(*decoded.object);
  api::Json out = api::EncodeObject(*decoded.object);
  out.erase("status");
  return out;
}

}  // namespace

ApiResponse ApiHandler::Apply(const ApiTarget& target, const ApiRequest& request) {
  const Resource& r = *target.resource;
  if (!target.subresource.empty()) {
    return ErrorResponse(MakeApiError(
        415, "UnsupportedMediaType",
        fmt::format("server-side apply of {}/{} is not supported: apply the object, or patch "
                    "its {} with a merge patch",
                    r.plural, target.subresource, target.subresource)));
  }
  if (request.Param("fieldManager").empty()) {
    return ErrorResponse(MakeApiError(
        422, "Invalid",
        "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for "
        "apply patch"));
  }
  Result<api::Json> applied = AppliedConfiguration(target, request);
  if (!applied.ok()) return ErrorResponse(BadRequest(applied.status().message()));
  *applied = Defaulted(*applied);
  const PatchSchema* schema = PatchSchemaOf(r.group, r.kind);
  FieldManager manager = internal::ManagerOf(request, *applied, clock_);
  bool force = request.Flag("force");
  auto apply_to = [&](const api::Json& live) -> std::variant<Checked, ApiError> {
    std::vector<ApplyConflict> conflicts;
    Result<api::Json> merged =
        ApplyConfiguration(live, *applied, manager, force, schema, conflicts);
    if (!conflicts.empty()) return ConflictError(conflicts);
    if (!merged.ok()) return BadRequest(merged.status().message());
    return ChangeChecked(target, request, live, std::move(*merged), /*record_update=*/false);
  };
  Result<api::Json> stored = backend_.store().Get({r.store_kind, target.namespace_, target.name});
  if (!stored.ok() && stored.status().code() == StatusCode::kNotFound) {
    // Applying what does not exist creates it, the applier owning it all.
    std::vector<ApplyConflict> none;
    api::Json fresh = {
        {"apiVersion", r.GroupVersion()}, {"kind", r.kind}, {"metadata", {{"name", target.name}}}};
    if (r.namespaced) fresh["metadata"]["namespace"] = target.namespace_;
    Result<api::Json> made = ApplyConfiguration(fresh, *applied, manager, force, schema, none);
    if (!made.ok()) return ErrorResponse(BadRequest(made.status().message()));
    return CreateObject(target, request, std::move(*made), /*applied=*/true);
  }
  if (!stored.ok()) return ErrorResponse(ApiErrorOf(stored.status(), &r, target.name));
  if (request.Param("dryRun") == "All") {
    std::variant<Checked, ApiError> checked = apply_to(*stored);
    if (auto* e = std::get_if<ApiError>(&checked)) return ErrorResponse(*e);
    return Object(200, std::get<Checked>(checked).object);
  }
  return WriteChecked(target, apply_to);
}

}  // namespace trainyard::server
