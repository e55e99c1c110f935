#include "controller/owned.h"

namespace trainyard::controller {

Status DeleteIfPresent(store::ObjectStore& store, const store::ObjectKey& key) {
  Result<api::Json> gone = store.Delete(key);
  if (!gone.ok() && gone.status().code() != StatusCode::kNotFound) return gone.status();
  return OkStatus();
}

Status DeletePodsOwnedBy(store::ObjectStore& store, const store::ObjectKey& owner) {
  std::vector<std::string> owned;
  RETURN_IF_ERROR(store.Scan("Pod", owner.namespace_, [&](const api::Json& pod) {
    const api::Json& meta = pod["metadata"];
    auto refs = meta.find("ownerReferences");
    if (refs == meta.end() || !refs->is_array()) return;
    for (const api::Json& ref : *refs) {
      if (ref.value("kind", "") == owner.kind && ref.value("name", "") == owner.name) {
        owned.push_back(meta.value("name", ""));
        return;
      }
    }
  }));
  for (const std::string& name : owned) {
    RETURN_IF_ERROR(DeleteIfPresent(store, {"Pod", owner.namespace_, name}));
  }
  return OkStatus();
}

}  // namespace trainyard::controller
