#include "controller/owned.h"

#include <vector>

#include "api/json.h"
#include "api/object.h"
#include "api/registry.h"
#include "api/tracking.h"

namespace trainyard::controller {

bool ControlledBy(const api::Json& object, const std::string& uid) {
  for (const api::Json& owner : api::ArrayRefAt(object, {"metadata", "ownerReferences"})) {
    if (api::BoolAt(owner, "controller") && api::StringAt(owner, "uid") == uid) {
      return true;
    }
  }
  return false;
}

bool OwnedByName(const api::Json& object, std::string_view kind, std::string_view name) {
  for (const api::Json& owner : api::ArrayRefAt(object, {"metadata", "ownerReferences"})) {
    if (api::StringAt(owner, "kind") == kind && api::StringAt(owner, "name") == name) return true;
  }
  return false;
}

Status DeleteIfPresent(store::ObjectStore& store, const store::ObjectKey& key) {
  Result<api::Json> gone = store.Delete(key);
  if (!gone.ok() && gone.status().code() != StatusCode::kNotFound) return gone.status();
  return OkStatus();
}

namespace {

// Whether `object` names an owner, other than `gone_uid`, that still
// exists: Kubernetes keeps a dependent until its last owner is gone.
bool AnotherOwnerLives(const store::ObjectReader& store, const api::Json& object,
                       const std::string& gone_uid) {
  std::string ns = api::StringAt(object, {"metadata", "namespace"});
  for (const api::Json& ref : api::ArrayRefAt(object, {"metadata", "ownerReferences"})) {
    std::string uid = api::StringAt(ref, "uid");
    if (uid.empty() || uid == gone_uid) continue;
    std::string kind = api::StringAt(ref, "kind");
    Result<api::Json> owner =
        store.Get({kind, api::IsNamespacedKind(kind) ? ns : "", api::StringAt(ref, "name")});
    if (owner.ok() && api::StringAt(*owner, {"metadata", "uid"}) == uid) return true;
  }
  return false;
}

}  // namespace

Status DeleteDependents(store::ObjectStore& store, const std::string& owner_uid) {
  if (owner_uid.empty()) return OkStatus();
  // Copied out first: a scan's visitor must not call the store.
  std::vector<std::pair<store::ObjectKey, api::Json>> dependents;
  std::vector<std::string> kinds;
  for (const api::ResourceType& type : api::AllResourceTypes()) kinds.push_back(type.kind);
  // A job's MLflow run, which no API resource serves (api/tracking.h).
  kinds.emplace_back(api::kTrackingRunKind);
  for (const std::string& kind : kinds) {
    RETURN_IF_ERROR(store.ScanOwnedBy(kind, owner_uid, [&](const api::Json& object) {
      dependents.push_back({{kind, api::StringAt(object, {"metadata", "namespace"}),
                             api::StringAt(object, {"metadata", "name"})},
                            object});
    }));
  }
  for (const auto& [key, object] : dependents) {
    if (!AnotherOwnerLives(store, object, owner_uid)) RETURN_IF_ERROR(DeleteIfPresent(store, key));
  }
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
