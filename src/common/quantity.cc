#include "common/quantity.h"

#include <fmt/format.h>

#include <cctype>
#include <optional>

#include "common/int128.h"

namespace trainyard {
namespace {

// Anything at or above this is too big to carry on multiplying safely.
constexpr Int128 kOverflowGuard = Int128(1) << 120;

struct Scale {
  int binary_shift = 0;  // multiply by 2^binary_shift
  int decimal_exp = 0;   // multiply by 10^decimal_exp
};

std::optional<Scale> ParseSuffix(std::string_view s) {
  if (s.empty()) return Scale{};
  if (s.size() == 2 && s[1] == 'i') {
    switch (s[0]) {
      case 'K':
        return Scale{10, 0};
      case 'M':
        return Scale{20, 0};
      case 'G':
        return Scale{30, 0};
      case 'T':
        return Scale{40, 0};
      case 'P':
        return Scale{50, 0};
      case 'E':
        return Scale{60, 0};
      default:
        return std::nullopt;
    }
  }
  if (s.size() == 1) {
    switch (s[0]) {
      case 'n':
        return Scale{0, -9};
      case 'u':
        return Scale{0, -6};
      case 'm':
        return Scale{0, -3};
      case 'k':
        return Scale{0, 3};
      case 'M':
        return Scale{0, 6};
      case 'G':
        return Scale{0, 9};
      case 'T':
        return Scale{0, 12};
      case 'P':
        return Scale{0, 15};
      case 'E':
        return Scale{0, 18};
      default:
        break;
    }
  }
  if (s[0] != 'e' && s[0] != 'E') return std::nullopt;
  std::string_view exp = s.substr(1);
  bool negative = false;
  if (!exp.empty() && (exp[0] == '+' || exp[0] == '-')) {
    negative = exp[0] == '-';
    exp.remove_prefix(1);
  }
  if (exp.empty() || exp.size() > 4) return std::nullopt;
  int value = 0;
  for (char c : exp) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return Scale{0, negative ? -value : value};
}

Status FormatError() { return InvalidArgumentError(std::string(kQuantityFormatMessage)); }

}  // namespace

Result<Quantity> Quantity::Parse(std::string_view text) {
  std::string_view s = text;
  bool negative = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  // Mantissa digits, with the position of the decimal point.
  Int128 mantissa = 0;
  int fraction_digits = 0;
  bool seen_point = false;
  bool seen_digit = false;
  size_t i = 0;
  for (; i < s.size(); ++i) {
    char c = s[i];
    if (c == '.') {
      if (seen_point) return FormatError();
      seen_point = true;
      continue;
    }
    if (!std::isdigit(static_cast<unsigned char>(c))) break;
    seen_digit = true;
    if (mantissa == 0 && c == '0' && !seen_point) continue;  // leading zero
    if (mantissa >= kOverflowGuard / 10) {
      // More precision than anything can use: past the 36th significant
      // digit only a fraction can still be exact.
      if (!seen_point) return OutOfRangeError(fmt::format("quantity {} is too large", text));
      continue;
    }
    mantissa = mantissa * 10 + (c - '0');
    if (seen_point) ++fraction_digits;
  }
  if (!seen_digit) return FormatError();
  std::optional<Scale> scale = ParseSuffix(s.substr(i));
  if (!scale) return FormatError();

  // value * 1000 = mantissa * 2^shift * 10^(exp + 3 - fraction_digits)
  Int128 numerator = mantissa;
  Int128 denominator = 1;
  int exp10 = scale->decimal_exp + 3 - fraction_digits;
  auto too_large = [&] { return OutOfRangeError(fmt::format("quantity {} is too large", text)); };
  for (int k = 0; k < scale->binary_shift && numerator != 0; ++k) {
    if (numerator >= kOverflowGuard) return too_large();
    numerator *= 2;
  }
  for (; exp10 > 0 && numerator != 0; --exp10) {
    if (numerator >= kOverflowGuard) return too_large();
    numerator *= 10;
  }
  for (; exp10 < 0; ++exp10) {
    if (denominator >= kOverflowGuard) {
      denominator = 0;  // the value is below any representable fraction
      break;
    }
    denominator *= 10;
  }
  // Round toward +infinity: up for positive values, toward zero for negative.
  Int128 floor = denominator == 0 ? 0 : numerator / denominator;
  bool exact = denominator != 0 && numerator % denominator == 0;
  if (denominator == 0) exact = numerator == 0;
  Int128 magnitude = (negative || exact) ? floor : floor + 1;
  if (magnitude > INT64_MAX) return too_large();
  int64_t value = negative ? -static_cast<int64_t>(magnitude) : static_cast<int64_t>(magnitude);
  return Quantity(value, std::string(text));
}

Quantity Quantity::FromMilli(int64_t milli) {
  std::string text = milli % 1000 == 0 ? std::to_string(milli / 1000) : fmt::format("{}m", milli);
  return Quantity(milli, std::move(text));
}

int64_t Quantity::Value() const {
  int64_t units = milli_ / 1000;
  if (milli_ % 1000 > 0) ++units;
  return units;
}

}  // namespace trainyard
