#include "server/selectors.h"

#include <fmt/format.h>

#include <algorithm>

#include "api/names.h"
#include "common/strings.h"
#include "store/list_query.h"

namespace trainyard::server {
namespace {

// Splits on commas outside parentheses: "a in (x,y),b=c" -> 2 terms.
std::vector<std::string_view> SplitTerms(std::string_view text) {
  std::vector<std::string_view> out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && text[i] == '(') ++depth;
    if (i < text.size() && text[i] == ')') --depth;
    if (i == text.size() || (text[i] == ',' && depth == 0)) {
      if (std::string_view t = Trim(text.substr(start, i - start)); !t.empty()) out.push_back(t);
      start = i + 1;
    }
  }
  return out;
}

}  // namespace

Result<Selector> Selector::ParseLabels(std::string_view text) {
  Selector s;
  for (std::string_view term : SplitTerms(text)) {
    Term t;
    size_t space = term.find(' ');
    if (space != std::string_view::npos && term.find('(') != std::string_view::npos) {
      t.key = std::string(Trim(term.substr(0, space)));
      std::string_view rest = Trim(term.substr(space));
      if (rest.starts_with("notin")) {
        t.op = Op::kNotIn;
        rest.remove_prefix(5);
      } else if (rest.starts_with("in")) {
        t.op = Op::kIn;
        rest.remove_prefix(2);
      } else {
        return InvalidArgumentError(fmt::format("unable to parse requirement: {:?}", term));
      }
      rest = Trim(rest);
      if (!rest.starts_with('(') || !rest.ends_with(')')) {
        return InvalidArgumentError(fmt::format("unable to parse requirement: {:?}", term));
      }
      for (std::string_view v : SplitTerms(rest.substr(1, rest.size() - 2)))
        t.values.emplace_back(v);
    } else if (size_t ne = term.find("!="); ne != std::string_view::npos) {
      t = {std::string(Trim(term.substr(0, ne))),
           Op::kNotEquals,
           {std::string(Trim(term.substr(ne + 2)))}};
    } else if (size_t eq = term.find('='); eq != std::string_view::npos) {
      size_t len = term.substr(eq).starts_with("==") ? 2 : 1;
      t = {std::string(Trim(term.substr(0, eq))),
           Op::kEquals,
           {std::string(Trim(term.substr(eq + len)))}};
    } else if (term.starts_with('!')) {
      t = {std::string(Trim(term.substr(1))), Op::kNotExists, {}};
    } else {
      t = {std::string(term), Op::kExists, {}};
    }
    if (!api::QualifiedNameProblems(t.key).empty()) {
      return InvalidArgumentError(fmt::format("unable to parse requirement: {:?}", term));
    }
    s.terms_.push_back(std::move(t));
  }
  return s;
}

Result<Selector> Selector::ParseFields(std::string_view text) {
  Selector s;
  s.fields_ = true;
  for (std::string_view term : SplitTerms(text)) {
    size_t ne = term.find("!=");
    size_t eq = term.find('=');
    if (ne != std::string_view::npos) {
      s.terms_.push_back({std::string(Trim(term.substr(0, ne))),
                          Op::kNotEquals,
                          {std::string(Trim(term.substr(ne + 2)))}});
    } else if (eq != std::string_view::npos) {
      size_t len = term.substr(eq).starts_with("==") ? 2 : 1;
      s.terms_.push_back({std::string(Trim(term.substr(0, eq))),
                          Op::kEquals,
                          {std::string(Trim(term.substr(eq + len)))}});
    } else {
      return InvalidArgumentError(fmt::format("invalid field selector: {:?}", term));
    }
    if (s.terms_.back().key.empty()) {
      return InvalidArgumentError(fmt::format("invalid field selector: {:?}", term));
    }
  }
  return s;
}

std::vector<std::pair<std::string, std::string>> Selector::Equalities() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const Term& t : terms_) {
    if ((t.op == Op::kEquals || t.op == Op::kIn) && t.values.size() == 1) {
      out.emplace_back(t.key, t.values[0]);
    }
  }
  return out;
}

bool Selector::Matches(const api::Json& object) const {
  for (const Term& t : terms_) {
    std::optional<std::string> value;
    if (fields_) {
      value = store::FieldAt(object, t.key);
      // Kubernetes compares a missing field as the empty string.
      if (!value) value = "";
    } else if (object.contains("metadata") && object["metadata"].is_object() &&
               object["metadata"].contains("labels") && object["metadata"]["labels"].is_object()) {
      const api::Json& labels = object["metadata"]["labels"];
      if (auto it = labels.find(t.key); it != labels.end() && it->is_string())
        value = it->get<std::string>();
    }
    auto listed = [&] {
      return value && std::find(t.values.begin(), t.values.end(), *value) != t.values.end();
    };
    bool ok = true;
    switch (t.op) {
      case Op::kEquals:
        ok = value && *value == t.values[0];
        break;
      case Op::kNotEquals:
        ok = !value || *value != t.values[0];
        break;
      case Op::kIn:
        ok = listed();
        break;
      case Op::kNotIn:
        ok = !listed();
        break;
      case Op::kExists:
        ok = value.has_value();
        break;
      case Op::kNotExists:
        ok = !value.has_value();
        break;
    }
    if (!ok) return false;
  }
  return true;
}

}  // namespace trainyard::server
