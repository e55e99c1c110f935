// FieldPath names a field inside an object, rendered as Kubernetes does:
// `spec.pytorchReplicaSpecs[Master].template.spec.containers[0].image`.
// FieldError is one problem at one path, and FieldErrors collects every
// problem in an object, so users see all of them at once.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trainyard {

class FieldPath {
 public:
  FieldPath() = default;  // the root; renders as ""
  explicit FieldPath(std::string_view name) {
    segments_.push_back({Kind::kChild, std::string(name)});
  }

  FieldPath Child(std::string_view name) const;
  FieldPath Index(int64_t index) const;
  FieldPath Key(std::string_view key) const;
  // Any item of a list, any entry of a map: `[*]`, for paths that name
  // where a field may be rather than one place it is.
  FieldPath AnyIndex() const;
  FieldPath AnyKey() const;
  // `rest` below this path: spec.trialTemplate.trialSpec + spec.x.
  FieldPath Concat(const FieldPath& rest) const;

  bool empty() const { return segments_.empty(); }
  // True when `this` equals `other` or lies inside it.
  bool IsWithin(const FieldPath& other) const;
  std::string ToString() const;

  bool operator==(const FieldPath&) const = default;

  enum class Kind { kChild, kIndex, kKey };
  struct Segment {
    Kind kind;
    std::string text;  // "*" in AnyIndex and AnyKey
    bool operator==(const Segment&) const = default;
  };
  const std::vector<Segment>& segments() const { return segments_; }

 private:
  std::vector<Segment> segments_;
};

enum class FieldErrorType {
  kRequired,
  kForbidden,
  kInvalid,
  kNotSupported,
  kDuplicate,
  kNotFound,
  kTooLong,
  kUnknownField,
};

struct FieldError {
  FieldErrorType type;
  FieldPath path;
  std::optional<std::string> value;  // already rendered: "\"Foo\"", "3", "null"
  std::string detail;
  // An unknown field's places elsewhere in the object, nearest first:
  // "; did you mean A or B?" (paths, so that they move with the error's
  // when it is placed inside another object).
  std::vector<FieldPath> belongs_at;

  static FieldError Required(FieldPath path, std::string detail = "");
  static FieldError Forbidden(FieldPath path, std::string detail);
  static FieldError Invalid(FieldPath path, std::string_view value, std::string detail);
  static FieldError Invalid(FieldPath path, int64_t value, std::string detail);
  // `rendered` as is; empty prints no value at all.
  static FieldError InvalidRendered(FieldPath path, std::string rendered, std::string detail);
  static FieldError NotSupported(FieldPath path, std::string_view value,
                                 const std::vector<std::string>& supported);
  static FieldError Duplicate(FieldPath path, std::string_view value);
  static FieldError NotFound(FieldPath path, std::string_view value, std::string detail = "");
  static FieldError TooLong(FieldPath path, int64_t max_length);
  static FieldError UnknownField(FieldPath path, std::string detail);

  // `spec.x: Invalid value: "y": detail`, as Kubernetes prints field.Error.
  std::string ToString() const;
  bool operator==(const FieldError&) const = default;
};

using FieldErrors = std::vector<FieldError>;

// Go's %q for a string: double quotes, with quotes, backslashes and control
// characters escaped. Used to render bad values as Kubernetes does.
std::string Quote(std::string_view s);

}  // namespace trainyard
