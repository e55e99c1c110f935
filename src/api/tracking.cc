#include "api/tracking.h"

#include <algorithm>

#include "api/registry.h"
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

std::string TrackingUri(std::string_view api_url, std::string_view namespace_) {
  return std::string(api_url) + "/mlflow/" + std::string(namespace_);
}

}  // namespace trainyard::api
