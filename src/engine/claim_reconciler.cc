#include "engine/claim_reconciler.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "api/json.h"
#include "api/reflect.h"
#include "controller/events.h"
#include "node/volumes.h"

namespace trainyard::engine {
namespace {

bool Deleting(const api::Json& object) {
  return !api::StringAt(object, {"metadata", "deletionTimestamp"}).empty();
}

bool HasFinalizer(const api::Json& object) {
  const api::Json& finalizers = api::ArrayRefAt(object, {"metadata", "finalizers"});
  return std::find(finalizers.begin(), finalizers.end(), kClaimProtectionFinalizer) !=
         finalizers.end();
}

bool Ended(const api::Json& pod) {
  std::string phase = api::StringAt(pod, {"status", "phase"});
  return phase == "Succeeded" || phase == "Failed";
}

// Whether a pod placed on a node and not ended mounts the claim, as the
// pvc-protection controller counts them (a pod still waiting for room
// holds nothing: the node agent starts none on a claim being deleted).
Result<bool> InUse(const store::ObjectStore& store, const std::string& namespace_,
                   const std::string& claim) {
  bool used = false;
  RETURN_IF_ERROR(store.Scan("Pod", namespace_, [&](const api::Json& pod) {
    if (used || Ended(pod) || api::StringAt(pod, {"spec", "nodeName"}).empty()) return;
    for (const api::Json& volume : api::ArrayRefAt(pod, {"spec", "volumes"})) {
      if (api::StringAt(volume, {"persistentVolumeClaim", "claimName"}) == claim) used = true;
    }
  }));
  return used;
}

}  // namespace

Result<controller::ReconcileResult> ClaimReconciler::Reconcile(const store::ObjectKey& key) {
  if (key.kind == "PersistentVolumeClaim") {
    Result<api::Json> claim = options_.store->Get(key);
    if (claim.status().code() == StatusCode::kNotFound) return controller::ReconcileResult{};
    RETURN_IF_ERROR(claim.status());
    RETURN_IF_ERROR(ReconcileClaim(std::move(*claim)));
    return controller::ReconcileResult{};
  }
  // A pod ended or went: a claim it held back may be free now. (Most pod
  // changes are neither, and cost one read.)
  Result<api::Json> pod = options_.store->Get(key);
  if (pod.ok() && !Ended(*pod)) return controller::ReconcileResult{};
  ASSIGN_OR_RETURN(store::ObjectReader::ListResult claims,
                   options_.store->List("PersistentVolumeClaim", key.namespace_));
  for (api::Json& claim : claims.items) {
    if (Deleting(claim)) RETURN_IF_ERROR(ReleaseIfUnused(std::move(claim)));
  }
  return controller::ReconcileResult{};
}

Status ClaimReconciler::ReconcileClaim(api::Json claim) {
  if (Deleting(claim)) return ReleaseIfUnused(std::move(claim));
  if (!HasFinalizer(claim)) {
    claim["metadata"]["finalizers"].push_back(kClaimProtectionFinalizer);
    ASSIGN_OR_RETURN(claim, options_.store->Update(std::move(claim)));
  }
  if (api::StringAt(claim, {"status", "phase"}) == "Bound") return OkStatus();
  return Bind(claim);
}

Status ClaimReconciler::Bind(const api::Json& claim) {
  std::string namespace_ = api::StringAt(claim, {"metadata", "namespace"});
  std::string name = api::StringAt(claim, {"metadata", "name"});
  Result<std::string> dir = node::MakeClaimDir(options_.claims_dir, namespace_, name);
  // A claim whose folder cannot be made (a full or read-only disk) stays
  // Pending and is tried again, as a provisioner retries.
  if (!dir.ok()) return UnavailableError(dir.status().message());
  api::Json status = {{"phase", "Bound"}};
  if (const api::Json* modes = api::FindAt(claim, {"spec", "accessModes"})) {
    status["accessModes"] = *modes;
  }
  if (const api::Json* storage = api::FindAt(claim, {"spec", "resources", "requests", "storage"})) {
    status["capacity"] = {{"storage", *storage}};
  }
  api::Json doc = {{"apiVersion", "v1"},
                   {"kind", "PersistentVolumeClaim"},
                   {"metadata", {{"name", name}, {"namespace", namespace_}}},
                   {"status", std::move(status)}};
  RETURN_IF_ERROR(options_.store->UpdateStatus(std::move(doc)).status());
  api::ObjectMeta meta;
  FieldErrors ignored;
  api::Decode(claim["metadata"], FieldPath("metadata"), meta, ignored);
  return controller::RecordEvent(
      *options_.store, *options_.clock,
      {.api_version = "v1", .kind = "PersistentVolumeClaim", .meta = &meta}, "Normal",
      "ProvisioningSucceeded", fmt::format("Bound to {}, kept when the claim is deleted", *dir));
}

Status ClaimReconciler::ReleaseIfUnused(api::Json claim) {
  if (!HasFinalizer(claim)) return OkStatus();  // someone else's to let go
  std::string namespace_ = api::StringAt(claim, {"metadata", "namespace"});
  std::string name = api::StringAt(claim, {"metadata", "name"});
  ASSIGN_OR_RETURN(bool used, InUse(*options_.store, namespace_, name));
  if (used) return OkStatus();
  api::Json& finalizers = claim["metadata"]["finalizers"];
  finalizers.erase(std::remove(finalizers.begin(), finalizers.end(), kClaimProtectionFinalizer),
                   finalizers.end());
  bool last = finalizers.empty();
  RETURN_IF_ERROR(options_.store->Update(std::move(claim)).status());
  if (!last) return OkStatus();
  // As the API server does when the last finalizer goes; its events go
  // with it.
  store::ObjectKey key{"PersistentVolumeClaim", namespace_, name};
  RETURN_IF_ERROR(options_.store->Delete(key).status());
  return controller::DeleteEventsOf(*options_.store, key);
}

}  // namespace trainyard::engine
