#include "api/gjson.h"

#include <charconv>
#include <optional>
#include <vector>

namespace trainyard::api {
namespace {

// Splits at top-level separators (outside quotes, parentheses and brackets):
// each piece with the separator that precedes it ('\0' for the first).
struct Piece {
  char separator;
  std::string_view text;
};

std::vector<Piece> Split(std::string_view path) {
  std::vector<Piece> pieces;
  int depth = 0;
  bool quoted = false;
  size_t start = 0;
  char separator = '\0';
  for (size_t k = 0; k < path.size(); ++k) {
    char c = path[k];
    if (quoted) {
      if (c == '\\') ++k;
      if (c == '"') quoted = false;
      continue;
    }
    if (c == '"') quoted = true;
    if (c == '(' || c == '[') ++depth;
    if (c == ')' || c == ']') --depth;
    if (depth == 0 && (c == '.' || c == '|')) {
      pieces.push_back({separator, path.substr(start, k - start)});
      separator = c;
      start = k + 1;
    }
  }
  pieces.push_back({separator, path.substr(start)});
  return pieces;
}

std::optional<Json> ParseLiteral(std::string_view text) {
  Json value = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded() || value.is_structured()) return std::nullopt;
  return value;
}

bool Compare(const Json& lhs, std::string_view op, const Json& rhs) {
  if (op == "==") return lhs == rhs;
  if (op == "!=") return lhs != rhs;
  bool numbers = lhs.is_number() && rhs.is_number();
  bool strings = lhs.is_string() && rhs.is_string();
  if (!numbers && !strings) return false;
  if (op == "<") return lhs < rhs;
  if (op == "<=") return lhs <= rhs;
  if (op == ">") return lhs > rhs;
  if (op == ">=") return lhs >= rhs;
  return false;
}

// Whether `element` satisfies a query condition like `type=="Failed"`.
bool Satisfies(const Json& element, std::string_view condition) {
  static constexpr std::string_view kOperators[] = {"==", "!=", "<=", ">=", "<", ">"};
  bool quoted = false;
  for (size_t k = 0; k < condition.size(); ++k) {
    if (condition[k] == '"') quoted = !quoted;
    if (quoted) continue;
    for (std::string_view op : kOperators) {
      if (condition.substr(k, op.size()) != op) continue;
      std::optional<Json> literal = ParseLiteral(condition.substr(k + op.size()));
      if (!literal) return false;
      Json lhs = EvaluateGjson(element, condition.substr(0, k));
      return !lhs.is_null() && Compare(lhs, op, *literal);
    }
  }
  return !EvaluateGjson(element, condition).is_null();
}

Json Query(const Json& current, std::string_view condition, bool all) {
  if (!current.is_array()) return nullptr;
  Json matches = Json::array();
  for (const Json& element : current) {
    if (!Satisfies(element, condition)) continue;
    if (!all) return element;
    matches.push_back(element);
  }
  return all ? matches : Json(nullptr);
}

Json Step(const Json& current, std::string_view piece, bool& mapped) {
  mapped = false;
  if (piece == "@this") return current;
  if (piece == "#") {
    return current.is_array() ? Json(current.size()) : Json(nullptr);
  }
  if (piece.size() >= 3 && piece.substr(0, 2) == "#(") {
    bool all = piece.back() == '#';
    std::string_view body = piece.substr(2, piece.size() - (all ? 4 : 3));
    if (piece[piece.size() - (all ? 2 : 1)] != ')') return nullptr;
    mapped = all;
    return Query(current, body, all);
  }
  if (piece.size() >= 2 && piece.front() == '[' && piece.back() == ']') {
    // A multipath: one result per comma-separated path (none nested).
    Json results = Json::array();
    std::string_view body = piece.substr(1, piece.size() - 2);
    size_t start = 0;
    for (size_t k = 0; k <= body.size(); ++k) {
      if (k == body.size() || body[k] == ',') {
        Json r = EvaluateGjson(current, body.substr(start, k - start));
        if (!r.is_null()) results.push_back(std::move(r));
        start = k + 1;
      }
    }
    return results;
  }
  if (current.is_object()) {
    auto it = current.find(std::string(piece));
    return it == current.end() ? Json(nullptr) : *it;
  }
  if (current.is_array()) {
    size_t index = 0;
    auto [end, ec] = std::from_chars(piece.data(), piece.data() + piece.size(), index);
    if (ec == std::errc() && end == piece.data() + piece.size() && index < current.size()) {
      return current[index];
    }
  }
  return nullptr;
}

}  // namespace

Json EvaluateGjson(const Json& job, std::string_view path) {
  std::vector<Piece> pieces = Split(path);
  Json current = job;
  bool mapped = false;  // current holds the elements a '#(...)#' matched
  for (size_t k = 0; k < pieces.size(); ++k) {
    const Piece& piece = pieces[k];
    if (piece.text.empty()) return nullptr;
    if (mapped && piece.separator == '.') {
      // '.' after '#(...)#': the rest of the path, element by element.
      std::string_view rest = path.substr(static_cast<size_t>(piece.text.data() - path.data()));
      Json results = Json::array();
      for (const Json& element : current) {
        Json r = EvaluateGjson(element, rest);
        if (!r.is_null()) results.push_back(std::move(r));
      }
      return results;
    }
    current = Step(current, piece.text, mapped);
    if (current.is_null()) return nullptr;
  }
  return current;
}

ConditionMatch EvaluateJobCondition(const Json& job, std::string_view expression) {
  Json result = EvaluateGjson(job, expression);
  ConditionMatch match;
  const Json* element = nullptr;
  if (result.is_object()) element = &result;
  if (result.is_array() && !result.empty()) {
    element = result[0].is_object() ? &result[0] : nullptr;
    match.matched = true;
  }
  if (element != nullptr) {
    match.matched = true;
    if (auto it = element->find("reason"); it != element->end() && it->is_string()) {
      match.reason = it->get<std::string>();
    }
    if (auto it = element->find("message"); it != element->end() && it->is_string()) {
      match.message = it->get<std::string>();
    }
  }
  return match;
}

}  // namespace trainyard::api
