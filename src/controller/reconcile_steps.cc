#include "controller/reconcile_steps.h"

#include <algorithm>

namespace trainyard::controller {

Result<std::vector<api::Pod>> ControlledPods(const store::ObjectReader& store,
                                             const std::string& uid) {
  std::vector<api::Pod> pods;
  Status decoded = OkStatus();
  RETURN_IF_ERROR(store.ScanOwnedBy("Pod", uid, [&](const api::Json& doc) {
    if (!decoded.ok()) return;
    Result<api::Pod> pod = api::DecodePod(doc);
    if (!pod.ok()) {
      decoded = pod.status();
      return;
    }
    const auto& owners = pod->metadata.owner_references;
    if (std::any_of(owners.begin(), owners.end(),
                    [&](const auto& o) { return o.controller.value_or(false) && o.uid == uid; })) {
      pods.push_back(std::move(*pod));
    }
  }));
  RETURN_IF_ERROR(decoded);
  return pods;
}

Status WriteStatusIfChanged(store::ObjectStore& store, api::Json& stored, api::Json status,
                            const std::function<Status()>& before) {
  auto it = stored.find("status");
  if (it != stored.end() ? *it == status : status == api::Json::object()) return OkStatus();
  if (before) RETURN_IF_ERROR(before());
  stored["status"] = std::move(status);
  return store.UpdateStatus(stored).status();
}

}  // namespace trainyard::controller
