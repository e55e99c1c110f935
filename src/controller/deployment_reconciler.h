// The apps/v1 Deployment controller, for what one machine needs of it:
// `replicas` pods of the template kept running (restartPolicy Always: the
// node agent restarts their containers; a pod that ends anyway is
// replaced), scaled up and down, and a template change rolled out. The
// pods are the Deployment's own, named and labelled as a ReplicaSet's
// would be (<name>-<pod-template-hash>-<suffix>, pod-template-hash), with
// no ReplicaSet object between (docs/run.md says so).
//
// A rollout: Recreate stops the old pods, then starts the new; RollingUpdate
// starts all the new ones, then stops the old once the new are ready
// (maxSurge and maxUnavailable are not read: validation says so). paused
// holds the pods as they are. Status as Kubernetes writes it: replicas,
// updatedReplicas, readyReplicas, availableReplicas, unavailableReplicas,
// observedGeneration, and the Available and Progressing conditions.
#pragma once

#include <random>

#include "common/clock.h"
#include "controller/reconciler.h"
#include "store/object_store.h"

namespace trainyard::controller {

struct DeploymentReconcilerOptions {
  store::ObjectStore* store = nullptr;
  const Clock* clock = nullptr;
};

class DeploymentReconciler final : public Reconciler {
 public:
  explicit DeploymentReconciler(DeploymentReconcilerOptions options)
      : options_(std::move(options)) {}

  std::vector<std::string> Kinds() const override { return {"Deployment"}; }
  Result<ReconcileResult> Reconcile(const store::ObjectKey& key) override;

 private:
  DeploymentReconcilerOptions options_;
  std::mt19937 random_{std::random_device{}()};  // pod name suffixes
};

// The pod-template-hash of a template (its JSON): Kubernetes' alphabet, no
// vowels, so it never spells a word.
std::string PodTemplateHash(const api::Json& pod_template);

}  // namespace trainyard::controller
