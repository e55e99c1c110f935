// The generic document type. Insertion-ordered so that fields we keep
// verbatim come back out in the order the user wrote them.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace trainyard::api {

using Json = nlohmann::ordered_json;

// `object[key]` when `object` is an object with a string there, else
// `fallback`. Never throws, unlike Json::value, so it is safe on the parts
// of a document kept as raw JSON (a Job's podFailurePolicy, ...).
inline std::string StringAt(const Json& object, const char* key, std::string fallback = "") {
  if (!object.is_object()) return fallback;
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : fallback;
}

// `object[key]` when `object` is an object with an array there, else [].
inline Json ArrayAt(const Json& object, const char* key) {
  if (!object.is_object()) return Json::array();
  auto it = object.find(key);
  return it != object.end() && it->is_array() ? *it : Json::array();
}

}  // namespace trainyard::api
