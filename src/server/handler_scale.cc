// The scale subresource, as kube-apiserver serves it for Deployments and
// for the custom resources whose CRD declares one (PyTorchJob, PaddleJob,
// JAXJob): an autoscaling/v1 Scale read from the object, and a change of
// it written back into the object as an update of it, checked, admitted
// and stored as any update is (`kubectl scale`, autoscalers).
#include <fmt/format.h>

#include <climits>
#include <string>
#include <vector>

#include "api/registry.h"
#include "api/yaml.h"
#include "server/handler.h"
#include "server/handler_internal.h"
#include "server/json_patch.h"

namespace trainyard::server {
namespace {

const api::Json* At(const api::Json& doc, const std::vector<std::string>& path) {
  const api::Json* at = &doc;
  for (const std::string& key : path) {
    if (!at->is_object() || !at->contains(key)) return nullptr;
    at = &(*at)[key];
  }
  return at;
}

int64_t IntAtPath(const api::Json& doc, const std::vector<std::string>& path) {
  const api::Json* at = At(doc, path);
  return at != nullptr && at->is_number_integer() ? at->get<int64_t>() : 0;
}

// Sets `path` in `doc`, making the objects on the way, as Kubernetes sets
// a CRD's specReplicasPath.
void SetAtPath(api::Json& doc, const std::vector<std::string>& path, int64_t value) {
  api::Json* at = &doc;
  for (const std::string& key : path) {
    if (!at->is_object()) *at = api::Json::object();
    at = &(*at)[key];
  }
  *at = value;
}

api::Json ScaleOf(const api::ScaleSubresource& scale, const api::Json& object) {
  const api::Json& meta = api::ObjectAt(object, "metadata");
  api::Json scale_meta = api::Json::object();
  for (const char* key : {"name", "namespace", "uid", "resourceVersion", "creationTimestamp"}) {
    if (meta.contains(key)) scale_meta[key] = meta[key];
  }
  api::Json out = {{"kind", "Scale"},
                   {"apiVersion", "autoscaling/v1"},
                   {"metadata", std::move(scale_meta)},
                   {"spec", {{"replicas", IntAtPath(object, scale.spec_replicas)}}},
                   {"status", {{"replicas", IntAtPath(object, scale.status_replicas)}}}};
  if (std::string selector = scale.selector(object); !selector.empty()) {
    out["status"]["selector"] = selector;
  }
  return out;
}

}  // namespace

ApiResponse ApiHandler::Scale(const ApiTarget& target, const ApiRequest& request) {
  const Resource& r = *target.resource;
  const api::ScaleSubresource& scale = *r.scale;
  ApiTarget object_target = target;
  object_target.subresource.clear();
  const std::string& m = request.method;
  if (m == "GET") {
    Result<api::Json> stored = backend_.store().Get({r.store_kind, target.namespace_, target.name});
    if (!stored.ok()) return ErrorResponse(ApiErrorOf(stored.status(), &r, target.name));
    return Object(200, ScaleOf(scale, *stored));
  }
  bool merge = request.content_type.starts_with("application/merge-patch+json") ||
               request.content_type.starts_with("application/strategic-merge-patch+json");
  bool json_patch = request.content_type.starts_with("application/json-patch+json");
  if (m == "PATCH" && !merge && !json_patch) {
    return ErrorResponse(MakeApiError(
        415, "UnsupportedMediaType",
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json-patch+json, application/merge-patch+json, "
        "application/strategic-merge-patch+json"));
  }
  if (m == "PUT") {
    if (std::optional<ApiError> e = internal::UnsupportedBody(request)) return ErrorResponse(*e);
  }
  Result<api::Json> body = json_patch ? api::ParseJsonValue(request.body, "the JSON patch")
                                      : internal::ParseBody(request);
  if (!body.ok()) return ErrorResponse(internal::BadRequest(body.status().message()));
  if (m == "PUT") {
    std::string named = api::StringAt(*body, {"metadata", "name"});
    if (!named.empty() && named != target.name) {
      return ErrorResponse(internal::BadRequest(
          fmt::format("the name of the object ({}) does not match the name on the URL ({})", named,
                      target.name)));
    }
  }
  auto check = [&](const api::Json& stored) -> std::variant<Checked, ApiError> {
    api::Json wanted = m == "PUT" ? *body : ScaleOf(scale, stored);
    if (json_patch) {
      if (Status applied = ApplyJsonPatch(wanted, *body); !applied.ok()) {
        return MakeApiError(422, "Invalid", applied.message());
      }
    } else if (m == "PATCH") {
      wanted.merge_patch(*body);
    }
    const api::Json* replicas = api::FindAt(wanted, {"spec", "replicas"});
    if (replicas == nullptr || !replicas->is_number_integer() || replicas->get<int64_t>() < 0 ||
        replicas->get<int64_t>() > INT32_MAX) {
      return MakeApiError(
          422, "Invalid",
          fmt::format("Scale.autoscaling \"{}\" is invalid: spec.replicas: Invalid value: {}: "
                      "must be greater than or equal to 0",
                      target.name, replicas == nullptr ? "null" : replicas->dump()));
    }
    std::string version = api::StringAt(wanted, {"metadata", "resourceVersion"});
    if (!version.empty() && version != api::StringAt(stored, {"metadata", "resourceVersion"})) {
      return ApiErrorOf(Status(StatusCode::kAborted, "stale"), &r, target.name);
    }
    api::Json changed = stored;
    SetAtPath(changed, scale.spec_replicas, replicas->get<int64_t>());
    return ChangeChecked(object_target, request, stored, std::move(changed),
                         /*record_update=*/true);
  };
  if (request.Param("dryRun") == "All") {
    Result<api::Json> stored = backend_.store().Get({r.store_kind, target.namespace_, target.name});
    if (!stored.ok()) return ErrorResponse(ApiErrorOf(stored.status(), &r, target.name));
    std::variant<Checked, ApiError> checked = check(*stored);
    if (auto* e = std::get_if<ApiError>(&checked)) return ErrorResponse(*e);
    return Object(200, ScaleOf(scale, std::get<Checked>(checked).object));
  }
  ApiResponse response = WriteChecked(object_target, check);
  if (response.code != 200) return response;
  api::Json written = api::Json::parse(response.body, nullptr, /*allow_exceptions=*/false);
  response.body = ScaleOf(scale, written).dump();
  return response;
}

}  // namespace trainyard::server
