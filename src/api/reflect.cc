#include "api/reflect.h"

#include <fmt/format.h>

#include <limits>

#include "common/strings.h"

namespace trainyard::api {

std::string RenderValue(const Json& j) {
  if (j.is_string()) return Quote(j.get<std::string>());
  std::string text = j.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  return text;
}

const char* JsonTypeName(const Json& j) {
  switch (j.type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::object:
      return "an object";
    case Json::value_t::array:
      return "a list";
    case Json::value_t::string:
      return "a string";
    case Json::value_t::boolean:
      return "a boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      return "an integer";
    case Json::value_t::number_float:
      return "a number";
    default:
      return "a value";
  }
}

FieldError TypeError(const FieldPath& path, const Json& j, const char* expected) {
  std::string detail = fmt::format("must be {}, not {}", expected, JsonTypeName(j));
  if (std::string_view(expected) == "a string" && (j.is_number() || j.is_boolean())) {
    detail += " (quote it)";
  }
  return FieldError::InvalidRendered(path, RenderValue(j), std::move(detail));
}

void HandleUnknownKeys(const Json& j, const FieldPath& path, const std::vector<std::string>& known,
                       Json* extra, FieldErrors& errors,
                       const std::vector<std::string>* kubernetes) {
  for (const auto& [key, value] : j.items()) {
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    bool kept = extra != nullptr &&
                (kubernetes == nullptr ||
                 std::find(kubernetes->begin(), kubernetes->end(), key) != kubernetes->end());
    if (kept) {
      if (!extra->is_object()) *extra = Json::object();
      (*extra)[key] = value;
      continue;
    }
    std::string detail = "not a field of this object";
    std::vector<std::string> candidates = known;
    if (kubernetes != nullptr)
      candidates.insert(candidates.end(), kubernetes->begin(), kubernetes->end());
    if (std::optional<std::string> near = ClosestMatch(key, candidates)) {
      detail += fmt::format("; did you mean {}?", Quote(*near));
    }
    errors.push_back(FieldError::UnknownField(path.Child(key), std::move(detail)));
  }
}

void Decode(const Json& j, const FieldPath& path, std::string& out, FieldErrors& errors) {
  if (!j.is_string()) {
    errors.push_back(TypeError(path, j, "a string"));
    return;
  }
  out = j.get<std::string>();
}

void Decode(const Json& j, const FieldPath& path, bool& out, FieldErrors& errors) {
  if (!j.is_boolean()) {
    errors.push_back(TypeError(path, j, "a boolean (true or false)"));
    return;
  }
  out = j.get<bool>();
}

namespace {
template <class Int>
void DecodeInteger(const Json& j, const FieldPath& path, Int& out, FieldErrors& errors) {
  if (j.is_number_integer() && !j.is_number_unsigned()) {
    int64_t v = j.get<int64_t>();
    if (v >= std::numeric_limits<Int>::min() && v <= std::numeric_limits<Int>::max()) {
      out = static_cast<Int>(v);
      return;
    }
  } else if (j.is_number_unsigned()) {
    uint64_t v = j.get<uint64_t>();
    if (v <= static_cast<uint64_t>(std::numeric_limits<Int>::max())) {
      out = static_cast<Int>(v);
      return;
    }
  } else if (!j.is_number()) {
    errors.push_back(TypeError(path, j, "an integer"));
    return;
  }
  if (j.is_number_float()) {
    errors.push_back(FieldError::InvalidRendered(path, RenderValue(j), "must be an integer"));
    return;
  }
  errors.push_back(FieldError::InvalidRendered(
      path, RenderValue(j), fmt::format("must be at most {}", std::numeric_limits<Int>::max())));
}
}  // namespace

void Decode(const Json& j, const FieldPath& path, int32_t& out, FieldErrors& errors) {
  DecodeInteger(j, path, out, errors);
}

void Decode(const Json& j, const FieldPath& path, int64_t& out, FieldErrors& errors) {
  DecodeInteger(j, path, out, errors);
}

void Decode(const Json& j, const FieldPath& path, double& out, FieldErrors& errors) {
  if (!j.is_number()) {
    errors.push_back(TypeError(path, j, "a number"));
    return;
  }
  out = j.get<double>();
}

void Decode(const Json& j, const FieldPath& path, Quantity& out, FieldErrors& errors) {
  // Kubernetes accepts quantities as strings or as bare numbers.
  std::string text;
  if (j.is_string()) {
    text = j.get<std::string>();
  } else if (j.is_number()) {
    text = j.dump();
  } else {
    errors.push_back(TypeError(path, j, "a quantity such as \"500m\" or \"4Gi\""));
    return;
  }
  Result<Quantity> q = Quantity::Parse(text);
  if (!q.ok()) {
    errors.push_back(FieldError::Invalid(path, text, q.status().message()));
    return;
  }
  out = *q;
}

void Decode(const Json& j, const FieldPath&, Json& out, FieldErrors&) { out = j; }

Json Encode(const std::string& v) { return v; }
Json Encode(bool v) { return v; }
Json Encode(int32_t v) { return v; }
Json Encode(int64_t v) { return v; }
Json Encode(double v) { return v; }
// Kubernetes always writes quantities as strings.
Json Encode(const Quantity& v) { return v.text(); }
Json Encode(const Json& v) { return v; }

bool IsEmpty(const std::string& v) { return v.empty(); }
bool IsEmpty(const Json& v) { return v.is_null(); }

}  // namespace trainyard::api
