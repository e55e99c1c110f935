#include "node/tracking_env.h"

#include <algorithm>

#include "api/tracking.h"
#include "api/well_known.h"

namespace trainyard::node {

std::optional<TrackedOwner> TrackedOwnerOf(const api::Pod& pod) {
  bool controlled =
      std::any_of(pod.metadata.owner_references.begin(), pod.metadata.owner_references.end(),
                  [](const api::OwnerReference& ref) { return ref.controller.value_or(false); });
  auto mark = pod.metadata.annotations.find(std::string(api::kTrackedOwnerAnnotation));
  if (!controlled || mark == pod.metadata.annotations.end()) return std::nullopt;
  return api::ParseTrackedOwner(mark->second);
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
