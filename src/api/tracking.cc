#include "api/tracking.h"

#include <fmt/format.h>

#include <algorithm>

#include "api/registry.h"
#include "api/well_known.h"
#include "common/strings.h"

namespace trainyard::api {

std::string TrackingRunId(std::string_view kind, std::string_view name) {
  std::string id = AsciiLower(kind) + "-" + std::string(name);
  std::replace(id.begin() + static_cast<std::ptrdiff_t>(kind.size()), id.end(), '.', '_');
  return id;
}

std::optional<TrackedObject> TrackedObjectOf(std::string_view run_id) {
  size_t dash = run_id.find('-');
  if (dash == std::string_view::npos || dash + 1 == run_id.size()) return std::nullopt;
  std::string prefix(run_id.substr(0, dash));
  std::string name(run_id.substr(dash + 1));
  std::replace(name.begin(), name.end(), '_', '.');
  if (prefix == "trial") return TrackedObject{"Trial", std::move(name)};
  for (const std::string& kind : JobKindNames()) {
    if (AsciiLower(kind) == prefix) return TrackedObject{kind, std::move(name)};
  }
  return std::nullopt;
}

namespace {

// The controller among an object's owners.
const Json* ControllerOf(const Json& object) {
  for (const Json& ref : ArrayRefAt(object, {"metadata", "ownerReferences"})) {
    if (BoolAt(ref, "controller")) return &ref;
  }
  return nullptr;
}

}  // namespace

std::optional<TrackedOwner> TrackedOwnerUp(std::string kind, std::string name,
                                           const ObjectLookup& get) {
  std::optional<TrackedOwner> found;
  // Pod, Job, JobSet, TrainJob: three steps up at most; a few more spare.
  for (int depth = 0; depth < 6; ++depth) {
    std::optional<Json> object = get(kind, name);
    if (!object) break;
    std::string uid = StringAt(*object, {"metadata", "uid"});
    if (TrackingOf(kind) == Tracking::kPushed) return TrackedOwner{kind, name, uid};
    std::string trial = StringAt(*object, {"metadata", "labels", std::string(kTrialLabel).c_str()});
    if (!trial.empty()) {
      std::optional<Json> t = get("Trial", trial);
      if (!t) break;
      return TrackedOwner{"Trial", trial, StringAt(*t, {"metadata", "uid"})};
    }
    if (IsJobKind(kind)) found = TrackedOwner{kind, name, uid};
    const Json* up = ControllerOf(*object);
    if (up == nullptr) break;
    kind = StringAt(*up, "kind");
    name = StringAt(*up, "name");
  }
  return found;
}

std::string FormatTrackedOwner(const TrackedOwner& owner) {
  return owner.kind + "/" + owner.name + "/" + owner.uid;
}

std::optional<TrackedOwner> ParseTrackedOwner(std::string_view value) {
  size_t first = value.find('/');
  size_t second = first == std::string_view::npos ? first : value.find('/', first + 1);
  if (second == std::string_view::npos || value.find('/', second + 1) != std::string_view::npos) {
    return std::nullopt;
  }
  TrackedOwner owner{std::string(value.substr(0, first)),
                     std::string(value.substr(first + 1, second - first - 1)),
                     std::string(value.substr(second + 1))};
  bool tracked = IsJobKind(owner.kind) || TrackingOf(owner.kind) == Tracking::kPushed;
  if (!tracked || owner.name.empty() || !IsArtifactsFolderName(owner.uid)) return std::nullopt;
  return owner;
}

std::string TrackingUri(std::string_view api_url, std::string_view namespace_) {
  return std::string(api_url) + "/mlflow/" + std::string(namespace_);
}

bool IsArtifactsFolderName(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
  });
}

std::string ArtifactsDirOf(std::string_view root, std::string_view namespace_,
                           std::string_view uid) {
  return fmt::format("{}/{}/{}", root, namespace_, uid);
}

}  // namespace trainyard::api
