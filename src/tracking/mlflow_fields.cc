// The tracking API's request fields, read and checked as MLflow's server
// checks them: ids, int64s as numbers or strings, metric values, keys,
// {key, value} lists, and pages (mlflow_internal.h, mlflow_methods.h).
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "api/json.h"
#include "api/yaml.h"
#include "common/strings.h"
#include "tracking/mlflow_methods.h"
#include "tracking/mlflow_records.h"

namespace trainyard::tracking::mlflow {
namespace {

// What a log's microseconds hold: years 1678 to 2262.
constexpr int64_t kMaxMillis = 9'000'000'000'000;

std::optional<int64_t> ParseInt(std::string_view text) {
  int64_t value = 0;
  const char* end = text.data() + text.size();
  auto [stop, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || stop != end || error != std::errc()) return std::nullopt;  // past int64 too
  return value;
}

}  // namespace

Result<Args> Args::FromBody(std::string_view body) {
  Args args;
  if (body.empty()) return args;
  ASSIGN_OR_RETURN(args.doc_, api::ParseJsonValue(body, "the request body"));
  if (!args.doc_.is_object()) return InvalidArgumentError("the request body must be a JSON object");
  return args;
}

Args Args::FromQuery(const std::multimap<std::string, std::string>& query) {
  Args args;
  for (const auto& [name, value] : query) {
    if (!args.doc_.contains(name)) args.doc_[name] = value;
  }
  return args;
}

std::string Args::Optional(std::string_view name) const {
  auto it = doc_.find(name);
  return it != doc_.end() && it->is_string() ? it->get<std::string>() : "";
}

Result<std::string> Args::Required(std::string_view name) const {
  auto it = doc_.find(name);
  if (it != doc_.end() && !it->is_string() && !it->is_null()) {
    return InvalidArgumentError(fmt::format("{}: must be a string", name));
  }
  std::string value = Optional(name);
  if (value.empty()) {
    return InvalidArgumentError(fmt::format("Missing value for required parameter '{}'", name));
  }
  return value;
}

Result<std::string> Args::Id(std::string_view name) const {
  auto it = doc_.find(name);
  // An id is a string; a number is taken as its digits, as MLflow's server
  // does (experiment ids are numbers there).
  if (it != doc_.end() && it->is_number_integer()) return std::to_string(it->get<int64_t>());
  return Required(name);
}

Result<std::string> Args::RunId() const {
  std::string id = Optional("run_id");
  if (id.empty()) id = Optional("run_uuid");
  if (id.empty()) return InvalidArgumentError("Missing value for required parameter 'run_id'");
  return id;
}

Result<std::optional<int64_t>> Args::Int(std::string_view name) const {
  auto it = doc_.find(name);
  if (it == doc_.end() || it->is_null()) return std::optional<int64_t>();
  // As MLflow's server reads an int64 (protobuf's JSON): a whole number
  // within int64, written as one, as a string of digits, or as a number
  // with no fraction (2.0); anything else is refused, never rounded or
  // wrapped round.
  if (it->is_number_unsigned()) {
    if (it->get<uint64_t>() <= static_cast<uint64_t>(INT64_MAX)) {
      return std::optional<int64_t>(static_cast<int64_t>(it->get<uint64_t>()));
    }
  } else if (it->is_number_integer()) {
    return std::optional<int64_t>(it->get<int64_t>());
  }
  if (it->is_number_float()) {
    double d = it->get<double>();
    // 2^63 itself is a double; it is past int64.
    if (std::isfinite(d) && d == std::trunc(d) && d >= -0x1p63 && d < 0x1p63) {
      return std::optional<int64_t>(static_cast<int64_t>(d));
    }
  }
  if (it->is_string()) {
    if (std::optional<int64_t> v = ParseInt(it->get<std::string>())) return std::optional(*v);
  }
  return InvalidArgumentError(
      fmt::format("{}: {} is not a whole number within int64", name, it->dump()));
}

Result<std::vector<std::string>> Args::Strings(std::string_view name) const {
  std::vector<std::string> out;
  auto it = doc_.find(name);
  if (it == doc_.end() || it->is_null()) return out;
  if (it->is_string()) return std::vector<std::string>{it->get<std::string>()};
  if (!it->is_array()) return InvalidArgumentError(fmt::format("{}: must be a list", name));
  for (const api::Json& item : *it) {
    if (!item.is_string()) {
      return InvalidArgumentError(fmt::format("{}: every entry must be a string", name));
    }
    out.push_back(item.get<std::string>());
  }
  return out;
}

Result<std::string> MetricText(const api::Json& value, std::string_view field) {
  if (value.is_number()) {
    double d = value.get<double>();
    return fmt::format("{}", d);
  }
  if (value.is_string()) {
    const std::string& text = value.get_ref<const std::string&>();
    if (text == "NaN" || text == "Infinity" || text == "-Infinity") return text;
    double d = 0;
    const char* end = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(text.data(), end, d);
    if (!text.empty() && ec == std::errc() && ptr == end && std::isfinite(d)) {
      return fmt::format("{}", d);
    }
  }
  return InvalidArgumentError(fmt::format(
      "{}: {} is not a number (a number, or \"NaN\", \"Infinity\", \"-Infinity\")", field,
      value.is_string() || value.is_number() ? value.dump() : std::string(value.type_name())));
}

api::Json MetricJson(const std::string& text) {
  if (text == "NaN" || text == "Infinity" || text == "-Infinity") return text;
  double d = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, d);
  if (ec != std::errc() || ptr != end) {
    // A collected value Katib kept as written ("+1.5", " 2"): read leniently.
    char* stop = nullptr;
    d = std::strtod(text.c_str(), &stop);
  }
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  return d;
}

