#include "store/list_query.h"

#include "api/json.h"
#include "store/object_store.h"

namespace trainyard::store {

std::optional<std::string> FieldAt(const api::Json& object, std::string_view path) {
  const api::Json* at = &object;
  size_t start = 0;
  while (start <= path.size()) {
    size_t dot = path.find('.', start);
    if (dot == std::string_view::npos) dot = path.size();
    if (!at->is_object()) return std::nullopt;
    auto it = at->find(std::string(path.substr(start, dot - start)));
    if (it == at->end()) return std::nullopt;
    at = &*it;
    start = dot + 1;
  }
  if (at->is_string()) return at->get<std::string>();
  if (at->is_null()) return std::nullopt;
  return at->dump();
}

bool MatchesQuery(const ListQuery& query, const api::Json& object) {
  std::string namespace_ = api::StringAt(object, {"metadata", "namespace"});
  if (!query.namespace_.empty() && namespace_ != query.namespace_) return false;
  if (!query.after.first.empty() || !query.after.second.empty()) {
    std::pair<std::string, std::string> key{namespace_,
                                            api::StringAt(object, {"metadata", "name"})};
    if (key <= query.after) return false;
  }
  for (const auto& [key, value] : query.labels) {
    const api::Json& labels = api::ValueAt(object, {"metadata", "labels"});
    auto it = labels.is_object() ? labels.find(key) : labels.end();
    if (!labels.is_object() || it == labels.end() || !it->is_string() || *it != value) {
      return false;
    }
  }
  for (const auto& [path, value] : query.fields) {
    if (FieldAt(object, path).value_or("") != value) return false;
  }
  return true;
}

// Without an index: every object of the kind and namespace, checked.
// The version is read first: the objects are as of it or newer, so a
// watch from it may repeat a change, never miss one.
Result<int64_t> ObjectReader::ScanWhere(const ListQuery& query,
                                        const std::function<bool(const api::Json&)>& visit) const {
  int64_t resource_version = CurrentResourceVersion();
  bool more = true;
  RETURN_IF_ERROR(Scan(query.kind, query.namespace_, [&](const api::Json& object) {
    if (more && MatchesQuery(query, object)) more = visit(object);
  }));
  return resource_version;
}

}  // namespace trainyard::store
