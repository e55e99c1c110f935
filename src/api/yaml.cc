#include "api/yaml.h"

#include <fmt/format.h>
#include <yaml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <optional>
#include <unordered_map>

namespace trainyard::api {
namespace {

// Deeper nesting than any manifest needs; stops stack exhaustion on hostile
// input before it starts.
constexpr int kMaxDepth = 128;

// [-+]?[0-9]+
bool IsIntText(std::string_view s) {
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
bool IsFloatText(std::string_view s) {
  auto digits = [&](size_t& i) {
    size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i - start;
  };
  size_t i = 0;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
  size_t whole = digits(i);
  size_t fraction = 0;
  if (i < s.size() && s[i] == '.') {
    ++i;
    fraction = digits(i);
  }
  if (whole == 0 && fraction == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    if (digits(i) == 0) return false;
  }
  return i == s.size();
}

// A finite double, or nullopt: JSON has no infinities, so a number too large
// for a double stays the string it was written as.
std::optional<double> FiniteDouble(const std::string& s) {
  errno = 0;
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (errno == ERANGE || end != s.c_str() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

// "0644" as kubectl reads it: Go's ParseInt with base 0 makes a leading
// zero octal, and manifests write file modes that way (defaultMode: 0644).
std::optional<int64_t> LeadingZeroOctal(std::string_view s) {
  bool negative = !s.empty() && s[0] == '-';
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  if (s.size() < 2 || s[0] != '0') return std::nullopt;
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data() + 1, s.data() + s.size(), v, 8);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return negative ? -v : v;
}

// YAML 1.2 core schema resolution of a plain (unquoted) scalar, except
// that a leading zero means octal, as for kubectl.
Json ResolvePlainScalar(const std::string& s) {
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  if (IsIntText(s) && LeadingZeroOctal(s)) return *LeadingZeroOctal(s);
  if (IsIntText(s)) {
    int64_t v = 0;
    const char* begin = s.data() + (s[0] == '+' ? 1 : 0);
    auto [ptr, ec] = std::from_chars(begin, s.data() + s.size(), v);
    if (ec == std::errc() && ptr == s.data() + s.size()) return v;
    if (auto d = FiniteDouble(s)) return *d;  // too large for int64: a number all the same
    return s;
  }
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'o')) {
    int base = s[1] == 'x' ? 16 : 8;
    int64_t v = 0;
    auto [ptr, ec] = std::from_chars(s.data() + 2, s.data() + s.size(), v, base);
    if (ec == std::errc() && ptr == s.data() + s.size()) return v;
  }
  if (IsFloatText(s)) {
    if (auto d = FiniteDouble(s)) return *d;
    return s;
  }
  return s;  // including .inf and .nan, which JSON cannot hold
}

bool IsListKind(const Json& doc) {
  if (!doc.is_object() || !doc.contains("items") || !doc["items"].is_array()) return false;
  auto kind = doc.find("kind");
  if (kind == doc.end() || !kind->is_string()) return false;
  std::string k = kind->get<std::string>();
  return k.size() >= 4 && k.compare(k.size() - 4, 4, "List") == 0;
}

void AppendDocument(Json doc, int line, std::vector<SourceDocument>& out) {
  if (doc.is_null()) return;
  if (IsListKind(doc)) {
    for (Json& item : doc["items"]) out.push_back({std::move(item), line});
    return;
  }
  out.push_back({std::move(doc), line});
}

// Builds JSON documents from libyaml's parse events.
class YamlReader {
 public:
  YamlReader(std::string_view text, std::string_view file) : file_(file) {
    yaml_parser_initialize(&parser_);
    yaml_parser_set_input_string(&parser_, reinterpret_cast<const unsigned char*>(text.data()),
                                 text.size());
  }
  ~YamlReader() { yaml_parser_delete(&parser_); }
  YamlReader(const YamlReader&) = delete;
  YamlReader& operator=(const YamlReader&) = delete;

