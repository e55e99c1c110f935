// Field-list reflection for the object model.
//
// Each struct lists its wire fields once, in a static template:
//
//   template <class S, class V> static void Fields(S& s, V& v) {
//     v("name", s.name);
//     v("value", s.value);
//   }
//
// and Decode/Encode below walk that list. A struct with a `Json extra` member
// keeps fields it does not model verbatim: with `kKubernetesType` set, only
// the fields Kubernetes defines for that type (kubernetes_fields.h), so a
// typo is still caught; without it, all of them. A struct without `extra`
// rejects every unknown field (the Kubeflow types and batch/v1 JobSpec, which
// are modelled completely). Unknown fields come with a "did you mean" hint.
//
// Absent and null fields leave the C++ value default; encoding omits empty
// strings, lists, maps and unset optionals, as Kubernetes' omitempty does.
// Fields whose presence matters (`replicas`, `emptyDir: {}`) are optional.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "api/json.h"
#include "api/kubernetes_fields.h"
#include "common/field_path.h"
#include "common/quantity.h"

namespace trainyard::api {

// A struct that lists its fields: it declares `static constexpr bool
// kReflected = true;` beside its Fields() template.
template <class T>
concept Reflected = requires {
  T::kReflected;
};

template <class T>
concept KeepsUnknownFields = requires(T& t) {
  { t.extra } -> std::same_as<Json&>;
};

// Renders a JSON value for an error message: strings quoted, others as JSON.
std::string RenderValue(const Json& j);

// The name of a JSON value's type, for "must be a string, not a number".
const char* JsonTypeName(const Json& j);

void Decode(const Json& j, const FieldPath& path, std::string& out, FieldErrors& errors);
void Decode(const Json& j, const FieldPath& path, bool& out, FieldErrors& errors);
void Decode(const Json& j, const FieldPath& path, int32_t& out, FieldErrors& errors);
void Decode(const Json& j, const FieldPath& path, int64_t& out, FieldErrors& errors);
void Decode(const Json& j, const FieldPath& path, double& out, FieldErrors& errors);
void Decode(const Json& j, const FieldPath& path, Quantity& out, FieldErrors& errors);
void Decode(const Json& j, const FieldPath& path, Json& out, FieldErrors& errors);

Json Encode(const std::string& v);
Json Encode(bool v);
Json Encode(int32_t v);
Json Encode(int64_t v);
Json Encode(double v);
Json Encode(const Quantity& v);
Json Encode(const Json& v);

bool IsEmpty(const std::string& v);
bool IsEmpty(const Json& v);
inline bool IsEmpty(bool) { return false; }
inline bool IsEmpty(int32_t) { return false; }
inline bool IsEmpty(int64_t) { return false; }
inline bool IsEmpty(double) { return false; }
inline bool IsEmpty(const Quantity&) { return false; }

template <class T>
bool IsEmpty(const std::optional<T>& v) {
  return !v.has_value();
}
template <class T>
bool IsEmpty(const std::vector<T>& v) {
  return v.empty();
}
template <class T>
bool IsEmpty(const std::map<std::string, T>& v) {
  return v.empty();
}

template <class T>
void Decode(const Json& j, const FieldPath& path, std::optional<T>& out, FieldErrors& errors);
template <class T>
void Decode(const Json& j, const FieldPath& path, std::vector<T>& out, FieldErrors& errors);
template <class T>
void Decode(const Json& j, const FieldPath& path, std::map<std::string, T>& out,
            FieldErrors& errors);
template <Reflected T>
void Decode(const Json& j, const FieldPath& path, T& out, FieldErrors& errors);

template <class T>
Json Encode(const std::optional<T>& v);
template <class T>
Json Encode(const std::vector<T>& v);
template <class T>
Json Encode(const std::map<std::string, T>& v);
template <Reflected T>
Json Encode(const T& v);

// An error for a value of the wrong JSON type at `path`.
FieldError TypeError(const FieldPath& path, const Json& j, const char* expected);

// Reports the keys of object `j` that `known` does not list: kept in `extra`
// when non-null, else reported as unknown fields with a suggestion.
// `kubernetes` lists the fields Kubernetes defines beyond the modelled ones:
// those are kept too, and any other key is an unknown field. Null: keep all.
void HandleUnknownKeys(const Json& j, const FieldPath& path, const std::vector<std::string>& known,
                       Json* extra, FieldErrors& errors,
                       const std::vector<std::string>* kubernetes = nullptr);

// Decodes an object through a field-list function `fields(visitor)`.
template <class FieldsFn>
void DecodeFields(const Json& j, const FieldPath& path, FieldsFn&& fields, Json* extra,
                  FieldErrors& errors, const std::vector<std::string>* kubernetes = nullptr) {
  if (!j.is_object()) {
    errors.push_back(TypeError(path, j, "an object"));
    return;
  }
  std::vector<std::string> known;
  auto visitor = [&](const char* key, auto& field) {
    known.emplace_back(key);
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return;
    Decode(*it, path.Child(key), field, errors);
  };
  fields(visitor);
  HandleUnknownKeys(j, path, known, extra, errors, kubernetes);
}

// Encodes through a field-list function, omitting empty fields. A nested
// struct is encoded once and left out when that gives nothing (asking it
// whether it is empty first would encode it twice at every level).
template <class FieldsFn>
Json EncodeFields(FieldsFn&& fields, const Json* extra) {
  Json out = Json::object();
  auto visitor = [&](const char* key, const auto& field) {
    if constexpr (Reflected<std::decay_t<decltype(field)>>) {
      Json encoded = Encode(field);
      if (!encoded.empty()) out[key] = std::move(encoded);
    } else if (!IsEmpty(field)) {
      out[key] = Encode(field);
    }
  };
  fields(visitor);
  if (extra != nullptr && extra->is_object()) {
    for (const auto& [key, value] : extra->items()) out[key] = value;
  }
  return out;
}

template <class T>
void Decode(const Json& j, const FieldPath& path, std::optional<T>& out, FieldErrors& errors) {
  T value{};
  size_t before = errors.size();
  Decode(j, path, value, errors);
  // A scalar that failed to decode stays unset (so defaulting still fills
  // it); an object or list keeps what did decode, so the rest of it is still
  // validated.
  if (errors.size() == before ||
      !(std::is_arithmetic_v<T> || std::is_same_v<T, std::string> || std::is_same_v<T, Quantity>)) {
    out = std::move(value);
  }
}

template <class T>
void Decode(const Json& j, const FieldPath& path, std::vector<T>& out, FieldErrors& errors) {
  if (!j.is_array()) {
    errors.push_back(TypeError(path, j, "a list"));
    return;
  }
  out.clear();
  out.reserve(j.size());
  for (size_t i = 0; i < j.size(); ++i) {
    T item{};
    Decode(j[i], path.Index(static_cast<int64_t>(i)), item, errors);
    out.push_back(std::move(item));
  }
}

template <class T>
void Decode(const Json& j, const FieldPath& path, std::map<std::string, T>& out,
            FieldErrors& errors) {
  if (!j.is_object()) {
    errors.push_back(TypeError(path, j, "an object"));
    return;
  }
  out.clear();
  for (const auto& [key, value] : j.items()) {
    T item{};
    if (!value.is_null()) Decode(value, path.Key(key), item, errors);
    out.emplace(key, std::move(item));
  }
}

template <Reflected T>
void Decode(const Json& j, const FieldPath& path, T& out, FieldErrors& errors) {
  Json* extra = nullptr;
  if constexpr (KeepsUnknownFields<T>) extra = &out.extra;
  const std::vector<std::string>* kubernetes = nullptr;
  if constexpr (requires { T::kKubernetesType; }) {
    kubernetes = KubernetesFieldNames(T::kKubernetesType);
  }
  DecodeFields(
      j, path, [&](auto& v) { T::Fields(out, v); }, extra, errors, kubernetes);
}

template <class T>
Json Encode(const std::optional<T>& v) {
  return v ? Encode(*v) : Json();
}

template <class T>
Json Encode(const std::vector<T>& v) {
  Json out = Json::array();
  for (const T& item : v) out.push_back(Encode(item));
  return out;
}

template <class T>
Json Encode(const std::map<std::string, T>& v) {
  Json out = Json::object();
  for (const auto& [key, value] : v) out[key] = Encode(value);
  return out;
}

template <Reflected T>
Json Encode(const T& v) {
  const Json* extra = nullptr;
  if constexpr (KeepsUnknownFields<T>) extra = &v.extra;
  return EncodeFields([&](auto& visitor) { T::Fields(v, visitor); }, extra);
}

}  // namespace trainyard::api
