#include "node/tracking_env.h"

#include <algorithm>

#include "api/object.h"
#include "api/registry.h"
#include "api/tracking.h"
#include "api/well_known.h"

namespace trainyard::node {
namespace {

// The controller among an object's owners.
const api::Json* ControllerOf(const api::Json& object) {
  for (const api::Json& ref : api::ArrayRefAt(object, {"metadata", "ownerReferences"})) {
    if (ref.is_object() && ref.value("controller", false)) return &ref;
  }
  return nullptr;
}

// A kind's objects as the store keys them ("Job": batch's).
std::optional<std::string> StoreKind(const std::string& kind) {
  const api::ResourceType* type = api::ResourceTypeOfKind(kind);
  if (type == nullptr) return std::nullopt;
  return type->store_kind;
}

}  // namespace

std::optional<TrackedOwner> TrackedOwnerOf(const api::Pod& pod, const store::ObjectReader& store) {
  const api::OwnerReference* first = nullptr;
  for (const api::OwnerReference& ref : pod.metadata.owner_references) {
    if (ref.controller.value_or(false)) first = &ref;
  }
  if (first == nullptr) return std::nullopt;
  std::optional<TrackedOwner> found;
  std::string kind = first->kind;
  std::string name = first->name;
  // Pod, Job, JobSet, TrainJob: three steps up at most; a few more spare.
  for (int depth = 0; depth < 6; ++depth) {
    std::optional<std::string> store_kind = StoreKind(kind);
    if (!store_kind) break;
    Result<api::Json> object = store.Get({*store_kind, pod.metadata.namespace_, name});
    if (!object.ok()) break;
    std::string trial =
        api::StringAt(*object, {"metadata", "labels", std::string(api::kTrialLabel).c_str()});
    if (!trial.empty()) {
      Result<api::Json> t = store.Get({"Trial", pod.metadata.namespace_, trial});
      if (!t.ok()) break;
      return TrackedOwner{"Trial", trial, api::StringAt(*t, {"metadata", "uid"})};
    }
    if (api::IsJobKind(kind)) {
      found = TrackedOwner{kind, name, api::StringAt(*object, {"metadata", "uid"})};
    }
    const api::Json* up = ControllerOf(*object);
    if (up == nullptr) break;
    kind = api::StringAt(*up, "kind");
    name = api::StringAt(*up, "name");
  }
  return found;
}

void AddTrackingEnv(const api::Pod& pod, const TrackedOwner& owner, const std::string& api_url,
                    const std::string& ca_file, EnvList& env) {
  auto has = [&](std::string_view name) {
    return std::any_of(env.begin(), env.end(), [&](const auto& e) { return e.first == name; });
  };
  if (has(api::kMlflowUriEnv) || api_url.empty()) return;
  // What the container sets itself stays as it set it.
  auto add = [&](std::string_view name, std::string value) {
    if (!has(name)) env.emplace_back(name, std::move(value));
  };
  add(api::kMlflowUriEnv, api::TrackingUri(api_url, pod.metadata.namespace_));
  add(api::kMlflowRunEnv, api::TrackingRunId(owner.kind, owner.name));
  add(api::kMlflowTokenEnv, owner.uid);
  if (!ca_file.empty()) add(api::kMlflowCaEnv, ca_file);
}

}  // namespace trainyard::node
