#include "common/field_path.h"

#include <fmt/format.h>

namespace trainyard {

FieldPath FieldPath::Child(std::string_view name) const {
  FieldPath p = *this;
  p.segments_.push_back({Kind::kChild, std::string(name)});
  return p;
}

FieldPath FieldPath::Index(int64_t index) const {
  FieldPath p = *this;
  p.segments_.push_back({Kind::kIndex, std::to_string(index)});
  return p;
}

FieldPath FieldPath::Key(std::string_view key) const {
  FieldPath p = *this;
  p.segments_.push_back({Kind::kKey, std::string(key)});
  return p;
}

FieldPath FieldPath::AnyIndex() const {
  FieldPath p = *this;
  p.segments_.push_back({Kind::kIndex, "*"});
  return p;
}

FieldPath FieldPath::AnyKey() const {
  FieldPath p = *this;
  p.segments_.push_back({Kind::kKey, "*"});
  return p;
}

FieldPath FieldPath::Concat(const FieldPath& rest) const {
  FieldPath p = *this;
  p.segments_.insert(p.segments_.end(), rest.segments_.begin(), rest.segments_.end());
  return p;
}

bool FieldPath::IsWithin(const FieldPath& other) const {
  if (other.segments_.size() > segments_.size()) return false;
  for (size_t i = 0; i < other.segments_.size(); ++i) {
    if (!(segments_[i] == other.segments_[i])) return false;
  }
  return true;
}

std::string FieldPath::ToString() const {
  std::string out;
  for (const Segment& s : segments_) {
    if (s.kind == Kind::kChild) {
      if (!out.empty()) out += '.';
      out += s.text;
    } else {
      out += '[';
      out += s.text;
      out += ']';
    }
  }
  return out;
}

std::string Quote(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          out += fmt::format("\\x{:02x}", c);
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
  return out;
}

FieldError FieldError::Required(FieldPath path, std::string detail) {
  return {FieldErrorType::kRequired, std::move(path), std::nullopt, std::move(detail)};
}
FieldError FieldError::Forbidden(FieldPath path, std::string detail) {
  return {FieldErrorType::kForbidden, std::move(path), std::nullopt, std::move(detail)};
}
FieldError FieldError::Invalid(FieldPath path, std::string_view value, std::string detail) {
  return {FieldErrorType::kInvalid, std::move(path), Quote(value), std::move(detail)};
}
FieldError FieldError::Invalid(FieldPath path, int64_t value, std::string detail) {
  return {FieldErrorType::kInvalid, std::move(path), std::to_string(value), std::move(detail)};
}
FieldError FieldError::InvalidRendered(FieldPath path, std::string rendered, std::string detail) {
  // No rendering: the detail says it all (a value spanning several fields).
  std::optional<std::string> value;
  if (!rendered.empty()) value = std::move(rendered);
  return {FieldErrorType::kInvalid, std::move(path), std::move(value), std::move(detail)};
}
FieldError FieldError::NotSupported(FieldPath path, std::string_view value,
                                    const std::vector<std::string>& supported) {
  std::string detail = "supported values: ";
  for (size_t i = 0; i < supported.size(); ++i) {
    if (i > 0) detail += ", ";
    detail += Quote(supported[i]);
  }
  return {FieldErrorType::kNotSupported, std::move(path), Quote(value), std::move(detail)};
}
FieldError FieldError::Duplicate(FieldPath path, std::string_view value) {
  return {FieldErrorType::kDuplicate, std::move(path), Quote(value), ""};
}
FieldError FieldError::NotFound(FieldPath path, std::string_view value, std::string detail) {
  return {FieldErrorType::kNotFound, std::move(path), Quote(value), std::move(detail)};
}
FieldError FieldError::TooLong(FieldPath path, int64_t max_length) {
  return {FieldErrorType::kTooLong, std::move(path), std::nullopt,
          fmt::format("must have at most {} characters", max_length)};
}
FieldError FieldError::UnknownField(FieldPath path, std::string detail) {
  return {FieldErrorType::kUnknownField, std::move(path), std::nullopt, std::move(detail)};
}

namespace {
std::string_view TypeName(FieldErrorType type) {
  switch (type) {
    case FieldErrorType::kRequired:
      return "Required value";
    case FieldErrorType::kForbidden:
      return "Forbidden";
    case FieldErrorType::kInvalid:
      return "Invalid value";
    case FieldErrorType::kNotSupported:
      return "Unsupported value";
    case FieldErrorType::kDuplicate:
      return "Duplicate value";
    case FieldErrorType::kNotFound:
      return "Not found";
    case FieldErrorType::kTooLong:
      return "Too long";
    case FieldErrorType::kUnknownField:
      return "Unknown field";
  }
  return "Invalid value";
}
}  // namespace

std::string FieldError::ToString() const {
  std::string out = path.ToString();
  out += ": ";
  out += TypeName(type);
  if (value) {
    out += ": ";
    out += *value;
  }
  if (!detail.empty()) {
    out += ": ";
    out += detail;
  }
  for (size_t i = 0; i < belongs_at.size(); ++i) {
    out += i == 0 ? "; did you mean " : " or ";
    out += belongs_at[i].ToString();
    if (i + 1 == belongs_at.size()) out += "?";
  }
  return out;
}

}  // namespace trainyard