Result<int64_t> CheckedMillis(int64_t ms, std::string_view field) {
  if (ms < -kMaxMillis || ms > kMaxMillis) {
    return InvalidArgumentError(fmt::format(
        "{}: {} is not a time in milliseconds since 1970 before the year 2262", field, ms));
  }
  return ms;
}

int64_t NowMillis(const Clock& clock) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(clock.Now().time_since_epoch())
      .count();
}

Status CheckKey(const std::string& key, const std::string& field) {
  if (key.empty()) return InvalidArgumentError(fmt::format("{}: a key may not be empty", field));
  if (Utf8Length(key) > kMaxKey) {
    return InvalidArgumentError(
        fmt::format("{}: the key {:?} is over {} characters", field, key.substr(0, 40), kMaxKey));
  }
  // MLflow's rule: letters, digits, and _ - . space / (and : in newer
  // versions); never a path that climbs.
  for (char c : key) {
    bool ok = std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-' ||
              c == '.' || c == ' ' || c == '/' || c == ':';
    if (!ok) {
      return InvalidArgumentError(fmt::format(
          "{}: invalid key {:?}: keys may hold only letters, digits, and _ - . space / :", field,
          key));
    }
  }
  if (key.find("..") != std::string::npos || key.front() == '/') {
    return InvalidArgumentError(
        fmt::format("{}: invalid key {:?}: not a relative path", field, key));
  }
  return OkStatus();
}

Result<api::Json> CheckedPairs(const api::Json& doc, const std::string& field, size_t max_value) {
  api::Json pairs = api::Json::array();
  auto it = doc.find(field);
  if (it == doc.end() || it->is_null()) return pairs;
  if (!it->is_array()) return InvalidArgumentError(fmt::format("{}: must be a list", field));
  for (size_t i = 0; i < it->size(); ++i) {
    const api::Json& pair = (*it)[i];
    std::string at = fmt::format("{}[{}]", field, i);
    if (!pair.is_object() || !api::ValueAt(pair, "key").is_string()) {
      return InvalidArgumentError(fmt::format("{}: must be {{key, value}}", at));
    }
    std::string key = pair["key"].get<std::string>();
    RETURN_IF_ERROR(CheckKey(key, at + ".key"));
    const api::Json* given = api::FindAt(pair, {"value"});
    api::Json value = given != nullptr ? *given : api::Json("");
    if (value.is_number()) value = value.dump();  // written unquoted
    if (!value.is_string()) return InvalidArgumentError(at + ".value: must be a string");
    if (Utf8Length(value.get_ref<const std::string&>()) > max_value) {
      return InvalidArgumentError(
          fmt::format("{}.value: over {} characters (the most MLflow keeps)", at, max_value));
    }
    pairs.push_back({{"key", std::move(key)}, {"value", std::move(value)}});
  }
  return pairs;
}

Status RefuseQueryLanguage(const Args& args) {
  for (const char* field : {"filter", "order_by"}) {
    auto it = args.doc().find(field);
    bool given = it != args.doc().end() && !it->is_null() &&
                 !(it->is_string() && it->get_ref<const std::string&>().empty()) &&
                 !(it->is_array() && it->empty());
    if (given) {
      return InvalidArgumentError(fmt::format(
          "{}: this server does not read MLflow's search language; search without it and pick "
          "from the answer",
          field));
    }
  }
  return OkStatus();
}

bool InView(const std::string& view, const std::string& stage) {
  if (view == "ALL") return true;
  if (view == "DELETED_ONLY") return stage == "deleted";
  return stage != "deleted";
}

Result<api::Json> Paged(const Args& args, std::vector<api::Json> items, const std::string& field) {
  ASSIGN_OR_RETURN(std::optional<int64_t> max, args.Int("max_results"));
  int64_t limit = max.value_or(1000);
  if (limit < 1 || limit > 50000) {
    return InvalidArgumentError(
        fmt::format("max_results: {} is out of range: from 1 to 50000", limit));
  }
  int64_t from = 0;
  std::string token = args.Optional("page_token");
  if (!token.empty()) {
    std::optional<std::string> text = Base64Decode(token);
    std::optional<int64_t> offset = text ? ParseInt(*text) : std::nullopt;
    if (!offset || *offset < 0) {
      return InvalidArgumentError("page_token: not a token this server gave");
    }
    from = *offset;
  }
  int64_t n = static_cast<int64_t>(items.size());
  from = std::min(from, n);  // a token past the end: an empty page
  api::Json page = api::Json::array();
  for (int64_t i = from; i < n && i < from + limit; ++i) page.push_back(std::move(items[i]));
  api::Json answer = {{field, std::move(page)}};
  if (from + limit < n) answer["next_page_token"] = Base64Encode(std::to_string(from + limit));
  return answer;
}

}  // namespace trainyard::tracking::mlflow