  Result<std::vector<SourceDocument>> ReadAll() {
    std::vector<SourceDocument> docs;
    while (true) {
      yaml_event_t event;
      if (!yaml_parser_parse(&parser_, &event)) return ParserError();
      std::unique_ptr<yaml_event_t, void (*)(yaml_event_t*)> guard(&event, yaml_event_delete);
      switch (event.type) {
        case YAML_STREAM_END_EVENT:
          return docs;
        case YAML_DOCUMENT_START_EVENT:
          root_ = Json();
          root_line_ = 0;
          anchors_.clear();
          break;
        case YAML_DOCUMENT_END_EVENT:
          AppendDocument(std::move(root_), root_line_, docs);
          break;
        case YAML_MAPPING_START_EVENT:
        case YAML_SEQUENCE_START_EVENT: {
          if (stack_.size() >= static_cast<size_t>(kMaxDepth)) {
            return Error(event.start_mark, fmt::format("nesting deeper than {} levels", kMaxDepth));
          }
          bool is_map = event.type == YAML_MAPPING_START_EVENT;
          const yaml_char_t* anchor =
              is_map ? event.data.mapping_start.anchor : event.data.sequence_start.anchor;
          Frame frame;
          frame.value = is_map ? Json::object() : Json::array();
          frame.anchor = Anchor(anchor);
          frame.nodes_before = nodes_;
          stack_.push_back(std::move(frame));
          if (Status s = CheckKeyPosition(event); !s.ok()) return s;
          break;
        }
        case YAML_MAPPING_END_EVENT:
        case YAML_SEQUENCE_END_EVENT: {
          Frame frame = std::move(stack_.back());
          stack_.pop_back();
          if (!frame.anchor.empty())
            anchors_[frame.anchor] = {frame.value, nodes_ - frame.nodes_before};
          if (Status s = Add(std::move(frame.value), event.start_mark, false); !s.ok()) return s;
          break;
        }
        case YAML_SCALAR_EVENT: {
          // A key is the text as written: `~:` is the key "~", not null.
          Result<Json> value = ExpectingKey() ? Json(ScalarText(event)) : Scalar(event);
          if (!value.ok()) return value.status();
          std::string anchor = Anchor(event.data.scalar.anchor);
          if (!anchor.empty()) anchors_[anchor] = {*value, 1};
          if (Status s = Add(std::move(*value), event.start_mark, true); !s.ok()) return s;
          break;
        }
        case YAML_ALIAS_EVENT: {
          auto it = anchors_.find(Anchor(event.data.alias.anchor));
          if (it == anchors_.end()) return Error(event.start_mark, "unknown alias");
          // Aliases of aliases grow exponentially ("billion laughs"): count
          // what each expansion adds.
          nodes_ += it->second.nodes;
          if (Status s = Add(it->second.value, event.start_mark, it->second.value.is_primitive());
              !s.ok()) {
            return s;
          }
          break;
        }
        default:
          break;
      }
      if (++nodes_ > kMaxNodes) {
        return Error(event.start_mark, fmt::format("more than {} nodes", kMaxNodes));
      }
    }
  }

 private:
  struct Frame {
    Json value;
    std::string anchor;
    size_t nodes_before = 0;
    std::optional<std::string> key;  // for maps: a key waiting for its value
  };
  struct Anchored {
    Json value;
    size_t nodes = 0;
  };

  static constexpr size_t kMaxNodes = 2'000'000;

  static std::string Anchor(const yaml_char_t* a) {
    return a == nullptr ? std::string() : reinterpret_cast<const char*>(a);
  }

  // A collection may not stand where a map expects a key.
  Status CheckKeyPosition(const yaml_event_t& event) {
    if (stack_.size() < 2) return OkStatus();
    const Frame& parent = stack_[stack_.size() - 2];
    if (parent.value.is_object() && !parent.key) {
      return Error(event.start_mark, "mapping keys must be scalars");
    }
    return OkStatus();
  }

  Status Add(Json value, const yaml_mark_t& mark, bool scalar) {
    if (stack_.empty()) {
      root_ = std::move(value);
      if (root_line_ == 0) root_line_ = static_cast<int>(mark.line) + 1;
      return OkStatus();
    }
    Frame& top = stack_.back();
    if (root_line_ == 0) root_line_ = static_cast<int>(mark.line) + 1;
    if (top.value.is_array()) {
      top.value.push_back(std::move(value));
      return OkStatus();
    }
    if (!top.key) {
      if (!scalar) return Error(mark, "mapping keys must be scalars");
      std::string key = value.is_string() ? value.get<std::string>() : value.dump();
      if (top.value.contains(key)) {
        return Error(mark, fmt::format("key {} already set in this map", Quote(key)));
      }
      top.key = std::move(key);
      return OkStatus();
    }
    top.value[*top.key] = std::move(value);
    top.key.reset();
    return OkStatus();
  }

  bool ExpectingKey() const {
    return !stack_.empty() && stack_.back().value.is_object() && !stack_.back().key;
  }

