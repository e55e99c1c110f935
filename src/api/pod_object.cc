#include "api/pod_object.h"

#include "common/strings.h"

namespace trainyard::api {

Result<Pod> DecodePod(const Json& document) {
  FieldErrors errors;
  Pod pod;
  if (!document.is_object() || document.value("kind", "") != "Pod") {
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

Json EncodePod(const Pod& pod) {
  Json out = Json::object();
  out["apiVersion"] = "v1";
  out["kind"] = "Pod";
  out["metadata"] = Encode(pod.metadata);
  out["spec"] = Encode(pod.spec);
  Json status = Encode(pod.status);
  if (!status.empty()) out["status"] = std::move(status);
  return out;
}

}  // namespace trainyard::api
