#include "api/pod_object.h"

#include "common/strings.h"

namespace trainyard::api {

bool IsPodObject(const Json& document) { return StringAt(document, "kind") == "Pod"; }

Result<Pod> DecodePod(const Json& document) {
  FieldErrors errors;
  Pod pod;
  if (!IsPodObject(document)) {
    return InvalidArgumentError("not a Pod");
  }
  auto field = [&](const char* key) -> const Json* {
    auto it = document.find(key);
    return it == document.end() || it->is_null() ? nullptr : &*it;
  };
  if (const Json* meta = field("metadata"))
    Decode(*meta, FieldPath("metadata"), pod.metadata, errors);
  if (const Json* spec = field("spec")) Decode(*spec, FieldPath("spec"), pod.spec, errors);
  if (const Json* status = field("status"))
    Decode(*status, FieldPath("status"), pod.status, errors);
  if (!errors.empty()) {
    std::vector<std::string> lines;
    for (const FieldError& e : errors) lines.push_back(e.ToString());
    return InvalidArgumentError(Join(lines, "; "));
  }
  return pod;
}

Json EncodePodStatus(const PodStatus& status) {
  Json out = Encode(status);
  // Fields core/v1 always serialises (no omitempty), which typed clients
  // insist on: Kubernetes' python client refuses a ContainerStatus without
  // imageID or restartCount, and a terminated state without exitCode, even
  // when they are "" or 0.
  for (const char* list : {"initContainerStatuses", "containerStatuses"}) {
    auto statuses = out.find(list);
    if (statuses == out.end()) continue;
    for (Json& c : *statuses) {
      c.emplace("ready", false);
      c.emplace("restartCount", 0);
      c.emplace("image", "");
      c.emplace("imageID", "");
      for (const char* state : {"state", "lastState"}) {
        auto it = c.find(state);
        if (it != c.end() && it->contains("terminated")) (*it)["terminated"].emplace("exitCode", 0);
      }
    }
  }
  return out;
}

Json EncodePod(const Pod& pod) {
  Json out = Json::object();
  out["apiVersion"] = "v1";
  out["kind"] = "Pod";
  out["metadata"] = Encode(pod.metadata);
  out["spec"] = Encode(pod.spec);
  Json status = EncodePodStatus(pod.status);
  if (!status.empty()) out["status"] = std::move(status);
  return out;
}

}  // namespace trainyard::api
