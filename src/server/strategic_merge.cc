#include "server/strategic_merge.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace trainyard::server {
namespace {

using api::Json;

constexpr std::string_view kPatchDirective = "$patch";
constexpr std::string_view kRetainKeys = "$retainKeys";
constexpr std::string_view kSetElementOrder = "$setElementOrder/";
constexpr std::string_view kDeleteFromPrimitiveList = "$deleteFromPrimitiveList/";

Status MergeMap(Json& doc, const Json& patch, const PatchSchema* schema);

Status BadPatchType(const Json& type, const Json& map) {
  return InvalidArgumentError(
      fmt::format("unknown patch type: {} in map: {}", type.dump(), map.dump()));
}

Status NoMergeKey(const Json& map, const std::string& key) {
  return InvalidArgumentError(
      fmt::format("map: {} does not contain declared merge key: {}", map.dump(), key));
}

// Each item's first place in `list`, by ListItemKey.
using Places = std::unordered_map<std::string, ptrdiff_t>;
Places PlacesIn(const Json& list, const std::string& merge_key) {
  Places places;
  for (size_t i = 0; i < list.size(); ++i) {
    std::string key = ListItemKey(list[i], merge_key);
    if (!key.empty()) places.emplace(std::move(key), static_cast<ptrdiff_t>(i));
  }
  return places;
}

ptrdiff_t PlaceOf(const Places& places, const std::string& key) {
  auto it = places.find(key);
  return key.empty() || it == places.end() ? -1 : it->second;
}

// The list in Kubernetes' order: the items `order` names in its order, and
// the rest (items only the server had) where they stood among them.
Json NormalizeOrder(const Json& merged, const Json& order, const Json& server_order,
                    const std::string& merge_key) {
  Places in_order = PlacesIn(order, merge_key);
  Places on_server = PlacesIn(server_order, merge_key);
  struct Placed {
    ptrdiff_t in_order, on_server;
    const Json* item;
  };
  std::vector<Placed> named, server_only;
  for (const Json& item : merged) {
    std::string key = ListItemKey(item, merge_key);
    Placed placed{PlaceOf(in_order, key), PlaceOf(on_server, key), &item};
    (placed.in_order >= 0 ? named : server_only).push_back(placed);
  }
  std::stable_sort(named.begin(), named.end(),
                   [](const Placed& a, const Placed& b) { return a.in_order < b.in_order; });
  std::stable_sort(server_only.begin(), server_only.end(),
                   [](const Placed& a, const Placed& b) { return a.on_server < b.on_server; });
  // A server-only item goes first only where the server had it before the
  // named item it is weighed against.
  Json out = Json::array();
  size_t i = 0;
  size_t j = 0;
  while (i < server_only.size() || j < named.size()) {
    bool take_server = j == named.size();
    if (!take_server && i < server_only.size()) {
      ptrdiff_t si = server_only[i].on_server;
      ptrdiff_t ni = named[j].on_server;
      take_server = si >= 0 && ni >= 0 && si < ni;
    }
    out.push_back(*(take_server ? server_only[i++] : named[j++]).item);
  }
  return out;
}

// Merges a list of values: their union, the original's first.
Json MergeValues(const Json& doc, const Json& patch) {
  Json out = Json::array();
  std::unordered_set<std::string> seen;
  for (const Json* list : {&doc, &patch}) {
    for (const Json& v : *list) {
      if (seen.insert(v.dump()).second) out.push_back(v);
    }
  }
  return out;
}

// Merges a list of maps by `schema.merge_key`: `$patch: delete` items take
// theirs out, a `$patch: replace` item makes the rest the list, any other
// merges into the item with its key or is appended.
Result<Json> MergeMaps(Json doc, const Json& patch, const PatchSchema& schema) {
  const std::string& key = schema.merge_key;
  std::vector<const Json*> items;
  std::unordered_set<std::string> deleted;
  bool replace = false;
  for (const Json& item : patch) {
    if (!item.is_object()) {
      return InvalidArgumentError(
          fmt::format("a list merged by {:?} holds maps, not {}", key, item.dump()));
    }
    auto directive = item.find(kPatchDirective);
    if (directive == item.end()) {
      items.push_back(&item);
    } else if (*directive == "delete") {
      if (!item.contains(key)) return NoMergeKey(item, key);
      deleted.insert(ListItemKey(item, key));
    } else if (*directive == "replace") {
      replace = true;
    } else if (*directive == "merge") {
      return InvalidArgumentError("merging lists cannot yet be specified in the patch");
    } else {
      return BadPatchType(*directive, item);
    }
  }
  if (replace) {
    Json out = Json::array();
    for (const Json* item : items) out.push_back(*item);
    return out;
  }
  Json kept = Json::array();
  for (Json& d : doc) {
    if (deleted.empty() || !deleted.contains(ListItemKey(d, key))) kept.push_back(std::move(d));
  }
  Places at = PlacesIn(kept, key);
  for (const Json* item : items) {
    if (!item->contains(key)) return NoMergeKey(*item, key);
    std::string item_key = ListItemKey(*item, key);
    ptrdiff_t found = PlaceOf(at, item_key);
    if (found < 0) {
      at.emplace(std::move(item_key), static_cast<ptrdiff_t>(kept.size()));
      kept.push_back(*item);
    } else {
      RETURN_IF_ERROR(MergeMap(kept[static_cast<size_t>(found)], *item, &schema));
    }
  }
  return kept;
}

// Merges list `patch` into list `doc` by `schema`, ordered by `order`
// (`$setElementOrder`) or else by the patch's own order.
Result<Json> MergeList(const Json& doc, const Json& patch, const PatchSchema& schema,
                       const Json* order) {
  bool maps =
      std::any_of(patch.begin(), patch.end(), [](const Json& v) { return v.is_object(); }) ||
      std::any_of(doc.begin(), doc.end(), [](const Json& v) { return v.is_object(); });
  Json merged;
  if (!maps) {
    merged = MergeValues(doc, patch);
  } else {
    if (schema.merge_key.empty()) {
      return InvalidArgumentError("cannot merge lists of maps without a merge key");
    }
    ASSIGN_OR_RETURN(merged, MergeMaps(doc, patch, schema));
  }
  Json patch_order = Json::array();
  for (const Json& item : patch) {
    if (!item.is_object() || !item.contains(kPatchDirective)) patch_order.push_back(item);
  }
  std::string key = maps ? schema.merge_key : "";
  return NormalizeOrder(merged, order != nullptr ? *order : patch_order, doc, key);
}

// `$deleteFromPrimitiveList/<field>`: the values taken out of that list.
Status DeleteFromList(Json& doc, const std::string& field, const Json& values) {
  if (!values.is_array()) {
    return InvalidArgumentError(
        fmt::format("{}{} must be a list", kDeleteFromPrimitiveList, field));
  }
  auto it = doc.find(field);
  if (it == doc.end() || !it->is_array()) return OkStatus();
  std::unordered_set<std::string> gone;
  for (const Json& v : values) gone.insert(v.dump());
  Json kept = Json::array();
  for (Json& v : *it) {
    if (!gone.contains(v.dump())) kept.push_back(std::move(v));
  }
  *it = std::move(kept);
  return OkStatus();
}

// Applies the directives of map `patch` that act on `doc` as a whole.
// Returns false when the map is done (replaced, or deleted: `doc` is then
// null).
Result<bool> MapDirectives(Json& doc, const Json& patch) {
  if (auto d = patch.find(kPatchDirective); d != patch.end()) {
    if (*d == "replace") {
      doc = patch;
      doc.erase(std::string(kPatchDirective));
      return false;
    }
    if (*d == "delete") {
      doc = nullptr;
      return false;
    }
    if (*d != "merge") return BadPatchType(*d, patch);
  }
  if (auto retain = patch.find(kRetainKeys); retain != patch.end()) {
    if (!retain->is_array()) return InvalidArgumentError("$retainKeys must be a list of names");
    for (auto it = doc.begin(); it != doc.end();) {
      bool kept = std::find(retain->begin(), retain->end(), Json(it.key())) != retain->end();
      it = kept ? std::next(it) : doc.erase(it);
    }
  }
  return true;
}

Status MergeField(Json& doc, const std::string& name, const Json& value, const PatchSchema* field,
                  const Json* order) {
  if (value.is_null()) {
    doc.erase(name);
    return OkStatus();
  }
  auto it = doc.find(name);
  if (it == doc.end() || it->type() != value.type()) {
    Json fresh = value.is_object() ? Json::object() : Json::array();
    if (value.is_object()) {
      RETURN_IF_ERROR(MergeMap(fresh, value, field));
      if (!fresh.is_null()) doc[name] = std::move(fresh);
    } else if (value.is_array() && field != nullptr && field->merge) {
      ASSIGN_OR_RETURN(doc[name], MergeList(fresh, value, *field, order));
    } else {
      doc[name] = value;
    }
    return OkStatus();
  }
  if (value.is_object()) {
    RETURN_IF_ERROR(MergeMap(*it, value, field));
    if (it->is_null()) doc.erase(it);
  } else if (value.is_array() && field != nullptr && field->merge) {
    ASSIGN_OR_RETURN(*it, MergeList(*it, value, *field, order));
  } else {
    *it = value;
  }
  return OkStatus();
}

Status MergeMap(Json& doc, const Json& patch, const PatchSchema* schema) {
  if (!doc.is_object()) doc = Json::object();
  ASSIGN_OR_RETURN(bool go_on, MapDirectives(doc, patch));
  if (!go_on) return OkStatus();
  for (const auto& [name, value] : patch.items()) {
    if (name.starts_with(kDeleteFromPrimitiveList)) {
      RETURN_IF_ERROR(DeleteFromList(doc, name.substr(kDeleteFromPrimitiveList.size()), value));
    }
  }
  for (const auto& [name, value] : patch.items()) {
    if (name.starts_with(kDeleteFromPrimitiveList) || name == kPatchDirective ||
        name == kRetainKeys) {
      continue;
    }
    const PatchSchema* field = schema != nullptr ? schema->Field(name) : nullptr;
    if (name.starts_with(kSetElementOrder)) {
      std::string list = name.substr(kSetElementOrder.size());
      if (!value.is_array()) return InvalidArgumentError(fmt::format("{} must be a list", name));
      if (patch.contains(list)) continue;  // ordered as it merges, below
      // Only the order changes: the list merges with its own items.
      const PatchSchema* list_field = schema != nullptr ? schema->Field(list) : nullptr;
      auto held = doc.find(list);
      if (held == doc.end() || !held->is_array() || list_field == nullptr) continue;
      std::string key = list_field->merge_key;
      *held = NormalizeOrder(*held, value, *held, key);
      continue;
    }
    auto order = patch.find(std::string(kSetElementOrder) + name);
    RETURN_IF_ERROR(MergeField(doc, name, value, field, order != patch.end() ? &*order : nullptr));
  }
  return OkStatus();
}

}  // namespace

std::string ListItemKey(const Json& item, const std::string& merge_key) {
  if (merge_key.empty()) return item.dump();
  if (!item.is_object()) return "";
  auto it = item.find(merge_key);
  return it == item.end() ? "" : it->dump();
}

const PatchSchema* PatchSchema::Field(std::string_view name) const {
  auto it = fields.find(name);
  return it == fields.end() ? nullptr : &it->second;
}

Status ApplyStrategicMergePatch(Json& doc, const Json& patch, const PatchSchema& schema) {
  if (!patch.is_object()) return InvalidArgumentError("a strategic merge patch is a JSON object");
  RETURN_IF_ERROR(MergeMap(doc, patch, &schema));
  if (doc.is_null()) return InvalidArgumentError("the patch deletes the whole object");
  return OkStatus();
}

}  // namespace trainyard::server
