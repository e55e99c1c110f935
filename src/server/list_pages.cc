// Paged lists (`limit` and `continue`), as kube-apiserver pages them: a
// page of at most `limit` items in key order (namespace, then name), and a
// token to ask for the rest. The token names the last key sent, so a page
// is never repeated nor skipped over when objects come and go between
// requests (an object created behind the token's key is not in the rest;
// kube-apiserver would serve the rest from the first page's snapshot, and
// leaves that object out too).
#include <fmt/format.h>

#include <charconv>

#include "api/json.h"
#include "api/object.h"
#include "common/strings.h"
#include "server/handler.h"
#include "server/handler_internal.h"

namespace trainyard::server {
namespace {

using internal::BadRequest;

std::pair<std::string, std::string> KeyOf(const api::Json& object) {
  return {api::StringAt(object, {"metadata", "namespace"}),
          api::StringAt(object, {"metadata", "name"})};
}

// {"rv": resourceVersion of the first page, "ns": ..., "name": ...} in
// base64: opaque to clients, as Kubernetes' tokens are.
std::string MakeToken(int64_t rv, const std::pair<std::string, std::string>& last) {
  return Base64Encode(api::Json{{"rv", rv}, {"ns", last.first}, {"name", last.second}}.dump());
}

struct Token {
  int64_t resource_version;
  std::pair<std::string, std::string> last;
};

std::optional<Token> ReadToken(const std::string& token) {
  std::optional<std::string> text = Base64Decode(token);
  if (!text) return std::nullopt;
  api::Json doc = api::Json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object() || !api::ValueAt(doc, "ns").is_string() ||
      !api::ValueAt(doc, "name").is_string() || !api::ValueAt(doc, "rv").is_number_integer()) {
    return std::nullopt;
  }
  return Token{doc["rv"].get<int64_t>(),
               {doc["ns"].get<std::string>(), doc["name"].get<std::string>()}};
}

}  // namespace

std::variant<ApiHandler::ListPage, ApiError> ApiHandler::Paged(const ApiRequest& request,
                                                               store::ListQuery query,
                                                               bool selected,
                                                               const ListScan& scan) {
  std::string limit_text = request.Param("limit");
  std::string token = request.Param("continue");
  std::optional<Token> after;
  if (!token.empty()) {
    after = ReadToken(token);
    if (!after) {
      return BadRequest(
          "continue: not a token this server gave; list again without it to start over");
    }
    query.after = after->last;
  }
  // Kubernetes reads a limit of 0, or none, as everything.
  int64_t limit = 0;
  const char* end = limit_text.data() + limit_text.size();
  if (!limit_text.empty() && std::from_chars(limit_text.data(), end, limit).ptr != end) {
    return BadRequest(fmt::format("limit: {:?} is not a whole number", limit_text));
  }
  ListPage page;
  int64_t rest = 0;  // matches past the page
  // Past a full page, the scan stops at the next match, or (without
  // selectors) goes on counting, never copying.
  Result<int64_t> version = scan(query, [&](const api::Json& object) {
    if (limit <= 0 || static_cast<int64_t>(page.items.size()) < limit) {
      page.items.push_back(object);
      return true;
    }
    ++rest;
    return !selected;
  });
  if (!version.ok()) return ApiErrorOf(version.status());
  // Every page says the first page's version: a watch from it then
  // misses no change made between the pages (it may see some twice).
  page.resource_version = after ? after->resource_version : *version;
  if (rest > 0) {
    page.continue_token = MakeToken(page.resource_version, KeyOf(page.items.back()));
    if (!selected) page.remaining = rest;
  }
  return page;
}

}  // namespace trainyard::server
