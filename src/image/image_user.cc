#include "image/image_user.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <optional>
#include <sstream>

#include "common/artifact_files.h"
#include "image/layer_unpack.h"

namespace trainyard::image {
namespace {

// More than any real user database; an image's is not trusted.
constexpr size_t kMaxDatabaseBytes = 4 << 20;

// Marked opaque by the unpacker, privileged or not.
bool Opaque(int dir) {
  char value[2] = {};
  for (bool privileged : {true, false}) {
    if (fgetxattr(dir, OpaqueXattr(privileged), value, 1) == 1 && value[0] == 'y') return true;
  }
  return false;
}

// What one layer says of etc/<file>: its text, deleted (a whiteout, or an
// opaque or non-directory etc), or nothing (look in the layer below).
enum class Found { kText, kDeleted, kBelow };

Result<Found> ReadInLayer(const std::string& layer, const char* file, std::string& text) {
  Fd root(open(layer.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (root.get() < 0) {
    return UnavailableError(fmt::format("cannot open layer {}: {}", layer, strerror(errno)));
  }
  struct stat st;
  if (fstatat(root.get(), "etc", &st, AT_SYMLINK_NOFOLLOW) != 0) return Found::kBelow;
  if (!S_ISDIR(st.st_mode)) return Found::kDeleted;  // a whiteout, a file or a symlink
  Fd etc(openat(root.get(), "etc", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (etc.get() < 0) return Found::kDeleted;
  if (fstatat(etc.get(), file, &st, AT_SYMLINK_NOFOLLOW) != 0) {
    return Opaque(etc.get()) ? Found::kDeleted : Found::kBelow;
  }
  if (!S_ISREG(st.st_mode)) return Found::kDeleted;
  Fd fd(openat(etc.get(), file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (fd.get() < 0) return Found::kDeleted;
  text.clear();
  char buffer[8192];
  ssize_t n;
  while ((n = read(fd.get(), buffer, sizeof buffer)) > 0) {
    if (text.size() + static_cast<size_t>(n) > kMaxDatabaseBytes) {
      return InvalidArgumentError(
          fmt::format("the image's /etc/{} is over {} bytes", file, kMaxDatabaseBytes));
    }
    text.append(buffer, static_cast<size_t>(n));
  }
  return Found::kText;
}

// The image's /etc/<file> as its layers stack it; "" when it has none.
Result<std::string> ReadImageFile(const std::vector<std::string>& layers, const char* file) {
  std::string text;
  for (const std::string& layer : layers) {
    ASSIGN_OR_RETURN(Found found, ReadInLayer(layer, file, text));
    if (found == Found::kText) return text;
    if (found == Found::kDeleted) return std::string();
  }
  return std::string();
}

std::vector<std::string> Fields(std::string_view line) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t colon; (colon = line.find(':', start)) != std::string_view::npos; start = colon + 1) {
    out.emplace_back(line.substr(start, colon - start));
  }
  out.emplace_back(line.substr(start));
  return out;
}

template <typename Id>
std::optional<Id> Number(std::string_view text) {
  Id value{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// The lines of a user or group database, split into fields; `min_fields`
// or more each (others are skipped, as libc skips them).
std::vector<std::vector<std::string>> Entries(const std::string& text, size_t min_fields) {
  std::vector<std::vector<std::string>> out;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> fields = Fields(line);
    if (fields.size() >= min_fields) out.push_back(std::move(fields));
  }
  return out;
}

// passwd: name:password:uid:gid:gecos:home:shell.
Result<ImageUser> FindUser(const std::string& passwd, const std::string& user) {
  std::optional<uid_t> number = Number<uid_t>(user);
  for (const auto& f : Entries(passwd, 7)) {
    std::optional<uid_t> uid = Number<uid_t>(f[2]);
    std::optional<gid_t> gid = Number<gid_t>(f[3]);
    if (!uid || !gid || (number ? *uid != *number : f[0] != user)) continue;
    return ImageUser{.name = f[0], .uid = *uid, .gid = *gid, .home = f[5].empty() ? "/" : f[5]};
  }
  if (number) return ImageUser{.name = user, .uid = *number};
  return NotFoundError(
      fmt::format("unable to find user {}: no matching entries in the image's /etc/passwd", user));
}

// group: name:password:gid:member,member.
Result<gid_t> FindGroup(const std::string& groups, const std::string& group) {
  if (std::optional<gid_t> number = Number<gid_t>(group)) return *number;
  for (const auto& f : Entries(groups, 4)) {
    std::optional<gid_t> gid = Number<gid_t>(f[2]);
    if (gid && f[0] == group) return *gid;
  }
  return NotFoundError(
      fmt::format("unable to find group {}: no matching entries in the image's /etc/group", group));
}

std::vector<gid_t> GroupsListing(const std::string& groups, const std::string& name) {
  std::vector<gid_t> out;
  for (const auto& f : Entries(groups, 4)) {
    std::optional<gid_t> gid = Number<gid_t>(f[2]);
    std::istringstream members(f[3]);
    for (std::string member; gid && std::getline(members, member, ',');) {
      if (member == name) out.push_back(*gid);
    }
  }
  return out;
}

}  // namespace

Result<ImageUser> ResolveImageUser(const std::vector<std::string>& layers,
                                   const std::string& spec) {
  size_t colon = spec.find(':');
  std::string user = spec.substr(0, colon);
  if (user.empty()) return InvalidArgumentError(fmt::format("user \"{}\" names no user", spec));
  ASSIGN_OR_RETURN(std::string passwd, ReadImageFile(layers, "passwd"));
  ASSIGN_OR_RETURN(std::string groups, ReadImageFile(layers, "group"));
  ASSIGN_OR_RETURN(ImageUser out, FindUser(passwd, user));
  if (colon != std::string::npos) {
    ASSIGN_OR_RETURN(out.gid, FindGroup(groups, spec.substr(colon + 1)));
  }
  out.groups = GroupsListing(groups, out.name);
  return out;
}

}  // namespace trainyard::image
