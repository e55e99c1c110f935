#include "server/field_managers.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <iterator>
#include <unordered_map>

#include "api/yaml.h"

namespace trainyard::server {
namespace {

using api::Json;

constexpr std::string_view kItself = ".";

// What no manager owns: the server's metadata, and status (its
// subresource's), as kube-apiserver resets them.
Json WithoutServerFields(Json object) {
  for (const char* field : {"apiVersion", "kind", "status"}) object.erase(field);
  if (auto meta = object.find("metadata"); meta != object.end() && meta->is_object()) {
    for (const char* field :
         {"name", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp",
          "deletionTimestamp", "deletionGracePeriodSeconds", "managedFields", "selfLink"}) {
      meta->erase(field);
    }
    if (meta->empty()) object.erase(meta);
  }
  return object;
}

const PatchSchema* FieldOf(const PatchSchema* schema, const std::string& name) {
  return schema != nullptr ? schema->Field(name) : nullptr;
}

void Collect(const Json& value, const PatchSchema* schema, OwnedPath& path, OwnedFields& out) {
  if (value.is_object() && !value.empty()) {
    for (const auto& [name, child] : value.items()) {
      path.push_back("f:" + name);
      Collect(child, FieldOf(schema, name), path, out);
      path.pop_back();
    }
    return;
  }
  bool merged = value.is_array() && !value.empty() && schema != nullptr && schema->merge;
  if (!merged) {
    out.insert(path);  // a value, an empty map, or a list replaced whole
    return;
  }
  const std::string& key = schema->merge_key;
  for (const Json& item : value) {
    if (key.empty()) {
      path.push_back("v:" + item.dump());
      out.insert(path);
    } else if (item.is_object() && item.contains(key)) {
      path.push_back("k:" + Json{{key, item[key]}}.dump());
      path.push_back(std::string(kItself));
      out.insert(path);
      path.pop_back();
      Collect(item, schema, path, out);
    } else {
      out.insert(path);  // an item without its key: the list is one value
      continue;
    }
    path.pop_back();
  }
}

// What a "k:" or "v:" element names, parsed within the codec's depth
// bound (a client may send managedFields of its own); null if it cannot
// be parsed.
Json Named(const std::string& element) {
  Result<Json> named = api::ParseJsonValue(std::string_view(element).substr(2), "a field key");
  return named.ok() ? std::move(*named) : Json();
}

// The list item a "k:" or "v:" element names, in `list`.
Json::iterator FindItem(Json& list, const std::string& element) {
  Json named = Named(element);
  return std::find_if(list.begin(), list.end(), [&](const Json& item) {
    if (element.starts_with("v:")) return item == named;
    if (!named.is_object() || !item.is_object()) return false;
    return std::all_of(named.items().begin(), named.items().end(), [&](const auto& kv) {
      auto it = item.find(kv.key());
      return it != item.end() && *it == kv.value();
    });
  });
}

// The value at `path` in `doc`; nullptr when absent.
const Json* At(const Json& doc, const OwnedPath& path) {
  Json* at = const_cast<Json*>(&doc);  // only read: one walk for both uses
  for (const std::string& element : path) {
    if (element == kItself) return at;
    if (element.starts_with("f:")) {
      if (!at->is_object()) return nullptr;
      auto it = at->find(element.substr(2));
      if (it == at->end()) return nullptr;
      at = &*it;
      continue;
    }
    if (!at->is_array()) return nullptr;
    auto it = FindItem(*at, element);
    if (it == at->end()) return nullptr;
    at = &*it;
  }
  return at;
}

// Removes the field, item or value `path` names from `doc`.
void RemoveAt(Json& doc, OwnedPath path) {
  if (!path.empty() && path.back() == kItself) path.pop_back();
  if (path.empty()) return;
  std::string last = path.back();
  path.pop_back();
  Json* parent = const_cast<Json*>(At(doc, path));
  if (parent == nullptr) return;
  if (last.starts_with("f:")) {
    if (parent->is_object()) parent->erase(last.substr(2));
    return;
  }
  if (!parent->is_array()) return;
  auto it = FindItem(*parent, last);
  if (it != parent->end()) parent->erase(it);
}

void MergeInto(Json& doc, const Json& applied, const PatchSchema* schema);

void MergeListInto(Json& list, const Json& applied, const PatchSchema& field) {
  const std::string& key = field.merge_key;
  std::unordered_map<std::string, size_t> at;
  for (size_t i = 0; i < list.size(); ++i) at.emplace(ListItemKey(list[i], key), i);
  for (const Json& item : applied) {
    std::string item_key = ListItemKey(item, key);
    auto same = item_key.empty() ? at.end() : at.find(item_key);
    if (same == at.end()) {
      if (!item_key.empty()) at.emplace(std::move(item_key), list.size());
      list.push_back(item);
    } else if (!key.empty()) {
      MergeInto(list[same->second], item, &field);
    }
  }
}

// Merges an applied configuration into `doc`: maps field by field, lists
// merged by key or as sets where the schema says, any other value set.
void MergeInto(Json& doc, const Json& applied, const PatchSchema* schema) {
  for (const auto& [name, value] : applied.items()) {
    if (value.is_null()) continue;
    const PatchSchema* field = FieldOf(schema, name);
    auto it = doc.find(name);
    if (it == doc.end() || it->type() != value.type()) {
      doc[name] = value;
    } else if (value.is_object()) {
      MergeInto(*it, value, field);
    } else if (value.is_array() && field != nullptr && field->merge) {
      MergeListInto(*it, value, *field);
    } else {
      *it = value;
    }
  }
}

struct Entry {
  Json raw;  // as stored, for what is not rewritten
  std::string manager, operation;
  OwnedFields fields;
};

std::vector<Entry> EntriesOf(const Json& object) {
  std::vector<Entry> entries;
  const Json* managed = api::FindAt(object, {"metadata", "managedFields"});
  if (managed == nullptr || !managed->is_array()) return entries;
  for (const Json& raw : *managed) {
    if (!raw.is_object()) continue;
    entries.push_back({.raw = raw,
                       .manager = api::StringAt(raw, "manager"),
                       .operation = api::StringAt(raw, "operation"),
                       .fields = FromFieldsV1(api::ObjectAt(raw, "fieldsV1"))});
  }
  return entries;
}

Entry& EntryFor(std::vector<Entry>& entries, const FieldManager& manager,
                const std::string& operation) {
  for (Entry& e : entries) {
    if (e.manager == manager.name && e.operation == operation &&
        api::StringAt(e.raw, "subresource").empty()) {
      return e;
    }
  }
  entries.push_back({.raw = Json::object(), .manager = manager.name, .operation = operation});
  return entries.back();
}

void StoreEntries(Json& object, std::vector<Entry>& entries) {
  Json managed = Json::array();
  for (Entry& e : entries) {
    if (e.fields.empty()) continue;  // owning nothing, it is no manager
    e.raw["manager"] = e.manager;
    e.raw["operation"] = e.operation;
    e.raw["fieldsType"] = "FieldsV1";
    e.raw["fieldsV1"] = ToFieldsV1(e.fields);
    managed.push_back(std::move(e.raw));
  }
  if (managed.empty()) {
    if (object.contains("metadata")) object["metadata"].erase("managedFields");
    return;
  }
  object["metadata"]["managedFields"] = std::move(managed);
}

void Stamp(Entry& e, const FieldManager& manager) {
  e.raw["apiVersion"] = manager.api_version;
  e.raw["time"] = manager.time;
}

}  // namespace

OwnedFields FieldsOf(const Json& object, const PatchSchema* schema) {
  OwnedFields out;
  OwnedPath path;
  Json owned = WithoutServerFields(object);
  if (!owned.empty()) Collect(owned, schema, path, out);
  return out;
}

Json ToFieldsV1(const OwnedFields& fields) {
  Json out = Json::object();
  for (const OwnedPath& path : fields) {  // sorted: a field before what is under it
    Json* at = &out;
    for (size_t i = 0; i < path.size(); ++i) {
      bool had = at->contains(path[i]);
      Json& next = (*at)[path[i]];
      if (!next.is_object()) next = Json::object();
      // A field owned whole and also in part: "." stands for it whole.
      if (had && next.empty() && i + 1 < path.size()) next[std::string(kItself)] = Json::object();
      at = &next;
    }
  }
  return out;
}

namespace {
void Read(const Json& node, OwnedPath& path, OwnedFields& out) {
  for (const auto& [element, child] : node.items()) {
    bool of_field = !path.empty() && path.back().starts_with("f:");
    if (element == kItself && of_field) {
      out.insert(path);  // the field itself
      continue;
    }
    path.push_back(element);
    if (child.is_object() && !child.empty()) {
      Read(child, path, out);
    } else {
      out.insert(path);
    }
    path.pop_back();
  }
}
}  // namespace

OwnedFields FromFieldsV1(const Json& fields_v1) {
  OwnedFields out;
  OwnedPath path;
  if (fields_v1.is_object()) Read(fields_v1, path, out);
  return out;
}

std::string DescribeField(const OwnedPath& path) {
  std::string out;
  for (const std::string& element : path) {
    if (element == kItself) continue;
    if (element.starts_with("f:")) {
      out += "." + element.substr(2);
      continue;
    }
    Json named = Named(element);
    if (element.starts_with("v:") || !named.is_object()) {
      out += "[=" + element.substr(2) + "]";
      continue;
    }
    std::vector<std::string> keys;
    for (const auto& [k, v] : named.items()) {
      keys.push_back(k + "=" + (v.is_string() ? v.get<std::string>() : v.dump()));
    }
    out += fmt::format("[{}]", fmt::join(keys, ","));
  }
  return out;
}

Result<Json> ApplyConfiguration(const Json& live, const Json& applied, const FieldManager& manager,
                                bool force, const PatchSchema* schema,
                                std::vector<ApplyConflict>& conflicts) {
  OwnedFields applying = FieldsOf(applied, schema);
  std::vector<Entry> entries = EntriesOf(live);
  for (Entry& other : entries) {
    if (other.manager == manager.name) continue;
    for (const OwnedPath& path : applying) {
      if (!other.fields.contains(path)) continue;
      const Json* have = At(live, path);
      const Json* want = At(applied, path);
      if (have == nullptr || (want != nullptr && *have == *want)) continue;  // shared
      if (force) {
        other.fields.erase(path);
      } else {
        conflicts.push_back(
            {other.manager, api::StringAt(other.raw, "apiVersion"), DescribeField(path)});
      }
    }
  }
  if (!conflicts.empty()) return Status(StatusCode::kAborted, "apply conflicts");
  Entry& own = EntryFor(entries, manager, "Apply");
  Json out = live;
  for (const OwnedPath& path : own.fields) {
    if (applying.contains(path)) continue;
    bool kept = std::any_of(entries.begin(), entries.end(),
                            [&](const Entry& e) { return &e != &own && e.fields.contains(path); });
    if (!kept) RemoveAt(out, path);  // applied before, now left out, no one else's
  }
  Json config = applied;
  config.erase("status");
  if (auto meta = config.find("metadata"); meta != config.end() && meta->is_object()) {
    for (const char* field :
         {"managedFields", "uid", "resourceVersion", "generation", "creationTimestamp"}) {
      meta->erase(field);
    }
  }
  MergeInto(out, config, schema);
  own.fields = std::move(applying);
  Stamp(own, manager);
  StoreEntries(out, entries);
  return out;
}

void RecordUpdate(const Json& before, Json& after, const FieldManager& manager,
                  const PatchSchema* schema) {
  OwnedFields now = FieldsOf(after, schema);
  OwnedFields changed;
  OwnedFields gone;
  if (before.is_null()) {
    changed = now;
  } else {
    OwnedFields was = FieldsOf(before, schema);
    for (const OwnedPath& path : now) {
      const Json* old_value = was.contains(path) ? At(before, path) : nullptr;
      if (old_value == nullptr || *old_value != *At(after, path)) changed.insert(path);
    }
    std::set_difference(was.begin(), was.end(), now.begin(), now.end(),
                        std::inserter(gone, gone.end()));
  }
  if (changed.empty() && gone.empty()) return;
  std::vector<Entry> entries = EntriesOf(after);
  for (Entry& e : entries) {
    for (const OwnedPath& path : changed) e.fields.erase(path);
    for (const OwnedPath& path : gone) e.fields.erase(path);
  }
  Entry& own = EntryFor(entries, manager, "Update");
  own.fields.insert(changed.begin(), changed.end());
  Stamp(own, manager);
  StoreEntries(after, entries);
}

}  // namespace trainyard::server
