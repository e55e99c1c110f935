#include "api/names.h"

#include <fmt/format.h>

namespace trainyard::api {
namespace {

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool IsAlnum(char c) { return IsLowerAlnum(c) || (c >= 'A' && c <= 'Z'); }
bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

std::string MaxLength(size_t n) { return fmt::format("must be no more than {} characters", n); }

// [a-z0-9]([-a-z0-9]*[a-z0-9])?
bool MatchesDns1123Label(std::string_view s) {
  if (s.empty() || !IsLowerAlnum(s.front()) || !IsLowerAlnum(s.back())) return false;
  for (char c : s) {
    if (!IsLowerAlnum(c) && c != '-') return false;
  }
  return true;
}

// ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]
bool MatchesQualifiedNamePart(std::string_view s) {
  if (s.empty() || !IsAlnum(s.front()) || !IsAlnum(s.back())) return false;
  for (char c : s) {
    if (!IsAlnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

constexpr const char* kDns1123LabelMessage =
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
constexpr const char* kDns1123SubdomainMessage =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

}  // namespace

NameProblems Dns1035LabelProblems(std::string_view value) {
  NameProblems problems;
  if (value.size() > 63) problems.push_back(MaxLength(63));
  bool ok =
      !value.empty() && value.front() >= 'a' && value.front() <= 'z' && IsLowerAlnum(value.back());
  for (char c : value) ok = ok && (IsLowerAlnum(c) || c == '-');
  if (!ok) {
    problems.push_back(
        "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with "
        "an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "
        "'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')");
  }
  return problems;
}

NameProblems Dns1123LabelProblems(std::string_view value) {
  NameProblems problems;
  if (value.size() > 63) problems.push_back(MaxLength(63));
  if (!MatchesDns1123Label(value)) problems.push_back(kDns1123LabelMessage);
  return problems;
}

NameProblems Dns1123SubdomainProblems(std::string_view value) {
  NameProblems problems;
  if (value.size() > 253) problems.push_back(MaxLength(253));
  bool ok = !value.empty();
  size_t start = 0;
  while (ok && start <= value.size()) {
    size_t dot = value.find('.', start);
    std::string_view part = value.substr(start, dot == std::string_view::npos ? dot : dot - start);
    ok = MatchesDns1123Label(part);
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  if (!ok) problems.push_back(kDns1123SubdomainMessage);
  return problems;
}

NameProblems QualifiedNameProblems(std::string_view value) {
  NameProblems problems;
  std::string_view name = value;
  if (size_t slash = value.find('/'); slash != std::string_view::npos) {
    std::string_view prefix = value.substr(0, slash);
    name = value.substr(slash + 1);
    if (prefix.empty()) {
      problems.push_back("prefix part must be non-empty");
    } else {
      for (const std::string& p : Dns1123SubdomainProblems(prefix)) {
        problems.push_back("prefix part " + p);
      }
    }
  }
  if (name.empty()) {
    problems.push_back("name part must be non-empty");
    return problems;
  }
  if (name.size() > 63) problems.push_back("name part " + MaxLength(63));
  if (!MatchesQualifiedNamePart(name)) {
    problems.push_back(
        "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and "
        "end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "
        "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')");
  }
  return problems;
}

NameProblems LabelValueProblems(std::string_view value) {
  NameProblems problems;
  if (value.size() > 63) problems.push_back(MaxLength(63));
  if (!value.empty() && !MatchesQualifiedNamePart(value)) {
    problems.push_back(
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' "
        "or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
        "'my_value',  or '12345', regex used for validation is "
        "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')");
  }
  return problems;
}

NameProblems EnvVarNameProblems(std::string_view value) {
  NameProblems problems;
  bool ok = !value.empty() && !(value.front() >= '0' && value.front() <= '9');
  for (char c : value) ok = ok && (IsAlnum(c) || c == '_' || c == '-' || c == '.');
  if (!ok) {
    problems.push_back(
        "a valid environment variable name must consist of alphabetic characters, digits, '_', "
        "'-', or '.', and must not start with a digit (e.g. 'my.env-name',  or 'MY_ENV.NAME',  "
        "or 'MyEnvName1', regex used for validation is '[-._a-zA-Z][-._a-zA-Z0-9]*')");
  }
  return problems;
}

NameProblems PortNameProblems(std::string_view value) {
  NameProblems problems;
  if (value.size() > 15) problems.push_back(MaxLength(15));
  bool charset_ok = true;
  bool has_letter = false;
  for (char c : value) {
    charset_ok = charset_ok && (IsLowerAlnum(c) || c == '-');
    has_letter = has_letter || IsAlpha(c);
  }
  if (!charset_ok) {
    problems.push_back("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)");
  }
  if (!has_letter) problems.push_back("must contain at least one letter (a-z)");
  if (value.find("--") != std::string_view::npos) {
    problems.push_back("must not contain consecutive hyphens");
  }
  if (!value.empty() && (value.front() == '-' || value.back() == '-')) {
    problems.push_back("must not begin or end with a hyphen");
  }
  return problems;
}

NameProblems LocalDescendingPathProblems(std::string_view value) {
  NameProblems problems;
  if (value.starts_with('/')) problems.push_back("must be a relative path");
  for (std::string_view rest = value;;) {
    size_t slash = rest.find('/');
    if (rest.substr(0, slash) == "..") {
      problems.push_back("must not contain '..'");  // once, however many there are
      break;
    }
    if (slash == std::string_view::npos) break;
    rest.remove_prefix(slash + 1);
  }
  return problems;
}

NameProblems LocalNonReservedPathProblems(std::string_view value) {
  NameProblems problems = LocalDescendingPathProblems(value);
  // "..data" and the like: not said twice when the '..' rule already spoke.
  if (value.starts_with("..") && !value.starts_with("../")) {
    problems.push_back("must not start with '..'");
  }
  return problems;
}

namespace {
constexpr std::string_view kSafeAlphabet = "bcdfghjklmnpqrstvwxz2456789";
}  // namespace

std::string RandomNameSuffix(std::mt19937& random, int length) {
  std::uniform_int_distribution<size_t> pick(0, kSafeAlphabet.size() - 1);
  std::string out;
  for (int i = 0; i < length; ++i) out += kSafeAlphabet[pick(random)];
  return out;
}

std::string SafeEncode(std::string_view text) {
  std::string out;
  for (unsigned char c : text) out += kSafeAlphabet[c % kSafeAlphabet.size()];
  return out;
}

}  // namespace trainyard::api
