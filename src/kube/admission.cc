#include "kube/admission.h"

#include <fmt/format.h>

#include <algorithm>

#include "api/defaults.h"
#include "api/kinds.h"
#include "api/object.h"
#include "api/validation.h"
#include "common/strings.h"

namespace trainyard::kube {
namespace {

api::Json Response(const api::Json& review, api::Json response) {
  response["uid"] = api::StringAt(review, {"request", "uid"});
  return {{"apiVersion", "admission.k8s.io/v1"},
          {"kind", "AdmissionReview"},
          {"response", std::move(response)}};
}

api::Json Allowed(const api::Json& review, std::vector<std::string> warnings = {}) {
  api::Json response = {{"allowed", true}};
  if (!warnings.empty()) response["warnings"] = warnings;
  return Response(review, std::move(response));
}

// As a Go field.ErrorList aggregates: one error as itself, several in
// brackets.
std::string Aggregate(const FieldErrors& errors) {
  std::vector<std::string> parts;
  for (const FieldError& e : errors) parts.push_back(e.ToString());
  return parts.size() == 1 ? parts[0] : "[" + Join(parts, ", ") + "]";
}

api::Json Denied(const api::Json& review, const FieldErrors& errors,
                 std::vector<std::string> warnings) {
  api::Json response = {
      {"allowed", false},
      {"status", {{"code", 403}, {"reason", "Forbidden"}, {"message", Aggregate(errors)}}}};
  if (!warnings.empty()) response["warnings"] = warnings;
  return Response(review, std::move(response));
}

// One of AdmittedKinds(), by its apiVersion and kind.
bool IsAdmitted(const api::Json& object) {
  const api::ResourceType* type = api::ResourceTypeOf(object);
  std::vector<const api::ResourceType*> kinds = AdmittedKinds();
  return type != nullptr && std::find(kinds.begin(), kinds.end(), type) != kinds.end();
}

api::Json Mutate(const api::Json& review, const api::Json& object) {
  api::DecodeResult decoded = api::DecodeObject(object);
  // What cannot be decoded is left as it is: validation refuses it.
  if (!decoded.object) return Allowed(review);
  api::SetDefaults(*decoded.object);
  api::Json defaulted = api::EncodeObject(*decoded.object);
  if (!defaulted.contains("spec") || api::ValueAt(object, "spec") == defaulted["spec"]) {
    return Allowed(review);
  }
  api::Json patch = api::Json::array({{{"op", object.contains("spec") ? "replace" : "add"},
                                       {"path", "/spec"},
                                       {"value", defaulted["spec"]}}});
  api::Json response = {
      {"allowed", true}, {"patchType", "JSONPatch"}, {"patch", Base64Encode(patch.dump())}};
  return Response(review, std::move(response));
}

api::Json Validate(const api::Json& review, const api::Json& object) {
  api::CheckedObject checked = api::DecodeAndValidate(object);
  FieldErrors errors;
  std::vector<std::string> warnings = checked.result.warnings;
  for (FieldError& e : checked.result.errors) {
    if (e.type == FieldErrorType::kUnknownField) {
      warnings.push_back(e.ToString());
    } else {
      errors.push_back(std::move(e));
    }
  }
  const api::Json* old = api::FindAt(review, {"request", "oldObject"});
  if (api::StringAt(review, {"request", "operation"}) == "UPDATE" && old != nullptr &&
      old->is_object() && checked.object) {
    api::DecodeResult before = api::DecodeObject(*old);
    if (before.object) {
      api::SetDefaults(*before.object);
      for (FieldError& e : api::ValidateUpdate(*before.object, *checked.object)) {
        errors.push_back(std::move(e));
      }
    }
  }
  if (errors.empty() && !checked.object) {
    errors.push_back(
        FieldError::Invalid(FieldPath("kind"), api::StringAt(object, "kind"), "cannot be decoded"));
  }
  if (!errors.empty()) return Denied(review, errors, std::move(warnings));
  return Allowed(review, std::move(warnings));
}

}  // namespace

std::vector<const api::ResourceType*> AdmittedKinds() {
  std::vector<const api::ResourceType*> kinds;
  for (const api::KindInfo& info : api::AllKinds()) {
    kinds.push_back(api::ResourceTypeOfKind(info.name));
  }
  kinds.push_back(api::ResourceTypeOfKind("Experiment"));
  return kinds;
}

std::string WebhookPath(std::string_view kind, bool mutate) {
  const api::ResourceType* type = api::ResourceTypeOfKind(kind);
  return fmt::format("/{}-kubeflow-org-{}-{}", mutate ? "mutate" : "validate",
                     type != nullptr ? type->version : "v1", AsciiLower(kind));
}

api::Json AnswerAdmission(const api::Json& review, bool mutate) {
  const api::Json* object = api::FindAt(review, {"request", "object"});
  // Not a job or experiment (or a DELETE, which carries no object): not
  // ours to judge.
  if (object == nullptr || !object->is_object() || !IsAdmitted(*object)) return Allowed(review);
  return mutate ? Mutate(review, *object) : Validate(review, *object);
}

}  // namespace trainyard::kube
