// Kubernetes resource quantities (`500m`, `4Gi`, `1.5`, `2e3`), parsed
// exactly into integer milli-units. No floating point is involved anywhere:
// the decimal or binary value is computed in 128-bit integers and rounded up
// to the next milli-unit, as Kubernetes does when it asks for MilliValue().
//
// The text a user wrote is kept, so that writing an object back gives the
// quantity as it was written; equality and ordering compare values only.
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace trainyard {

class Quantity {
 public:
  Quantity() : text_("0") {}

  // Parses `<sign><digits>[.<digits>][suffix]` where suffix is one of
  // Ki Mi Gi Ti Pi Ei, n u m k M G T P E, or e<int>/E<int>. Values beyond
  // what int64 milli-units can hold (about 9.2e15) are OUT_OF_RANGE.
  static Result<Quantity> Parse(std::string_view text);
  static Quantity FromMilli(int64_t milli);
  static Quantity FromUnits(int64_t units) { return FromMilli(units * 1000); }

  int64_t milli() const { return milli_; }
  // Whole units, rounded up: 1500m -> 2, 4Gi -> 4294967296.
  int64_t Value() const;
  // True when the quantity is a whole number of units (no milli part).
  bool IsInteger() const { return milli_ % 1000 == 0; }
  const std::string& text() const { return text_; }

  bool operator==(const Quantity& o) const { return milli_ == o.milli_; }
  std::strong_ordering operator<=>(const Quantity& o) const { return milli_ <=> o.milli_; }

 private:
  Quantity(int64_t milli, std::string text) : milli_(milli), text_(std::move(text)) {}

  int64_t milli_ = 0;
  std::string text_;
};

// The message Kubernetes gives for a string that is not a quantity.
inline constexpr std::string_view kQuantityFormatMessage =
    "quantities must match the regular expression "
    "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

}  // namespace trainyard
