#include "controller/tracked_owner.h"

#include "api/tracking.h"
#include "api/well_known.h"
#include "store/object_lookup.h"

namespace trainyard::controller {

void MarkTrackedOwner(const store::ObjectReader& store, api::Pod& pod) {
  std::string key(api::kTrackedOwnerAnnotation);
  pod.metadata.annotations.erase(key);
  const api::OwnerReference* controller = nullptr;
  for (const api::OwnerReference& ref : pod.metadata.owner_references) {
    if (ref.controller.value_or(false)) controller = &ref;
  }
  if (controller == nullptr) return;
  std::optional<api::TrackedOwner> owner = api::TrackedOwnerUp(
      controller->kind, controller->name, store::LookupIn(store, pod.metadata.namespace_));
  if (owner) pod.metadata.annotations[key] = api::FormatTrackedOwner(*owner);
}

}  // namespace trainyard::controller
