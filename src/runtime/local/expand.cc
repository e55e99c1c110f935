#include "runtime/local/expand.h"

#include <algorithm>

namespace trainyard::runtime {

std::optional<std::string> ExpandReferences(std::string_view input, const Lookup& lookup,
                                            size_t max_bytes) {
  std::string out;
  out.reserve(std::min(input.size(), max_bytes));
  // Appends `piece`, unless that would pass the bound.
  auto append = [&](std::string_view piece) {
    if (piece.size() > max_bytes - out.size()) return false;
    out += piece;
    return true;
  };
  size_t i = 0;
  while (i < input.size()) {
    std::string_view piece = input.substr(i, 1);  // as written, by default
    size_t used = 1;
    if (input[i] == '$' && i + 1 < input.size() && input[i + 1] == '$') {
      piece = "$";  // escaped: "$$" is "$"
      used = 2;
    } else if (input[i] == '$' && i + 1 < input.size() && input[i + 1] == '(') {
      size_t close = input.find(')', i + 2);
      // No closing parenthesis: no reference, "$(" stays as written.
      used = close == std::string_view::npos ? 2 : close - i + 1;
      piece = input.substr(i, used);
      if (close != std::string_view::npos) {
        std::optional<std::string> value = lookup(input.substr(i + 2, close - i - 2));
        if (value && !append(*value)) return std::nullopt;
        if (value) piece = {};
      }
    }
    if (!append(piece)) return std::nullopt;
    i += used;
  }
  return out;
}

}  // namespace trainyard::runtime