  static std::string ScalarText(const yaml_event_t& event) {
    return std::string(reinterpret_cast<const char*>(event.data.scalar.value),
                       event.data.scalar.length);
  }

  Result<Json> Scalar(const yaml_event_t& event) const {
    const auto& scalar = event.data.scalar;
    std::string s = ScalarText(event);
    std::string tag = scalar.tag == nullptr ? "" : reinterpret_cast<const char*>(scalar.tag);
    if (tag.empty() || tag == "!") {
      if (scalar.style == YAML_PLAIN_SCALAR_STYLE) return ResolvePlainScalar(s);
      return Json(s);
    }
    if (tag == "tag:yaml.org,2002:str") return Json(s);
    if (tag == "tag:yaml.org,2002:int" || tag == "tag:yaml.org,2002:float" ||
        tag == "tag:yaml.org,2002:bool" || tag == "tag:yaml.org,2002:null") {
      Json v = ResolvePlainScalar(s);
      if (v.is_string()) {
        return Error(event.start_mark, fmt::format("{} does not match its tag {}", Quote(s), tag));
      }
      return v;
    }
    return Error(event.start_mark, fmt::format("unsupported tag {}", tag));
  }

  Status Error(const yaml_mark_t& mark, std::string_view what) const {
    return InvalidArgumentError(
        fmt::format("{}:{}:{}: {}", file_, mark.line + 1, mark.column + 1, what));
  }

  Status ParserError() const {
    std::string what = parser_.problem != nullptr ? parser_.problem : "invalid YAML";
    if (parser_.context != nullptr) what = fmt::format("{} ({})", what, parser_.context);
    return Error(parser_.problem_mark, what);
  }

  std::string_view file_;
  yaml_parser_t parser_;
  std::vector<Frame> stack_;
  std::unordered_map<std::string, Anchored> anchors_;
  Json root_;
  int root_line_ = 0;
  size_t nodes_ = 0;
};

// "<file>:<line>:<column>: <what>" for a byte offset into `text`.
Status PositionError(std::string_view text, std::string_view file, size_t offset,
                     std::string_view what) {
  size_t line = 1 + std::count(text.begin(), text.begin() + offset, '\n');
  size_t line_start = text.rfind('\n', offset == 0 ? 0 : offset - 1);
  size_t column =
      line_start == std::string_view::npos || offset == 0 ? offset + 1 : offset - line_start;
  return InvalidArgumentError(fmt::format("{}:{}:{}: {}", file, line, column, what));
}

Status JsonError(std::string_view text, std::string_view file, const nlohmann::json::exception& e,
                 size_t byte) {
  std::string what = e.what();
  // nlohmann prefixes "[json.exception.parse_error.101] parse error at line 1, column 2: ".
  if (size_t pos = what.find(": "); pos != std::string::npos) what = what.substr(pos + 2);
  return PositionError(text, file, std::min(byte, text.size()), what);
}

}  // namespace

Result<Json> ParseJsonValue(std::string_view text, std::string_view what) {
  bool too_deep = false;
  // The parser reports each value's depth; refusing deep ones here keeps every
  // recursive walk after it (decode, encode, YAML output) within its stack.
  auto guard = [&](int depth, Json::parse_event_t, Json&) {
    too_deep = too_deep || depth > kMaxDepth;
    return true;
  };
  try {
    Json doc = Json::parse(text.begin(), text.end(), guard);
    if (too_deep) {
      return InvalidArgumentError(
          fmt::format("{}: nesting deeper than {} levels", what, kMaxDepth));
    }
    return doc;
  } catch (const nlohmann::json::parse_error& e) {
    return JsonError(text, what, e, e.byte == 0 ? 0 : e.byte - 1);
  } catch (const nlohmann::json::exception& e) {
    return JsonError(text, what, e, 0);
  }
}

namespace {

Result<std::vector<SourceDocument>> ParseJson(std::string_view text, std::string_view file) {
  std::vector<SourceDocument> out;
  ASSIGN_OR_RETURN(Json doc, ParseJsonValue(text, file));
  AppendDocument(std::move(doc), 1, out);
  return out;
}

Result<std::vector<SourceDocument>> ParseYaml(std::string_view text, std::string_view file) {
  YamlReader reader(text, file);
  return reader.ReadAll();
}

// Writes JSON as block-style YAML through libyaml's emitter.
class Emitter {
 public:
  Emitter() {
    yaml_emitter_initialize(&emitter_);
    yaml_emitter_set_output(&emitter_, &Emitter::Write, &out_);
    yaml_emitter_set_unicode(&emitter_, 1);
    yaml_emitter_set_width(&emitter_, -1);
    yaml_emitter_set_indent(&emitter_, 2);
  }
  ~Emitter() { yaml_emitter_delete(&emitter_); }
  Emitter(const Emitter&) = delete;
  Emitter& operator=(const Emitter&) = delete;

