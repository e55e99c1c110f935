// Internal to the server's tables: a column of a Table and the helpers
// that read cells out of objects, shared by table.cc and the per-kind
// column files.
#pragma once

#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "api/json.h"
#include "common/clock.h"
#include "server/table.h"

namespace trainyard::server::internal {

struct Column {
  std::string name;
  std::string type;  // "string", "integer", "date"
  std::string format;
  int priority = 0;  // 1: only with -o wide
  std::function<api::Json(const api::Json&, TimePoint)> cell;
};

// The value at a path of keys; nullptr when any step is missing or not an
// object: objects come from clients too.
inline const api::Json* Find(const api::Json& doc, std::initializer_list<const char*> path) {
  const api::Json* at = &doc;
  for (const char* key : path) {
    if (!at->is_object()) return nullptr;
    auto it = at->find(key);
    if (it == at->end()) return nullptr;
    at = &*it;
  }
  return at;
}

// A string at a path of keys, "" when any step is missing or not of the
// expected type.
inline std::string Str(const api::Json& doc, std::initializer_list<const char*> path) {
  const api::Json* at = Find(doc, path);
  return at != nullptr && at->is_string() ? at->get<std::string>() : "";
}

inline int64_t Int(const api::Json& doc, std::initializer_list<const char*> path,
                   int64_t otherwise = 0) {
  const api::Json* at = Find(doc, path);
  return at != nullptr && at->is_number_integer() ? at->get<int64_t>() : otherwise;
}

inline const api::Json& Array(const api::Json& doc, std::initializer_list<const char*> path) {
  static const api::Json kEmpty = api::Json::array();
  const api::Json* at = Find(doc, path);
  return at != nullptr && at->is_array() ? *at : kEmpty;
}

// An object at a path of keys; an empty object when there is none.
inline const api::Json& Object(const api::Json& doc, std::initializer_list<const char*> path) {
  static const api::Json kEmpty = api::Json::object();
  const api::Json* at = Find(doc, path);
  return at != nullptr && at->is_object() ? *at : kEmpty;
}

inline std::string Age(const std::string& timestamp, TimePoint now) {
  std::optional<TimePoint> t = ParseRfc3339(timestamp);
  return t ? HumanDuration(now - *t) : "<unknown>";
}

inline Column NameColumn() {
  return {"Name", "string", "name", 0, [](const api::Json& o, TimePoint) {
            return Str(o, {"metadata", "name"});
          }};
}

inline Column AgeColumn() {
  return {"Age", "date", "", 0, [](const api::Json& o, TimePoint now) {
            return Age(Str(o, {"metadata", "creationTimestamp"}), now);
          }};
}

// The columns of the scheduling kinds (ClusterQueue, LocalQueue,
// PriorityClass, ResourceQuota, ResourceFlavor); empty for other kinds.
std::vector<Column> SchedulingColumns(const std::string& kind);
// The columns of Experiment, Trial and Suggestion; empty for other kinds.
std::vector<Column> KatibColumns(const std::string& kind);

}  // namespace trainyard::server::internal
