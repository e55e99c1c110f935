// The registry hooks of a kind kept as a CoreObject (api/core_object.h):
// its fields past metadata are decoded, defaulted and checked through a
// typed struct, and kept as the JSON that struct encodes to.
#pragma once

#include <string>
#include <string_view>

#include "api/core_object.h"
#include "api/registry.h"

namespace trainyard::api::internal {

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
    Json rest = Json::object();
    for (const auto& [key, value] : doc.items()) {
      if (key == "metadata") {
        if (!value.is_null()) Decode(value, FieldPath("metadata"), object.metadata, errors);
      } else if (key != "apiVersion" && key != "kind") {
        rest[key] = value;
      }
    }
    Typed typed;
    DecodeFields(
        rest, FieldPath(), [&](auto& v) { Typed::Fields(typed, v); }, nullptr, errors);
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
