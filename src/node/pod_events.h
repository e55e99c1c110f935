// The events the kubelet records about a pod's containers, as `kubectl
// describe pod` and `kubectl get events` show them: Started, Killing,
// BackOff, OOMKilling and Failed; with image roots Pulling, Pulled,
// InspectFailed and ErrImageNeverPull; each with the container's field path
// and source `kubelet`. One event per pod, container and reason, counted
// up as it happens again (a crash loop makes one BackOff, not thousands),
// and deleted with the pod.
#pragma once

#include <string>
#include <vector>

#include "common/clock.h"
#include "store/object_store.h"

namespace trainyard::node {

struct ContainerEvent {
  std::string namespace_;
  std::string pod;
  std::string uid;  // the pod's
  std::string container;
  bool init = false;  // an init container's (its field path says so)
  std::string type;   // Normal | Warning
  std::string reason;
  std::string message;
};

// Records `event`, or counts one more of it.
Status RecordContainerEvent(store::ObjectStore& store, const Clock& clock, const std::string& node,
                            const ContainerEvent& event);

// Deletes the events of the pod `uid` (in `namespace_`) about `containers`.
Status DeletePodEvents(store::ObjectStore& store, const std::string& namespace_,
                       const std::string& uid, const std::vector<std::string>& containers);

}  // namespace trainyard::node
