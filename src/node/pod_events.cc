#include "node/pod_events.h"

#include <fmt/format.h>

#include "api/json.h"
#include "common/strings.h"
#include "store/object_store.h"

namespace trainyard::node {
namespace {

constexpr const char* kReasons[] = {
    "Started", "Killing", "BackOff",       "OOMKilling",        "Failed",
    "Pulling", "Pulled",  "InspectFailed", "ErrImageNeverPull", "FailedToRetrieveImagePullSecret"};

// Named by the pod's uid, so that the events of a pod are found without a
// scan, and a new pod under an old name has none of the old one's.
std::string EventName(const std::string& uid, const std::string& container,
                      const std::string& reason) {
  return fmt::format("{}.{}.{}", uid, container, AsciiLower(reason));
}

}  // namespace

Status RecordContainerEvent(store::ObjectStore& store, const Clock& clock, const std::string& node,
                            const ContainerEvent& e) {
  std::string name = EventName(e.uid, e.container, e.reason);
  std::string now = FormatRfc3339(clock.Now());
  Result<api::Json> stored = store.Get({"Event", e.namespace_, name});
  if (stored.ok()) {
    api::Json event = std::move(*stored);
    event["count"] = api::IntAt(event, "count", 1) + 1;
    event["lastTimestamp"] = now;
    event["message"] = e.message;
    return store.Update(std::move(event)).status();
  }
  if (stored.status().code() != StatusCode::kNotFound) return stored.status();
  api::Json event = {
      {"apiVersion", "v1"},
      {"kind", "Event"},
      {"metadata", {{"name", name}, {"namespace", e.namespace_}}},
      {"involvedObject",
       {{"apiVersion", "v1"},
        {"kind", "Pod"},
        {"name", e.pod},
        {"namespace", e.namespace_},
        {"uid", e.uid},
        {"fieldPath",
         fmt::format("spec.{}{{{}}}", e.init ? "initContainers" : "containers", e.container)}}},
      {"reason", e.reason},
      {"message", e.message},
      {"type", e.type},
      {"source", {{"component", "kubelet"}, {"host", node}}},
      {"reportingComponent", "kubelet"},
      {"reportingInstance", node},
      {"firstTimestamp", now},
      {"lastTimestamp", now},
      {"count", 1}};
  return store.Create(std::move(event)).status();
}

Status DeletePodEvents(store::ObjectStore& store, const std::string& namespace_,
                       const std::string& uid, const std::vector<std::string>& containers) {
  for (const std::string& container : containers) {
    for (const char* reason : kReasons) {
      Result<api::Json> deleted =
          store.Delete({"Event", namespace_, EventName(uid, container, reason)});
      if (!deleted.ok() && deleted.status().code() != StatusCode::kNotFound)
        return deleted.status();
    }
  }
  return OkStatus();
}

}  // namespace trainyard::node
