#include "controller/trainjob_admission.h"

#include <fmt/format.h>

#include <cctype>
#include <map>

#include "api/object.h"
#include "api/registry.h"
#include "api/trainer_kinds.h"
#include "api/validation.h"
#include "api/well_known.h"

namespace trainyard::controller {

Result<std::optional<RuntimeSource>> ReadRuntime(const store::ObjectReader& store,
                                                 const api::RuntimeRef& ref,
                                                 const std::string& namespace_) {
  bool namespaced = api::IsNamespacedKind(ref.kind);
  Result<api::Json> stored = store.Get({ref.kind, namespaced ? namespace_ : "", ref.name});
  if (stored.status().code() == StatusCode::kNotFound) return std::optional<RuntimeSource>();
  if (!stored.ok()) return stored.status();
  api::CheckedObject checked = api::DecodeAndValidate(*stored);
  if (!checked.object) return InvalidArgumentError(ref.kind + " " + ref.name + " cannot be read");
  return std::optional<RuntimeSource>(
      RuntimeSource{.kind = ref.kind,
                    .meta = api::Metadata(*checked.object),
                    .spec = api::TrainingRuntimeFieldsOf(*checked.object).spec});
}

Result<Admission> AdmitTrainJob(const store::ObjectReader& store, const api::Object& trainjob,
                                bool update) {
  Admission out;
  const auto& job = std::get<api::TrainJob>(trainjob);
  const api::ObjectMeta& meta = job.metadata;
  const api::RuntimeRef& ref = job.spec.runtime_ref;
  FieldPath path = FieldPath("spec").Child("runtimeRef");
  ASSIGN_OR_RETURN(std::optional<RuntimeSource> runtime, ReadRuntime(store, ref, meta.namespace_));
  if (!runtime) {
    if (update) return out;
    // "trainingruntimes.trainer.kubeflow.org ... specified trainingRuntime"
    const api::ResourceType* type = api::ResourceTypeOfKind(ref.kind);
    std::string qualified = type != nullptr ? type->Qualified() : ref.kind;
    std::string camel = ref.kind;
    if (!camel.empty()) camel[0] = static_cast<char>(std::tolower(camel[0]));
    out.errors.push_back(FieldError::InvalidRendered(
        path, "",
        fmt::format("{} \"{}\" not found: specified {} must be created before the TrainJob is "
                    "created",
                    qualified, ref.name, camel)));
    return out;
  }
  const RuntimeSource& found = *runtime;
  auto support = found.meta.labels.find(std::string(api::kRuntimeSupportLabel));
  if (support != found.meta.labels.end() && support->second == "deprecated") {
    out.warnings.push_back(fmt::format(
        "Referenced {} \"{}\" is deprecated and will be removed in a future release of Kubeflow "
        "Trainer",
        found.kind, ref.name));
  }
  out.errors = CheckAgainstRuntime({.meta = meta, .spec = job.spec}, found);
  return out;
}

Result<Admission> AdmitAgainstOthers(const store::ObjectReader& store,
                                     const api::ResourceType& type, const api::Json& object,
                                     bool update) {
  using Admit = Result<Admission> (*)(const store::ObjectReader&, const api::Object&, bool);
  // By resource, named as a webhook's rules name it; found once, so that a
  // write costs one pointer lookup.
  static const std::map<const api::ResourceType*, Admit> kAdmissions = {
      {api::ResolveResourceType("trainjobs.trainer.kubeflow.org"), AdmitTrainJob}};
  auto it = kAdmissions.find(&type);
  if (it == kAdmissions.end()) return Admission{};
  api::CheckedObject decoded = api::DecodeAndValidate(object);
  if (!decoded.object) return Admission{};
  return it->second(store, *decoded.object, update);
}

}  // namespace trainyard::controller
