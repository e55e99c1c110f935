#include "runtime/local/expand.h"

#include <map>

namespace trainyard::runtime {

std::string ExpandReferences(std::string_view input, const Lookup& lookup) {
  std::string out;
  out.reserve(input.size());
  size_t i = 0;
  while (i < input.size()) {
    if (input[i] != '$' || i + 1 == input.size()) {
      out += input[i++];
      continue;
    }
    char next = input[i + 1];
    if (next == '$') {  // escaped: "$$" is "$"
      out += '$';
      i += 2;
    } else if (next == '(') {
      size_t close = input.find(')', i + 2);
      if (close == std::string_view::npos) {  // no reference: keep "$(" as written
        out += "$(";
        i += 2;
        continue;
      }
      std::string_view name = input.substr(i + 2, close - i - 2);
      std::optional<std::string> value = lookup(name);
      out += value ? *value : std::string(input.substr(i, close - i + 1));
      i = close + 1;
    } else {
      out += '$';
      ++i;
    }
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> ExpandEnv(
    const std::vector<std::pair<std::string, std::string>>& env) {
  std::map<std::string, std::string, std::less<>> defined;
  std::vector<std::pair<std::string, std::string>> out;
  auto lookup = [&](std::string_view name) -> std::optional<std::string> {
    auto it = defined.find(name);
    if (it == defined.end()) return std::nullopt;
    return it->second;
  };
  for (const auto& [name, value] : env) {
    std::string expanded = ExpandReferences(value, lookup);
    defined[name] = expanded;
    bool replaced = false;
    for (auto& entry : out) {
      if (entry.first == name) {
        entry.second = expanded;
        replaced = true;
      }
    }
    if (!replaced) out.emplace_back(name, std::move(expanded));
  }
  return out;
}

}  // namespace trainyard::runtime
