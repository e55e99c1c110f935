// PersistentVolumeClaims on this machine, as a cluster's volume binder,
// provisioner and pvc-protection controller would treat them together:
// each claim is bound at once to a directory of its own under the claims
// folder (<claims>/<namespace>/<claim>), which outlives every pod, job and
// run that uses it and is never removed by trainyard (the Retain reclaim
// policy: the data is the user's). A claim carries the
// kubernetes.io/pvc-protection finalizer, so one deleted while a pod that
// has not ended uses it stays, Terminating, until that pod ends or goes.
// Pods are its kind too: a pod that ended or went looks again at its
// namespace's claims that wait to be deleted.
#pragma once

#include <string>
#include <vector>

#include "controller/reconciler.h"

namespace trainyard::engine {

inline constexpr std::string_view kClaimProtectionFinalizer = "kubernetes.io/pvc-protection";

struct ClaimReconcilerOptions {
  store::ObjectStore* store = nullptr;
  const Clock* clock = nullptr;
  std::string claims_dir;
};

class ClaimReconciler final : public controller::Reconciler {
 public:
  explicit ClaimReconciler(ClaimReconcilerOptions options) : options_(std::move(options)) {}

  std::vector<std::string> Kinds() const override { return {"PersistentVolumeClaim", "Pod"}; }
  Result<controller::ReconcileResult> Reconcile(const store::ObjectKey& key) override;

 private:
  Status ReconcileClaim(api::Json claim);
  // Binds a claim that is not yet: its directory, then its status.
  Status Bind(const api::Json& claim);
  // A claim being deleted goes once no pod that has not ended uses it.
  Status ReleaseIfUnused(api::Json claim);

  ClaimReconcilerOptions options_;
};

}  // namespace trainyard::engine
