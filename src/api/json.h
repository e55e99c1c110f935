// The generic document type, and the one set of accessors that read it
// without throwing. Insertion-ordered so that fields we keep verbatim come
// back out in the order the user wrote them.
//
// Documents come from clients, status included, and parts of them are kept
// as raw JSON (a Job's podFailurePolicy, ...): a step that is missing or of
// the wrong type reads as absent, never as an exception (Json::value and
// Json::at throw on a non-object).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace trainyard::api {

using Json = nlohmann::ordered_json;

// The value at a path of keys; nullptr when a step is missing or not an
// object.
inline const Json* FindAt(const Json& doc, std::initializer_list<const char*> path) {
  const Json* at = &doc;
  for (const char* key : path) {
    if (!at->is_object()) return nullptr;
    auto it = at->find(key);
    if (it == at->end()) return nullptr;
    at = &*it;
  }
  return at;
}
// The same, to modify what is found.
inline Json* FindAt(Json& doc, std::initializer_list<const char*> path) {
  return const_cast<Json*>(FindAt(static_cast<const Json&>(doc), path));
}

// The value at a path of keys, made (null) where missing: for writing.
// Each step must be an object or missing.
inline Json& MakeAt(Json& doc, const std::vector<std::string>& path) {
  Json* at = &doc;
  for (const std::string& key : path) at = &(*at)[key];
  return *at;
}

// The string at a path of keys, else `fallback`.
inline std::string StringAt(const Json& doc, std::initializer_list<const char*> path,
                            std::string fallback = "") {
  const Json* at = FindAt(doc, path);
  return at != nullptr && at->is_string() ? at->get<std::string>() : fallback;
}
inline std::string StringAt(const Json& object, const char* key, std::string fallback = "") {
  return StringAt(object, {key}, std::move(fallback));
}

// The integer at a path of keys, else `fallback`.
inline int64_t IntAt(const Json& doc, std::initializer_list<const char*> path,
                     int64_t fallback = 0) {
  const Json* at = FindAt(doc, path);
  return at != nullptr && at->is_number_integer() ? at->get<int64_t>() : fallback;
}
// `object[key]` when it is an integer, else `fallback`.
inline int64_t IntAt(const Json& object, const char* key, int64_t fallback = 0) {
  return IntAt(object, {key}, fallback);
}

// The number at a path of keys, integer or float, as a double, else `fallback`.
inline double NumberAt(const Json& doc, std::initializer_list<const char*> path,
                       double fallback = 0) {
  const Json* at = FindAt(doc, path);
  return at != nullptr && at->is_number() ? at->get<double>() : fallback;
}
// `object[key]` when it is a number, as a double, else `fallback`.
inline double NumberAt(const Json& object, const char* key, double fallback = 0) {
  return NumberAt(object, {key}, fallback);
}

// The boolean at a path of keys, else `fallback`.
inline bool BoolAt(const Json& doc, std::initializer_list<const char*> path,
                   bool fallback = false) {
  const Json* at = FindAt(doc, path);
  return at != nullptr && at->is_boolean() ? at->get<bool>() : fallback;
}
// `object[key]` when it is a boolean, else `fallback`.
inline bool BoolAt(const Json& object, const char* key, bool fallback = false) {
  return BoolAt(object, {key}, fallback);
}

// The value at a path of keys, of any type, else null; by reference.
inline const Json& ValueAt(const Json& doc, std::initializer_list<const char*> path) {
  static const Json kNull;
  const Json* at = FindAt(doc, path);
  return at != nullptr ? *at : kNull;
}
// `object[key]`, of any type, else null; by reference.
inline const Json& ValueAt(const Json& object, const char* key) { return ValueAt(object, {key}); }

// The array at a path of keys, else an empty one; by reference, not copied.
inline const Json& ArrayRefAt(const Json& doc, std::initializer_list<const char*> path) {
  static const Json kEmpty = Json::array();
  const Json* at = FindAt(doc, path);
  return at != nullptr && at->is_array() ? *at : kEmpty;
}
// `object[key]` when it is an array, else []; by reference.
inline const Json& ArrayRefAt(const Json& object, const char* key) {
  return ArrayRefAt(object, {key});
}
// `object[key]` when it is an array, else [] (a copy, to modify).
inline Json ArrayAt(const Json& object, const char* key) { return ArrayRefAt(object, {key}); }

// The object at a path of keys, else an empty one.
inline const Json& ObjectAt(const Json& doc, std::initializer_list<const char*> path) {
  static const Json kEmpty = Json::object();
  const Json* at = FindAt(doc, path);
  return at != nullptr && at->is_object() ? *at : kEmpty;
}
// `object[key]` when it is an object, else {}; by reference.
inline const Json& ObjectAt(const Json& object, const char* key) { return ObjectAt(object, {key}); }

}  // namespace trainyard::api
