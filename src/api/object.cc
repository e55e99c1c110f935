#include "api/object.h"

#include <fmt/format.h>

namespace trainyard::api {
namespace {

template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <class... F>
Overloaded(F...) -> Overloaded<F...>;  // clang 14 needs the guide

Json EncodeTop(std::string_view api_version, std::string_view kind, const ObjectMeta& meta,
               Json spec, Json status) {
  Json out = Json::object();
  out["apiVersion"] = api_version;
  out["kind"] = kind;
  out["metadata"] = Encode(meta);
  out["spec"] = std::move(spec);
  if (!status.empty()) out["status"] = std::move(status);
  return out;
}

// The fields a top-level document may have besides metadata/spec/status.
void CheckTopLevelKeys(const Json& doc, FieldErrors& errors) {
  HandleUnknownKeys(doc, FieldPath(), {"apiVersion", "kind", "metadata", "spec", "status"}, nullptr,
                    errors);
}

// Decodes a document's metadata, spec (through `decode_spec`) and status.
template <class Obj, class DecodeSpec>
void DecodeBody(const Json& doc, Obj& object, DecodeSpec&& decode_spec, FieldErrors& errors) {
  auto field = [&](const char* key) -> const Json* {
    auto it = doc.find(key);
    return it == doc.end() || it->is_null() ? nullptr : &*it;
  };
  if (const Json* meta = field("metadata"))
    Decode(*meta, FieldPath("metadata"), object.metadata, errors);
  if (const Json* spec = field("spec")) {
    decode_spec(*spec, FieldPath("spec"));
  } else {
    errors.push_back(FieldError::Required(FieldPath("spec")));
  }
  if (const Json* status = field("status"))
    Decode(*status, FieldPath("status"), object.status, errors);
}

TrainingJob DecodeTrainingJob(const Json& doc, JobKind kind, FieldErrors& errors) {
  TrainingJob job;
  job.kind = kind;
  auto decode_spec = [&](const Json& spec, const FieldPath& path) {
    DecodeFields(
        spec, path, [&](auto& v) { TrainingJobSpec::Fields(job.spec, v, kind); }, nullptr, errors);
  };
  DecodeBody(doc, job, decode_spec, errors);
  return job;
}

BatchJob DecodeBatchJob(const Json& doc, FieldErrors& errors) {
  BatchJob job;
  auto decode_spec = [&](const Json& spec, const FieldPath& path) {
    Decode(spec, path, job.spec, errors);
  };
  DecodeBody(doc, job, decode_spec, errors);
  return job;
}

void CheckApiVersion(const Json& doc, std::string_view expected, FieldErrors& errors);

// Katib's kinds: typed spec and status under kubeflow.org/v1beta1.
template <class Obj>
Obj DecodeKatibObject(const Json& doc, FieldErrors& errors) {
  Obj object;
  auto decode_spec = [&](const Json& spec, const FieldPath& path) {
    Decode(spec, path, object.spec, errors);
  };
  DecodeBody(doc, object, decode_spec, errors);
  return object;
}

template <class Obj>
std::optional<Obj> DecodeKatibKind(const Json& doc, std::string_view kind, FieldErrors& errors) {
  if (kind != Obj::kKind) return std::nullopt;
  CheckApiVersion(doc, kKatibGroupVersion, errors);
  return DecodeKatibObject<Obj>(doc, errors);
}

// A ConfigMap has no spec: its data sits at the top.
ConfigMap DecodeConfigMap(const Json& doc, FieldErrors& errors) {
  ConfigMap map;
  HandleUnknownKeys(doc, FieldPath(),
                    {"apiVersion", "kind", "metadata", "data", "binaryData", "immutable"}, nullptr,
                    errors);
  auto decode = [&](const char* key, auto& field) {
    auto it = doc.find(key);
    if (it != doc.end() && !it->is_null()) Decode(*it, FieldPath(key), field, errors);
  };
  decode("metadata", map.metadata);
  decode("data", map.data);
  decode("binaryData", map.binary_data);
  decode("immutable", map.immutable);
  return map;
}

Json EncodeConfigMap(const ConfigMap& map) {
  Json out = Json::object();
  out["apiVersion"] = kCoreGroupVersion;
  out["kind"] = "ConfigMap";
  out["metadata"] = Encode(map.metadata);
  if (!map.data.empty()) out["data"] = Encode(map.data);
  if (!map.binary_data.empty()) out["binaryData"] = Encode(map.binary_data);
  if (map.immutable) out["immutable"] = *map.immutable;
  return out;
}

// Checks apiVersion against the one `kind` lives in.
void CheckApiVersion(const Json& doc, std::string_view expected, FieldErrors& errors) {
  auto it = doc.find("apiVersion");
  if (it == doc.end() || it->is_null()) {
    errors.push_back(FieldError::Required(FieldPath("apiVersion"),
                                          fmt::format("set it to {}", Quote(expected))));
  } else if (!it->is_string()) {
    errors.push_back(TypeError(FieldPath("apiVersion"), *it, "a string"));
  } else if (it->get<std::string>() != expected) {
    errors.push_back(FieldError::NotSupported(FieldPath("apiVersion"), it->get<std::string>(),
                                              {std::string(expected)}));
  }
}

}  // namespace

std::string_view KindName(const Object& object) {
  return std::visit(Overloaded{[](const TrainingJob& j) { return j.info().name; },
                               [](const BatchJob&) { return std::string_view("Job"); },
                               [](const ConfigMap&) { return std::string_view("ConfigMap"); },
                               [](const PolicyObject& o) { return o.info().name; },
                               [](const auto& o) { return std::decay_t<decltype(o)>::kKind; }},
                    object);
}

std::string_view ApiVersion(const Object& object) {
  return std::visit(Overloaded{[](const TrainingJob&) { return kKubeflowGroupVersion; },
                               [](const BatchJob&) { return kBatchGroupVersion; },
                               [](const ConfigMap&) { return kCoreGroupVersion; },
                               [](const PolicyObject& o) { return o.info().group_version; },
                               [](const auto&) { return kKatibGroupVersion; }},
                    object);
}

const ObjectMeta& Metadata(const Object& object) {
  return std::visit([](const auto& o) -> const ObjectMeta& { return o.metadata; }, object);
}

bool IsJob(const Object& object) {
  return std::holds_alternative<TrainingJob>(object) || std::holds_alternative<BatchJob>(object);
}

bool IsNamespacedKind(std::string_view kind) {
  if (kind == "Namespace" || kind == "Node") return false;
  const PolicyKindInfo* policy = PolicyKindFromName(kind);
  return policy == nullptr || policy->namespaced;
}

std::string DisplayName(const Object& object) {
  const ObjectMeta& meta = Metadata(object);
  std::string name = meta.name.empty() ? meta.generate_name + "*" : meta.name;
  if (meta.namespace_.empty()) return fmt::format("{} {}", KindName(object), name);
  return fmt::format("{} {}/{}", KindName(object), meta.namespace_, name);
}

DecodeResult DecodeObject(const Json& doc) {
  DecodeResult result;
  if (!doc.is_object()) {
    result.errors.push_back(FieldError::InvalidRendered(
        FieldPath("<document>"), RenderValue(doc),
        "a manifest must be an object with apiVersion, kind, metadata and spec"));
    return result;
  }
  auto kind_it = doc.find("kind");
  if (kind_it == doc.end() || kind_it->is_null()) {
    result.errors.push_back(FieldError::Required(FieldPath("kind")));
    return result;
  }
  if (!kind_it->is_string()) {
    result.errors.push_back(TypeError(FieldPath("kind"), *kind_it, "a string"));
    return result;
  }
  std::string kind = kind_it->get<std::string>();
  if (const PolicyKindInfo* policy = PolicyKindFromName(kind)) {
    CheckApiVersion(doc, policy->group_version, result.errors);
    PolicyObject object;
    object.kind = policy->kind;
    DecodePolicyFields(doc, object, result.errors);
    result.object = std::move(object);
    return result;
  }
  if (kind == "ConfigMap") {
    CheckApiVersion(doc, kCoreGroupVersion, result.errors);
    result.object = DecodeConfigMap(doc, result.errors);
    return result;
  }
  CheckTopLevelKeys(doc, result.errors);
  if (auto e = DecodeKatibKind<Experiment>(doc, kind, result.errors)) {
    result.object = std::move(*e);
  } else if (auto t = DecodeKatibKind<Trial>(doc, kind, result.errors)) {
    result.object = std::move(*t);
  } else if (auto s = DecodeKatibKind<Suggestion>(doc, kind, result.errors)) {
    result.object = std::move(*s);
  } else if (std::optional<JobKind> job_kind = JobKindFromName(kind)) {
    CheckApiVersion(doc, kKubeflowGroupVersion, result.errors);
    result.object = DecodeTrainingJob(doc, *job_kind, result.errors);
  } else if (kind == "Job") {
    CheckApiVersion(doc, kBatchGroupVersion, result.errors);
    result.object = DecodeBatchJob(doc, result.errors);
  } else {
    std::vector<std::string> kinds = SupportedKindNames();
    for (const PolicyKindInfo& info : AllPolicyKinds()) kinds.emplace_back(info.name);
    for (const char* katib : {"Experiment", "Trial", "Suggestion"}) kinds.emplace_back(katib);
    result.errors.push_back(FieldError::NotSupported(FieldPath("kind"), kind, kinds));
  }
  return result;
}

Json EncodeObject(const Object& object) {
  return std::visit(
      Overloaded{[](const TrainingJob& job) {
                   Json spec = EncodeFields(
                       [&](auto& v) { TrainingJobSpec::Fields(job.spec, v, job.kind); }, nullptr);
                   return EncodeTop(kKubeflowGroupVersion, job.info().name, job.metadata,
                                    std::move(spec), Encode(job.status));
                 },
                 [](const BatchJob& job) {
                   return EncodeTop(kBatchGroupVersion, "Job", job.metadata, Encode(job.spec),
                                    Encode(job.status));
                 },
                 [](const ConfigMap& map) { return EncodeConfigMap(map); },
                 [](const PolicyObject& o) { return EncodePolicyObject(o); },
                 [](const auto& o) {
                   return EncodeTop(kKatibGroupVersion, std::decay_t<decltype(o)>::kKind,
                                    o.metadata, Encode(o.spec), Encode(o.status));
                 }},
      object);
}

}  // namespace trainyard::api
