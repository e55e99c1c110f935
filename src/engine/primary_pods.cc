#include "engine/primary_pods.h"

#include "api/object.h"
#include "api/pod_object.h"
#include "api/registry.h"
#include "api/well_known.h"
#include "controller/trial_reconciler.h"

namespace trainyard::engine {
namespace {

bool MatchesLabels(const api::Json& pod, const std::map<std::string, std::string>& wanted) {
  const api::Json& labels = api::ObjectAt(pod, {"metadata", "labels"});
  for (const auto& [key, value] : wanted) {
    auto it = labels.find(key);
    if (it == labels.end() || *it != value) return false;
  }
  return true;
}

}  // namespace

Result<std::vector<std::string>> PodOwnersOf(const store::ObjectReader& store,
                                             const api::Json& job) {
  std::vector<std::string> owners = {api::StringAt(job, {"metadata", "uid"})};
  const api::JobShape* shape = api::JobShapeOf(api::StoreKindOf(job));
  if (shape == nullptr) return owners;
  for (const std::string& kind : shape->pod_owner_kinds) {
    std::vector<std::string> next;
    for (const std::string& owner : owners) {
      RETURN_IF_ERROR(store.ScanOwnedBy(kind, owner, [&](const api::Json& child) {
        next.push_back(api::StringAt(child, {"metadata", "uid"}));
      }));
    }
    owners = std::move(next);
  }
  return owners;
}

Result<std::vector<api::Json>> PrimaryPodsOf(const store::ObjectStore& store,
                                             const api::Trial& trial) {
  std::vector<api::Json> pods;
  Result<api::Json> job = store.Get(controller::TrialJobKey(trial));
  if (!job.ok()) return pods;
  // Pods that are not the job's own (a TrainJob's are its JobSet's Jobs')
  // are found by ownership, not by the trial's label, which the pod
  // templates they come from do not carry.
  const api::JobShape* shape = api::JobShapeOf(api::StoreKindOf(*job));
  bool own_pods = shape == nullptr || shape->pod_owner_kinds.empty();
  ASSIGN_OR_RETURN(std::vector<std::string> owners, PodOwnersOf(store, *job));
  for (const std::string& owner : owners) {
    RETURN_IF_ERROR(store.ScanOwnedBy("Pod", owner, [&](const api::Json& pod) {
      bool trials = !own_pods || api::StringAt(pod, {"metadata", "labels",
                                                     std::string(api::kTrialLabel).c_str()}) ==
                                     trial.metadata.name;
      if (trials && MatchesLabels(pod, trial.spec.primary_pod_labels)) pods.push_back(pod);
    }));
  }
  return pods;
}

}  // namespace trainyard::engine
