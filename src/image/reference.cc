#include "image/reference.h"

#include <fmt/format.h>
#include <re2/re2.h>

#include "common/strings.h"

namespace trainyard::image {
namespace {

// distribution/reference's grammar: lowercase path components joined by
// one of its separators; tags and digests as it allows them.
const RE2& PathComponent() {
  static const RE2 re("[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*");
  return re;
}
const RE2& Tag() {
  static const RE2 re("[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}");
  return re;
}
const RE2& Digest() {
  static const RE2 re("sha256:[a-f0-9]{64}|sha512:[a-f0-9]{128}");
  return re;
}
const RE2& Domain() {
  static const RE2 re(
      "(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)(?:\\.(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])"
      "?))*"
      "(?::[0-9]+)?|\\[[0-9A-Fa-f:]+\\](?::[0-9]+)?");
  return re;
}

Status Invalid(std::string_view text, std::string_view why) {
  return InvalidArgumentError(fmt::format("invalid image reference \"{}\": {}", text, why));
}

}  // namespace

std::string ImageReference::Repository() const { return domain + "/" + path; }

std::string ImageReference::String() const {
  std::string out = Repository();
  if (!tag.empty()) out += ":" + tag;
  if (!digest.empty()) out += "@" + digest;
  return out;
}

Result<ImageReference> ParseImageReference(std::string_view text) {
  if (text.empty()) return Invalid(text, "it is empty");
  if (text.size() > 4096) return Invalid(text.substr(0, 64), "it is longer than 4096 characters");
  if (Trim(text) != text) return Invalid(text, "it has leading or trailing white space");
  ImageReference ref;
  std::string_view rest = text;
  if (size_t at = rest.find('@'); at != std::string_view::npos) {
    ref.digest = std::string(rest.substr(at + 1));
    rest = rest.substr(0, at);
    if (!RE2::FullMatch(ref.digest, Digest())) {
      return Invalid(text, "a digest is sha256: and 64 lowercase hex digits");
    }
  }
  // A tag follows the last ':' after the last '/' (a port's ':' comes before one).
  size_t slash = rest.rfind('/');
  size_t colon = rest.rfind(':');
  if (colon != std::string_view::npos && (slash == std::string_view::npos || colon > slash)) {
    ref.tag = std::string(rest.substr(colon + 1));
    rest = rest.substr(0, colon);
    if (!RE2::FullMatch(ref.tag, Tag())) {
      return Invalid(text,
                     "a tag is up to 128 letters, digits, '_', '.' and '-', not starting "
                     "with '.' or '-'");
    }
  }
  // The first component names a registry when it looks like a host.
  size_t first = rest.find('/');
  std::string_view head = rest.substr(0, first);
  bool has_domain =
      first != std::string_view::npos && (head.find_first_of(".:") != std::string_view::npos ||
                                          head == "localhost" || AsciiLower(head) != head);
  if (has_domain) {
    ref.domain = std::string(head);
    rest = rest.substr(first + 1);
    if (!RE2::FullMatch(ref.domain, Domain())) return Invalid(text, "its registry is not a host");
  } else {
    ref.domain = std::string(kDockerHub);
  }
  if (ref.domain == "index.docker.io") ref.domain = std::string(kDockerHub);
  if (rest.empty()) return Invalid(text, "it names no repository");
  for (const std::string& component : SplitNonEmpty(rest, '/')) {
    if (!RE2::FullMatch(component, PathComponent())) {
      return Invalid(text, fmt::format("repository part \"{}\" must be lowercase letters and "
                                       "digits, separated by '.', '_', '__' or '-'",
                                       component));
    }
  }
  if (rest.front() == '/' || rest.back() == '/' || rest.find("//") != std::string_view::npos) {
    return Invalid(text, "its repository has an empty part");
  }
  ref.path = std::string(rest);
  if (ref.domain == kDockerHub && ref.path.find('/') == std::string::npos) {
    ref.path = "library/" + ref.path;
  }
  if (ref.Repository().size() > 255) return Invalid(text, "its name is longer than 255 characters");
  if (ref.tag.empty() && ref.digest.empty()) ref.tag = "latest";
  return ref;
}

std::string DefaultPullPolicy(const ImageReference& reference) {
  return reference.tag == "latest" ? "Always" : "IfNotPresent";
}

}  // namespace trainyard::image
