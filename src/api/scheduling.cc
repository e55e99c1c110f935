#include "api/scheduling.h"

namespace trainyard::api {
namespace {

template <class T>
T DecodeTyped(const Json& j) {
  T out;
  FieldErrors ignored;  // validation reported them when the object came in
  if (!j.is_null()) Decode(j, FieldPath("spec"), out, ignored);
  return out;
}

// Decodes `j` as T and keeps its canonical JSON.
template <class T>
Json Canonical(const Json& j, const FieldPath& path, FieldErrors& errors) {
  T typed;
  Decode(j, path, typed, errors);
  return Encode(typed);
}

}  // namespace

const std::vector<PolicyKindInfo>& AllPolicyKinds() {
  static const std::vector<PolicyKindInfo> kinds = {
      {PolicyKind::kClusterQueue, "ClusterQueue", kKueueGroupVersion, false},
      {PolicyKind::kLocalQueue, "LocalQueue", kKueueGroupVersion, true},
      {PolicyKind::kResourceFlavor, "ResourceFlavor", kKueueGroupVersion, false},
      {PolicyKind::kPriorityClass, "PriorityClass", kSchedulingGroupVersion, false, true},
      {PolicyKind::kResourceQuota, "ResourceQuota", "v1", true},
  };
  return kinds;
}

const PolicyKindInfo* PolicyKindFromName(std::string_view name) {
  for (const PolicyKindInfo& info : AllPolicyKinds()) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

const PolicyKindInfo& PolicyObject::info() const {
  return AllPolicyKinds()[static_cast<size_t>(kind)];
}

ClusterQueueSpec ClusterQueueSpecOf(const PolicyObject& o) {
  return DecodeTyped<ClusterQueueSpec>(o.spec);
}
LocalQueueSpec LocalQueueSpecOf(const PolicyObject& o) {
  return DecodeTyped<LocalQueueSpec>(o.spec);
}
ResourceFlavorSpec ResourceFlavorSpecOf(const PolicyObject& o) {
  return DecodeTyped<ResourceFlavorSpec>(o.spec);
}
ResourceQuotaSpec ResourceQuotaSpecOf(const PolicyObject& o) {
  return DecodeTyped<ResourceQuotaSpec>(o.spec);
}
PriorityClassFields PriorityClassOf(const PolicyObject& o) {
  return DecodeTyped<PriorityClassFields>(o.spec);
}

void DecodePolicyFields(const Json& doc, PolicyObject& object, FieldErrors& errors) {
  auto field = [&](const char* key) -> const Json* {
    auto it = doc.find(key);
    return it == doc.end() || it->is_null() ? nullptr : &*it;
  };
  if (const Json* meta = field("metadata"))
    Decode(*meta, FieldPath("metadata"), object.metadata, errors);
  if (const Json* status = field("status")) object.status = *status;
  if (object.kind == PolicyKind::kPriorityClass) {
    HandleUnknownKeys(doc, FieldPath(),
                      {"apiVersion", "kind", "metadata", "value", "globalDefault", "description",
                       "preemptionPolicy"},
                      nullptr, errors);
    Json fields = Json::object();
    for (const char* key : {"value", "globalDefault", "description", "preemptionPolicy"}) {
      if (const Json* v = field(key)) fields[key] = *v;
    }
    PriorityClassFields typed;
    DecodeFields(
        fields, FieldPath(), [&](auto& v) { PriorityClassFields::Fields(typed, v); }, nullptr,
        errors);
    object.spec = Encode(typed);
    return;
  }
  HandleUnknownKeys(doc, FieldPath(), {"apiVersion", "kind", "metadata", "spec", "status"}, nullptr,
                    errors);
  const Json* spec = field("spec");
  Json empty = Json::object();
  const Json& j = spec ? *spec : empty;
  FieldPath path("spec");
  switch (object.kind) {
    case PolicyKind::kClusterQueue:
      object.spec = Canonical<ClusterQueueSpec>(j, path, errors);
      break;
    case PolicyKind::kLocalQueue:
      object.spec = Canonical<LocalQueueSpec>(j, path, errors);
      break;
    case PolicyKind::kResourceFlavor:
      object.spec = Canonical<ResourceFlavorSpec>(j, path, errors);
      break;
    case PolicyKind::kResourceQuota:
      object.spec = Canonical<ResourceQuotaSpec>(j, path, errors);
      break;
    case PolicyKind::kPriorityClass:
      break;
  }
}

Json EncodePolicyObject(const PolicyObject& object) {
  const PolicyKindInfo& info = object.info();
  Json out = Json::object();
  out["apiVersion"] = info.group_version;
  out["kind"] = info.name;
  out["metadata"] = Encode(object.metadata);
  if (info.fields_at_top_level) {
    for (const auto& [key, value] : object.spec.items()) out[key] = value;
  } else {
    out["spec"] = object.spec.is_null() ? Json::object() : object.spec;
  }
  if (!object.status.is_null() && !object.status.empty()) out["status"] = object.status;
  return out;
}

}  // namespace trainyard::api
