#include "controller/owned.h"

#include <vector>

#include "api/registry.h"

namespace trainyard::controller {

Status DeleteIfPresent(store::ObjectStore& store, const store::ObjectKey& key) {
  Result<api::Json> gone = store.Delete(key);
  if (!gone.ok() && gone.status().code() != StatusCode::kNotFound) return gone.status();
  return OkStatus();
}

Status DeleteDependents(store::ObjectStore& store, const std::string& owner_uid) {
  if (owner_uid.empty()) return OkStatus();
  std::vector<store::ObjectKey> dependents;
  for (const api::ResourceType& type : api::AllResourceTypes()) {
    RETURN_IF_ERROR(store.ScanOwnedBy(type.kind, owner_uid, [&](const api::Json& object) {
      dependents.push_back({type.kind, api::StringAt(object, {"metadata", "namespace"}),
                            api::StringAt(object, {"metadata", "name"})});
    }));
  }
  for (const store::ObjectKey& key : dependents) RETURN_IF_ERROR(DeleteIfPresent(store, key));
  return OkStatus();
}

Result<std::set<std::string>> MissingOwners(const store::ObjectReader& store) {
  std::set<std::string> uids;
  std::set<std::string> named;
  for (const api::ResourceType& type : api::AllResourceTypes()) {
    RETURN_IF_ERROR(store.Scan(type.kind, "", [&](const api::Json& object) {
      uids.insert(api::StringAt(object, {"metadata", "uid"}));
      for (const api::Json& ref : api::ArrayRefAt(object, {"metadata", "ownerReferences"})) {
        std::string uid = api::StringAt(ref, "uid");
        if (!uid.empty()) named.insert(std::move(uid));
      }
    }));
  }
  std::set<std::string> missing;
  for (const std::string& uid : named) {
    if (!uids.contains(uid)) missing.insert(uid);
  }
  return missing;
}

}  // namespace trainyard::controller
