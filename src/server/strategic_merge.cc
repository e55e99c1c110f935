#include "server/strategic_merge.h"

#include <fmt/format.h>

#include <algorithm>
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

// Where `item` is in `order` (a list of values, or of maps naming the
// merge key): by value, or by the merge key's value; -1 when absent.
ptrdiff_t IndexIn(const Json& order, const Json& item, const std::string& merge_key) {
  for (size_t i = 0; i < order.size(); ++i) {
    if (merge_key.empty()
            ? order[i] == item
            : (order[i].is_object() && item.is_object() && order[i].contains(merge_key) &&
               item.contains(merge_key) && order[i][merge_key] == item[merge_key])) {
      return static_cast<ptrdiff_t>(i);
    }
  }
  return -1;
}

// The list in Kubernetes' order: the items `order` names in its order, and
// the rest (items only the server had) where they stood among them.
Json NormalizeOrder(const Json& merged, const Json& order, const Json& server_order,
                    const std::string& merge_key) {
  std::vector<Json> named;
  std::vector<Json> server_only;
  for (const Json& item : merged) {
    (IndexIn(order, item, merge_key) >= 0 ? named : server_only).push_back(item);
  }
  auto by = [&](const Json& list) {
    return [&list, &merge_key](const Json& a, const Json& b) {
      return IndexIn(list, a, merge_key) < IndexIn(list, b, merge_key);
    };
  };
  std::stable_sort(named.begin(), named.end(), by(order));
  std::stable_sort(server_only.begin(), server_only.end(), by(server_order));
  // A server-only item goes first only where the server had it before the
  // named item it is weighed against.
  Json out = Json::array();
  size_t i = 0;
  size_t j = 0;
  while (i < server_only.size() || j < named.size()) {
    bool take_server = j == named.size();
    if (!take_server && i < server_only.size()) {
      ptrdiff_t si = IndexIn(server_order, server_only[i], merge_key);
      ptrdiff_t ni = IndexIn(server_order, named[j], merge_key);
      take_server = si >= 0 && ni >= 0 && si < ni;
    }
    out.push_back(take_server ? std::move(server_only[i++]) : std::move(named[j++]));
  }
  return out;
}

// Merges a list of values: their union, the original's first.
Json MergeValues(const Json& doc, const Json& patch) {
  Json out = Json::array();
  for (const Json* list : {&doc, &patch}) {
    for (const Json& v : *list) {
      if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
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
      Json kept = Json::array();
      for (Json& d : doc) {
        if (!(d.is_object() && d.contains(key) && d[key] == item[key]))
          kept.push_back(std::move(d));
      }
      doc = std::move(kept);
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
  for (const Json* item : items) {
    if (!item->contains(key)) return NoMergeKey(*item, key);
    auto found = std::find_if(doc.begin(), doc.end(), [&](const Json& d) {
      return d.is_object() && d.contains(key) && d[key] == (*item)[key];
    });
    if (found == doc.end()) {
      doc.push_back(*item);
    } else {
      RETURN_IF_ERROR(MergeMap(*found, *item, &schema));
    }
  }
  return doc;
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
  Json kept = Json::array();
  for (Json& v : *it) {
    if (std::find(values.begin(), values.end(), v) == values.end()) kept.push_back(std::move(v));
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
