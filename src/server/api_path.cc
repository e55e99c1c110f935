#include "server/api_path.h"

#include <fmt/format.h>

#include <vector>

#include "api/names.h"
#include "api/registry.h"

namespace trainyard::server {
namespace {

std::vector<std::string> Segments(std::string_view path) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    if (end > start) out.emplace_back(path.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

Status CheckName(const std::string& what, const std::string& name) {
  api::NameProblems problems = api::Dns1123SubdomainProblems(name);
  if (problems.empty()) return OkStatus();
  return InvalidArgumentError(
      fmt::format("invalid {} {:?} in the path: {}", what, name, problems.front()));
}

}  // namespace

Result<ApiTarget> ParseApiPath(std::string_view path) {
  std::vector<std::string> s = Segments(path);
  auto not_found = [&] { return NotFoundError(fmt::format("the server could not find {}", path)); };
  std::string group, version;
  size_t i = 0;
  if (s.size() >= 2 && s[0] == "api") {
    version = s[1];
    i = 2;
  } else if (s.size() >= 3 && s[0] == "apis") {
    group = s[1];
    version = s[2];
    i = 3;
  } else {
    return not_found();
  }
  ApiTarget target;
  std::vector<std::string> rest(s.begin() + static_cast<ptrdiff_t>(i), s.end());
  // /namespaces/<ns>/<resource>/...: a namespaced resource; but
  // /namespaces and /namespaces/<name>[/status] are Namespaces themselves.
  if (rest.size() >= 3 && rest[0] == "namespaces" && rest[2] != "status") {
    target.namespace_ = rest[1];
    RETURN_IF_ERROR(CheckName("namespace", target.namespace_));
    rest.erase(rest.begin(), rest.begin() + 2);
  }
  if (rest.empty() || rest.size() > 3) return not_found();
  target.resource = api::FindResourceType(group, version, rest[0]);
  if (target.resource == nullptr) return not_found();
  if (!target.resource->namespaced && !target.namespace_.empty()) return not_found();
  if (rest.size() >= 2) {
    target.name = rest[1];
    RETURN_IF_ERROR(CheckName("name", target.name));
  }
  if (rest.size() == 3) {
    target.subresource = rest[2];
    bool pod = target.resource->role == api::ResourceRole::kPod;
    bool tracked = target.resource->strategy.tracking != api::Tracking::kNone;
    bool known = (rest[2] == "status" && target.resource->has_status) ||
                 (rest[2] == "scale" && target.resource->scale) ||
                 (rest[2] == "log" && target.resource->has_log) ||
                 ((rest[2] == "binding" || rest[2] == "exec") && pod) ||
                 (rest[2] == "token" && target.resource->strategy.token_request) ||
                 ((rest[2] == "artifacts" || rest[2] == "observations") && tracked);
    if (!known) return not_found();
  }
  return target;
}

namespace {

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Go's QueryUnescape: "+" is a space, %XX a byte; false on a bad escape.
bool Unescape(std::string_view in, std::string& out) {
  out.clear();
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '+') {
      out += ' ';
    } else if (in[i] != '%') {
      out += in[i];
    } else {
      int hi = i + 2 < in.size() ? HexDigit(in[i + 1]) : -1;
      int lo = hi >= 0 ? HexDigit(in[i + 2]) : -1;
      if (lo < 0) return false;
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    }
  }
  return true;
}

}  // namespace

std::multimap<std::string, std::string> ParseQuery(std::string_view query) {
  std::multimap<std::string, std::string> out;
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (pair.empty()) continue;
    size_t eq = pair.find('=');
    std::string key, value;
    bool ok = Unescape(pair.substr(0, eq), key) &&
              (eq == std::string_view::npos || Unescape(pair.substr(eq + 1), value));
    if (ok) out.emplace(std::move(key), std::move(value));
  }
  return out;
}

}  // namespace trainyard::server
