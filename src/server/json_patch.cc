#include "server/json_patch.h"

#include <fmt/format.h>

#include <string>

namespace trainyard::server {
namespace {

using api::Json;
using Pointer = Json::json_pointer;

Status NotApplicable(const std::string& message) { return FailedPreconditionError(message); }

// An operation's pointer field ("path" or "from").
Result<Pointer> PointerField(const Json& op, const char* field) {
  auto it = op.find(field);
  if (it == op.end() || !it->is_string()) {
    return NotApplicable(
        fmt::format("operation {:?} needs {:?}, a JSON pointer", api::StringAt(op, "op"), field));
  }
  try {
    return Pointer(it->get<std::string>());
  } catch (const nlohmann::json::exception&) {
    return NotApplicable(
        fmt::format("{} {:?} is not a JSON pointer", field, it->get<std::string>()));
  }
}

// The position a pointer's last token names in an array of `size`: "-" is
// the end (where `add` appends), anything else a decimal index without
// leading zeros.
Result<size_t> ArrayIndex(const std::string& token, size_t size, bool end_allowed) {
  if (token == "-" && end_allowed) return size;
  bool digits = !token.empty() && token.size() <= 9 && (token == "0" || token[0] != '0') &&
                token.find_first_not_of("0123456789") == std::string::npos;
  size_t index = digits ? std::stoul(token) : 0;
  if (!digits || index > size || (index == size && !end_allowed)) {
    return NotApplicable(fmt::format("array index {:?} is out of bounds", token));
  }
  return index;
}

Result<Json*> Find(Json& doc, const Pointer& path) {
  try {
    return &doc.at(path);
  } catch (const nlohmann::json::exception&) {
    return NotApplicable(fmt::format("doc is missing path: {:?}", path.to_string()));
  }
}

// The object or array that holds what `path` names.
Result<Json*> Container(Json& doc, const Pointer& path) {
  ASSIGN_OR_RETURN(Json * parent, Find(doc, path.parent_pointer()));
  if (!parent->is_object() && !parent->is_array()) {
    return NotApplicable(fmt::format("doc is missing path: {:?}", path.to_string()));
  }
  return parent;
}

Status Add(Json& doc, const Pointer& path, Json value) {
  if (path.empty()) {
    doc = std::move(value);
    return OkStatus();
  }
  ASSIGN_OR_RETURN(Json * parent, Container(doc, path));
  if (parent->is_object()) {
    (*parent)[path.back()] = std::move(value);
    return OkStatus();
  }
  ASSIGN_OR_RETURN(size_t index, ArrayIndex(path.back(), parent->size(), /*end_allowed=*/true));
  parent->insert(parent->begin() + static_cast<std::ptrdiff_t>(index), std::move(value));
  return OkStatus();
}

Result<Json> Remove(Json& doc, const Pointer& path) {
  if (path.empty()) return NotApplicable("the whole document cannot be removed");
  ASSIGN_OR_RETURN(Json * parent, Container(doc, path));
  if (parent->is_object()) {
    auto it = parent->find(path.back());
    if (it == parent->end()) {
      return NotApplicable(fmt::format("doc is missing path: {:?}", path.to_string()));
    }
    Json removed = std::move(*it);
    parent->erase(it);
    return removed;
  }
  ASSIGN_OR_RETURN(size_t index, ArrayIndex(path.back(), parent->size(), /*end_allowed=*/false));
  Json removed = std::move((*parent)[index]);
  parent->erase(index);
  return removed;
}

bool IsProperPrefix(const Pointer& prefix, const Pointer& path) {
  std::string a = prefix.to_string();
  std::string b = path.to_string();
  return b.size() > a.size() && b.starts_with(a) && b[a.size()] == '/';
}

struct Applier {
  Json& doc;
  const JsonPatchLimits& limits;
  int64_t copied = 0;

  Status Apply(const Json& op) {
    if (!op.is_object()) return NotApplicable("each operation must be an object");
    std::string kind = api::StringAt(op, "op");
    ASSIGN_OR_RETURN(Pointer path, PointerField(op, "path"));
    bool needs_value = kind == "add" || kind == "replace" || kind == "test";
    if (needs_value && !op.contains("value")) {
      return NotApplicable(fmt::format("operation {:?} needs a value", kind));
    }
    if (kind == "add") return Add(doc, path, op["value"]);
    if (kind == "remove") return Remove(doc, path).status();
    if (kind == "replace") {
      ASSIGN_OR_RETURN(Json * at, Find(doc, path));
      *at = op["value"];
      return OkStatus();
    }
    if (kind == "test") {
      ASSIGN_OR_RETURN(Json * at, Find(doc, path));
      if (*at == op["value"]) return OkStatus();
      return NotApplicable(fmt::format("testing value {:?} failed", path.to_string()));
    }
    if (kind == "move" || kind == "copy") {
      ASSIGN_OR_RETURN(Pointer from, PointerField(op, "from"));
      return kind == "move" ? Move(from, path) : Copy(from, path);
    }
    return NotApplicable(
        fmt::format("unexpected operation {:?}: want add, remove, replace, "
                    "move, copy or test",
                    kind));
  }

  Status Move(const Pointer& from, const Pointer& path) {
    if (from == path) return Find(doc, from).status();
    if (IsProperPrefix(from, path)) {
      return NotApplicable(fmt::format("{:?} cannot be moved into itself", from.to_string()));
    }
    ASSIGN_OR_RETURN(Json value, Remove(doc, from));
    return Add(doc, path, std::move(value));
  }

  Status Copy(const Pointer& from, const Pointer& path) {
    ASSIGN_OR_RETURN(Json * source, Find(doc, from));
    int64_t room = limits.max_copy_bytes - copied;
    copied += JsonSize(*source, room);
    if (copied > limits.max_copy_bytes) {
      return NotApplicable(
          fmt::format("Unable to complete the copy, the accumulated size increase of copy is {}, "
                      "exceeding the limit {}",
                      copied, limits.max_copy_bytes));
    }
    return Add(doc, path, *source);
  }
};

}  // namespace

int64_t JsonSize(const Json& value, int64_t cap) {
  switch (value.type()) {
    case Json::value_t::string:
      return static_cast<int64_t>(value.get_ref<const std::string&>().size()) + 2;
    case Json::value_t::array:
    case Json::value_t::object: {
      int64_t size = 2;
      for (auto it = value.begin(); it != value.end() && size <= cap; ++it) {
        if (value.is_object()) size += static_cast<int64_t>(it.key().size()) + 3;
        size += JsonSize(*it, cap - size) + 1;
      }
      return size;
    }
    default:
      return static_cast<int64_t>(value.dump().size());
  }
}

Status ApplyJsonPatch(Json& doc, const Json& patch, const JsonPatchLimits& limits) {
  if (!patch.is_array()) {
    return InvalidArgumentError("a JSON patch must be an array of operations");
  }
  if (patch.size() > limits.max_operations) {
    return Status(StatusCode::kResourceExhausted,
                  fmt::format("The allowed maximum operations in a JSON patch is {}, got {}",
                              limits.max_operations, patch.size()));
  }
  Applier applier{.doc = doc, .limits = limits};
  for (const Json& op : patch) RETURN_IF_ERROR(applier.Apply(op));
  return OkStatus();
}

}  // namespace trainyard::server
