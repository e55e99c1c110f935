#include "api/object.h"

#include <fmt/format.h>

#include <algorithm>

#include "api/misplaced_fields.h"
#include "api/object_codec.h"
#include "api/registry.h"

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

}  // namespace

Json internal::EncodeConfigMap(const ConfigMap& map) {
  Json out = Json::object();
  out["apiVersion"] = kCoreGroupVersion;
  out["kind"] = "ConfigMap";
  out["metadata"] = Encode(map.metadata);
  if (!map.data.empty()) out["data"] = Encode(map.data);
  if (!map.binary_data.empty()) out["binaryData"] = Encode(map.binary_data);
  if (map.immutable) out["immutable"] = *map.immutable;
  return out;
}

namespace {

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
                               [](const CoreObject& o) { return std::string_view(o.kind); },
                               [](const auto& o) { return std::decay_t<decltype(o)>::kKind; }},
                    object);
}

std::string_view ApiVersion(const Object& object) {
  return std::visit(
      Overloaded{[](const TrainingJob&) { return kKubeflowGroupVersion; },
                 [](const BatchJob&) { return kBatchGroupVersion; },
                 [](const ConfigMap&) { return kCoreGroupVersion; },
                 [](const PolicyObject& o) { return o.info().group_version; },
                 [](const CoreObject& o) { return std::string_view(o.api_version); },
                 [](const auto& o) { return std::decay_t<decltype(o)>::kGroupVersion; }},
      object);
}

const ObjectMeta& Metadata(const Object& object) {
  return std::visit([](const auto& o) -> const ObjectMeta& { return o.metadata; }, object);
}

bool IsNamespacedKind(std::string_view kind) {
  const ResourceType* type = ResourceTypeOfKind(kind);
  return type == nullptr || type->namespaced;
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
  const ResourceType* type = ResourceTypeOfKind(kind);
  if (type == nullptr || !type->hooks.decode) {
    // The kinds a manifest may have: jobs first, as users most often mean one.
    std::vector<std::string> kinds;
    for (ResourceRole role : {ResourceRole::kJob, ResourceRole::kConfig, ResourceRole::kPolicy,
                              ResourceRole::kTuning, ResourceRole::kWorkload}) {
      for (const ResourceType& t : AllResourceTypes()) {
        if (t.role == role && t.hooks.decode) kinds.push_back(t.kind);
      }
    }
    result.errors.push_back(FieldError::NotSupported(FieldPath("kind"), kind, kinds));
    return result;
  }
  CheckApiVersion(doc, type->GroupVersion(), result.errors);
  result.object = type->hooks.decode(doc, result.errors);
  HintMisplacedFields(kind, result.errors);
  return result;
}

Json EncodeObject(const Object& object) {
  return ResourceTypeOfKind(KindName(object))->hooks.encode(object);
}

TrainingJob internal::DecodeTrainingJobDocument(const Json& doc, JobKind kind,
                                                FieldErrors& errors) {
  CheckTopLevelKeys(doc, errors);
  return DecodeTrainingJob(doc, kind, errors);
}

BatchJob internal::DecodeBatchJobDocument(const Json& doc, FieldErrors& errors) {
  CheckTopLevelKeys(doc, errors);
  return DecodeBatchJob(doc, errors);
}

ConfigMap internal::DecodeConfigMapDocument(const Json& doc, FieldErrors& errors) {
  return DecodeConfigMap(doc, errors);
}

PolicyObject internal::DecodePolicyDocument(const Json& doc, PolicyKind kind, FieldErrors& errors) {
  PolicyObject object;
  object.kind = kind;
  DecodePolicyFields(doc, object, errors);
  return object;
}

template <class Obj>
Obj internal::DecodeKatibDocument(const Json& doc, FieldErrors& errors) {
  CheckTopLevelKeys(doc, errors);
  return DecodeKatibObject<Obj>(doc, errors);
}
template Experiment internal::DecodeKatibDocument<Experiment>(const Json&, FieldErrors&);
template Trial internal::DecodeKatibDocument<Trial>(const Json&, FieldErrors&);
template Suggestion internal::DecodeKatibDocument<Suggestion>(const Json&, FieldErrors&);

Json internal::EncodeTrainingJob(const TrainingJob& job) {
  Json spec =
      EncodeFields([&](auto& v) { TrainingJobSpec::Fields(job.spec, v, job.kind); }, nullptr);
  return EncodeTop(kKubeflowGroupVersion, job.info().name, job.metadata, std::move(spec),
                   Encode(job.status));
}

Json internal::EncodeBatchJob(const BatchJob& job) {
  return EncodeTop(kBatchGroupVersion, "Job", job.metadata, Encode(job.spec), Encode(job.status));
}

template <class Obj>
Json internal::EncodeKatib(const Obj& object) {
  return EncodeTop(kKatibGroupVersion, Obj::kKind, object.metadata, Encode(object.spec),
                   Encode(object.status));
}
template Json internal::EncodeKatib<Experiment>(const Experiment&);
template Json internal::EncodeKatib<Trial>(const Trial&);
template Json internal::EncodeKatib<Suggestion>(const Suggestion&);

bool FailedForGood(std::string_view kind, std::string_view reason) {
  const ResourceType* type = ResourceTypeOfKind(kind);
  if (type == nullptr) return true;
  const std::vector<std::string>& retried = type->retried_failure_reasons;
  return std::find(retried.begin(), retried.end(), reason) == retried.end();
}

std::optional<std::string> JobOutcome(const Json& job) {
  std::string kind = StringAt(job, "kind");
  for (const Json& c : ArrayRefAt(job, {"status", "conditions"})) {
    if (StringAt(c, "status") != "True") continue;
    std::string type = StringAt(c, "type");
    // kubeflow.org/v1's, a batch Job's and a TrainJob's, a JobSet's.
    if (type == "Succeeded" || type == "Complete" || type == "Completed") return "Succeeded";
    if (type == "Failed" && FailedForGood(kind, StringAt(c, "reason"))) return "Failed";
  }
  return std::nullopt;
}

}  // namespace trainyard::api
