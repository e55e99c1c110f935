// The registry hooks of a CRD-shaped kind: its fields past apiVersion, kind
// and metadata are a reflected struct's (api/reflect.h), and every unknown
// one is reported. A kind with an Object alternative of its own uses
// ReflectedHooks; one kept as a CoreObject (api/core_object.h) uses
// CoreHooks, which keep the JSON its typed struct encodes to.
#pragma once

#include <string>
#include <string_view>

#include "api/core_object.h"
#include "api/registry.h"

namespace trainyard::api::internal {

// Decodes `doc`'s metadata into `metadata` and the rest, apiVersion and
// kind aside, into `typed` through `Typed::Fields`.
template <class Typed>
void DecodeTopLevel(const Json& doc, ObjectMeta& metadata, Typed& typed, FieldErrors& errors) {
  Json rest = Json::object();
  for (const auto& [key, value] : doc.items()) {
    if (key == "metadata") {
      if (!value.is_null()) Decode(value, FieldPath("metadata"), metadata, errors);
    } else if (key != "apiVersion" && key != "kind") {
      rest[key] = value;
    }
  }
  DecodeFields(
      rest, FieldPath(), [&](auto& v) { Typed::Fields(typed, v); }, nullptr, errors);
}

// The hooks of `Obj`, an Object alternative with its kKind, kGroupVersion,
// metadata and reflected Fields.
template <class Obj>
ObjectHooks ReflectedHooks(void (*set_defaults)(Obj&),
                           void (*validate)(const Obj&, ValidationResult&)) {
  ObjectHooks hooks;
  hooks.decode = [](const Json& doc, FieldErrors& errors) -> Object {
    Obj object;
    DecodeTopLevel(doc, object.metadata, object, errors);
    return object;
  };
  hooks.set_defaults = [set_defaults](Object& object) { set_defaults(std::get<Obj>(object)); };
  hooks.validate = [validate](const Object& object, ValidationResult& out) {
    validate(std::get<Obj>(object), out);
  };
  hooks.encode = [](const Object& object) {
    const Obj& typed = std::get<Obj>(object);
    Json out = Json::object();
    out["apiVersion"] = Obj::kGroupVersion;
    out["kind"] = Obj::kKind;
    out["metadata"] = Encode(typed.metadata);
    Json fields = Encode(typed);  // items() would outlive a temporary
    for (const auto& [key, value] : fields.items()) out[key] = value;
    return out;
  };
  return hooks;
}

// The typed view of a decoded CoreObject.
template <class Typed>
Typed TypedFields(const Object& object) {
  Typed typed;
  FieldErrors ignored;  // reported when the object was decoded
  DecodeFields(
      std::get<CoreObject>(object).fields, FieldPath(), [&](auto& v) { Typed::Fields(typed, v); },
      nullptr, ignored);
  return typed;
}

template <class Typed>
ObjectHooks CoreHooks(std::string kind, void (*set_defaults)(Typed&),
                      void (*validate)(const Typed&, ValidationResult&),
                      std::string_view api_version = kCoreGroupVersion) {
  ObjectHooks hooks;
  hooks.decode = [kind, api_version = std::string(api_version)](const Json& doc,
                                                                FieldErrors& errors) -> Object {
    CoreObject object{.kind = kind, .api_version = api_version};
    Typed typed;
    DecodeTopLevel(doc, object.metadata, typed, errors);
    object.fields = Encode(typed);
    return object;
  };
  hooks.set_defaults = [set_defaults](Object& object) {
    Typed typed = TypedFields<Typed>(object);
    set_defaults(typed);
    std::get<CoreObject>(object).fields = Encode(typed);
  };
  hooks.validate = [validate](const Object& object, ValidationResult& out) {
    validate(TypedFields<Typed>(object), out);
  };
  hooks.encode = [](const Object& object) {
    const auto& core = std::get<CoreObject>(object);
    Json out = Json::object();
    out["apiVersion"] = core.api_version;
    out["kind"] = core.kind;
    out["metadata"] = Encode(core.metadata);
    for (const auto& [key, value] : core.fields.items()) out[key] = value;
    return out;
  };
  return hooks;
}

}  // namespace trainyard::api::internal
