// Kubernetes' strategic merge patch: a JSON merge patch whose lists merge
// by a key where the type says so (containers by name, a Service's ports
// by port), with the directives kubectl's apply and edit send:
// `$patch` (replace, delete, merge), `$setElementOrder/<list>`,
// `$retainKeys` and `$deleteFromPrimitiveList/<list>`. What merges how is
// Kubernetes' `patchStrategy`/`patchMergeKey` tags of the built-in kinds
// trainyard serves (PatchSchemaOf); a list the tags say nothing of is
// replaced, as it is there.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "api/json.h"
#include "common/status.h"

namespace trainyard::server {

// How one field of a kind is patched, and its fields (a list's: its
// items').
struct PatchSchema {
  // A list merged rather than replaced: its items by `merge_key`, or by
  // value when empty (a list of strings, such as finalizers).
  bool merge = false;
  std::string merge_key;
  std::map<std::string, PatchSchema, std::less<>> fields;

  const PatchSchema* Field(std::string_view name) const;
};

// The tags of a built-in kind (by apiVersion's group and kind); nullptr for
// a kind Kubernetes does not build in (custom resources take no strategic
// merge patch, as on kube-apiserver).
const PatchSchema* PatchSchemaOf(std::string_view group, std::string_view kind);

// What identifies an item of a merged list: its merge key's value (or,
// for a list of values, the value itself) as compact JSON; empty for a map
// without the key. Hashed, it makes merging a list linear in its size.
std::string ListItemKey(const api::Json& item, const std::string& merge_key);

// Applies `patch` (an object) to `doc` in place. kInvalidArgument: a
// malformed directive, or a list item without its merge key. On error
// `doc` may be partly patched: patch a copy.
Status ApplyStrategicMergePatch(api::Json& doc, const api::Json& patch, const PatchSchema& schema);

}  // namespace trainyard::server