  std::string Emit(const Json& value) {
    yaml_event_t e;
    yaml_stream_start_event_initialize(&e, YAML_UTF8_ENCODING);
    Send(e);
    yaml_document_start_event_initialize(&e, nullptr, nullptr, nullptr, 1);
    Send(e);
    Node(value);
    yaml_document_end_event_initialize(&e, 1);
    Send(e);
    yaml_stream_end_event_initialize(&e);
    Send(e);
    return out_;
  }

 private:
  static int Write(void* data, unsigned char* buffer, size_t size) {
    static_cast<std::string*>(data)->append(reinterpret_cast<char*>(buffer), size);
    return 1;
  }

  // The emitter only fails on event sequences this class never produces.
  void Send(yaml_event_t& e) { yaml_emitter_emit(&emitter_, &e); }

  void Scalar(const std::string& text, yaml_scalar_style_t style) {
    yaml_event_t e;
    auto* bytes = reinterpret_cast<yaml_char_t*>(const_cast<char*>(text.data()));
    yaml_scalar_event_initialize(&e, nullptr, nullptr, bytes, static_cast<int>(text.size()), 1, 1,
                                 style);
    Send(e);
  }

  // Strings that would read back as another type are quoted.
  void String(const std::string& s) {
    Scalar(s, ResolvePlainScalar(s).is_string() ? YAML_ANY_SCALAR_STYLE
                                                : YAML_DOUBLE_QUOTED_SCALAR_STYLE);
  }

  void Node(const Json& j) {
    yaml_event_t e;
    switch (j.type()) {
      case Json::value_t::object:
        yaml_mapping_start_event_initialize(&e, nullptr, nullptr, 1, YAML_BLOCK_MAPPING_STYLE);
        Send(e);
        for (const auto& [key, value] : j.items()) {
          String(key);
          Node(value);
        }
        yaml_mapping_end_event_initialize(&e);
        Send(e);
        return;
      case Json::value_t::array:
        yaml_sequence_start_event_initialize(&e, nullptr, nullptr, 1, YAML_BLOCK_SEQUENCE_STYLE);
        Send(e);
        for (const Json& item : j) Node(item);
        yaml_sequence_end_event_initialize(&e);
        Send(e);
        return;
      case Json::value_t::string:
        String(j.get_ref<const std::string&>());
        return;
      case Json::value_t::null:
        Scalar("null", YAML_PLAIN_SCALAR_STYLE);
        return;
      default:
        Scalar(j.dump(), YAML_PLAIN_SCALAR_STYLE);
        return;  // numbers, booleans
    }
  }

  yaml_emitter_t emitter_;
  std::string out_;
};

// Offset of the first byte that is not part of well-formed UTF-8, or npos.
size_t FindInvalidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    size_t len = c < 0x80           ? 1
                 : (c >> 5) == 0x6  ? 2
                 : (c >> 4) == 0xe  ? 3
                 : (c >> 3) == 0x1e ? 4
                                    : 0;
    if (len == 0 || i + len > s.size()) return i;
    uint32_t cp = len == 1 ? c : c & (0x7f >> len);
    for (size_t k = 1; k < len; ++k) {
      auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc >> 6) != 0x2) return i;
      cp = (cp << 6) | (cc & 0x3f);
    }
    // Overlong forms, surrogates and values past U+10FFFF are not UTF-8.
    static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[len] || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff) return i;
    i += len;
  }
  return std::string_view::npos;
}

}  // namespace

Result<std::vector<SourceDocument>> ParseManifests(std::string_view text, std::string_view file) {
  // Kubernetes objects are UTF-8 JSON; anything else cannot be stored or
  // written back faithfully.
  if (size_t bad = FindInvalidUtf8(text); bad != std::string_view::npos) {
    return PositionError(text, file, bad, "invalid UTF-8; manifests must be UTF-8 text");
  }
  size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && (text[first] == '{' || text[first] == '[')) {
    return ParseJson(text, file);
  }
  return ParseYaml(text, file);
}

std::string ToYaml(const Json& value) {
  Emitter emitter;
  return emitter.Emit(value);
}

}  // namespace trainyard::api
