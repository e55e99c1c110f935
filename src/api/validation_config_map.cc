// ConfigMap validation, as Kubernetes' ValidateConfigMap: key names, no key
// in both data and binaryData, at most 1 MiB in all.
#include <algorithm>
#include <cctype>

#include "api/validation_internal.h"
#include "common/strings.h"

namespace trainyard::api::internal {
namespace {

constexpr size_t kMaxConfigMapBytes = 1024 * 1024;

}  // namespace

std::vector<std::string> ConfigKeyProblems(const std::string& key) {
  std::vector<std::string> problems;
  if (key.size() > 253) problems.push_back("must be no more than 253 characters");
  bool allowed = !key.empty() && std::all_of(key.begin(), key.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '-' || c == '_' || c == '.';
  });
  if (!allowed) {
    problems.push_back(
        "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. "
        "'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is "
        "'[-._a-zA-Z0-9]+')");
  }
  if (key == ".") {
    problems.push_back("must not be '.'");
  } else if (key == "..") {
    problems.push_back("must not be '..'");
  } else if (key.starts_with("..")) {
    problems.push_back("must not start with '..'");
  }
  return problems;
}

void ValidateConfigMap(const ConfigMap& map, ValidationResult& out) {
  size_t total = 0;
  for (const auto& [key, value] : map.data) {
    for (const std::string& p : ConfigKeyProblems(key))
      out.errors.push_back(FieldError::Invalid(FieldPath("data"), key, p));
    total += value.size();
  }
  for (const auto& [key, value] : map.binary_data) {
    for (const std::string& p : ConfigKeyProblems(key))
      out.errors.push_back(FieldError::Invalid(FieldPath("binaryData"), key, p));
    if (map.data.contains(key)) {
      out.errors.push_back(
          FieldError::Invalid(FieldPath("data"), key, "duplicate of key present in binaryData"));
    }
    if (!Base64Decode(value)) {
      out.errors.push_back(FieldError::InvalidRendered(FieldPath("binaryData").Key(key),
                                                       "\"<binary>\"", "must be base64-encoded"));
    }
    total += value.size() / 4 * 3;
  }
  if (total > kMaxConfigMapBytes) {
    out.errors.push_back(FieldError::TooLong(FieldPath("data"), kMaxConfigMapBytes));
  }
}

}  // namespace trainyard::api::internal
