// ListQuery: what a list or a watch asks a store for, in the terms a store
// can answer from an index (equalities on labels and on a few fields), so
// that a list reads only the objects it returns, however many others the
// namespace holds. The caller checks the rest of its selector (`!=`,
// `in`, `exists`) on what comes back.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/json.h"

namespace trainyard::store {

struct ListQuery {
  std::string kind;
  std::string namespace_;  // empty: every namespace
  // Each must hold: metadata.labels[key] == value.
  std::vector<std::pair<std::string, std::string>> labels;
  // Each must hold: the field at the dotted path == value. A path of
  // IndexedFields() is read from an index; metadata.name and
  // metadata.namespace narrow the range; any other is checked on each
  // object of the range.
  std::vector<std::pair<std::string, std::string>> fields;
  // Only objects after this (namespace, name), in key order: where a page
  // that stopped there goes on.
  std::pair<std::string, std::string> after;
};

// The fields a store keeps an index of: what kubelets, schedulers and
// controllers select pods by, and what `kubectl describe` and the
// dashboard select an object's events by.
inline constexpr std::array<std::string_view, 3> kIndexedFields = {"spec.nodeName", "status.phase",
                                                                   "involvedObject.name"};

// The value at a dotted path, as a field selector compares it: a string as
// it is, another value as JSON; nullopt where there is none (or null),
// which a selector compares as "".
std::optional<std::string> FieldAt(const api::Json& object, std::string_view path);

// Whether `object` is of the query's namespace, after its `after` key, and
// holds every label and field equality. (Not its kind: a store keeps
// kinds apart.)
bool MatchesQuery(const ListQuery& query, const api::Json& object);

}  // namespace trainyard::store
