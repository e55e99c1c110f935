#include "runtime/local/expand.h"

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

}  // namespace trainyard::runtime
