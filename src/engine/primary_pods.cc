#include "engine/primary_pods.h"

#include "api/object.h"
#include "api/pod_object.h"
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

Result<std::vector<std::string>> TrainJobPodOwners(const store::ObjectReader& store,
                                                   const api::Json& train_job) {
  std::vector<std::string> jobsets, jobs;
  RETURN_IF_ERROR(store.ScanOwnedBy("JobSet", api::StringAt(train_job, {"metadata", "uid"}),
                                    [&](const api::Json& jobset) {
                                      jobsets.push_back(api::StringAt(jobset, {"metadata", "uid"}));
                                    }));
  for (const std::string& jobset : jobsets) {
    RETURN_IF_ERROR(store.ScanOwnedBy("Job", jobset, [&](const api::Json& job) {
      jobs.push_back(api::StringAt(job, {"metadata", "uid"}));
    }));
  }
  return jobs;
}

Result<std::vector<api::Json>> PrimaryPodsOf(const store::ObjectStore& store,
                                             const api::Trial& trial) {
  std::vector<api::Json> pods;
  Result<api::Json> job = store.Get(controller::TrialJobKey(trial));
  if (!job.ok()) return pods;
  // A TrainJob's pods are its JobSet's Jobs': theirs by ownership, not by
  // the trial's label, which the runtime's pod templates do not carry.
  if (api::StringAt(*job, "kind") == "TrainJob") {
    ASSIGN_OR_RETURN(std::vector<std::string> owners, TrainJobPodOwners(store, *job));
    for (const std::string& owner : owners) {
      RETURN_IF_ERROR(store.ScanOwnedBy("Pod", owner, [&](const api::Json& pod) {
        if (MatchesLabels(pod, trial.spec.primary_pod_labels)) pods.push_back(pod);
      }));
    }
    return pods;
  }
  std::string uid = api::StringAt(*job, {"metadata", "uid"});
  RETURN_IF_ERROR(store.ScanOwnedBy("Pod", uid, [&](const api::Json& pod) {
    if (api::StringAt(pod, {"metadata", "labels", std::string(api::kTrialLabel).c_str()}) ==
            trial.metadata.name &&
        MatchesLabels(pod, trial.spec.primary_pod_labels)) {
      pods.push_back(pod);
    }
  }));
  return pods;
}

}  // namespace trainyard::engine
