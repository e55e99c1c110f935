#include "image/layer_unpack.h"

#include <archive.h>
#include <archive_entry.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>

#include "common/strings.h"

namespace trainyard::image {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kWhiteoutPrefix = ".wh.";
constexpr std::string_view kOpaqueMarker = ".wh..wh..opq";

using ArchivePtr = std::unique_ptr<archive, int (*)(archive*)>;

// `name` relative to the layer's root, or nullopt when it would leave it.
std::optional<std::string> CleanPath(std::string_view name) {
  std::vector<std::string> parts;
  for (const std::string& part : SplitNonEmpty(name, '/')) {
    if (part == ".") continue;
    if (part == "..") return std::nullopt;
    parts.push_back(part);
  }
  return Join(parts, "/");
}

// Whether some directory on the way from `root` to `root/relative` is a
// symlink (a layer's own): writing there would land outside the layer.
bool CrossesSymlink(const fs::path& root, const std::string& relative) {
  fs::path at = root;
  for (const std::string& part : SplitNonEmpty(relative, '/')) {
    at /= part;
    struct stat st;
    if (lstat(at.c_str(), &st) != 0) return false;  // made below, as a directory
    if (S_ISLNK(st.st_mode)) return true;
  }
  return false;
}

// Makes the directories on the way to `root/relative` that the layer did
// not list, 0755 as a container runtime makes them (trainyard's own umask
// is 077: its files are its own, an image's are not).
Status MakeParents(const fs::path& root, const std::string& relative) {
  fs::path at = root;
  std::vector<std::string> parts = SplitNonEmpty(relative, '/');
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    at /= parts[i];
    if (mkdir(at.c_str(), 0755) == 0) {
      chmod(at.c_str(), 0755);
    } else if (errno != EEXIST) {
      return InternalError(fmt::format("cannot make {}: {}", at.string(), std::strerror(errno)));
    }
  }
  return OkStatus();
}

Status ArchiveError(archive* a, std::string_view what, std::string_view blob) {
  const char* message = archive_error_string(a);
  return InvalidArgumentError(
      fmt::format("layer {}: {}: {}", blob, what, message ? message : "unknown error"));
}

// Turns an OCI whiteout entry at `relative` into overlayfs's.
Status PlaceWhiteout(const fs::path& root, const std::string& relative,
                     const UnpackOptions& options) {
  fs::path path = root / relative;
  std::string dir = path.parent_path().lexically_relative(root).string();
  if (dir == ".") dir.clear();
  if (CrossesSymlink(root, dir)) {
    return InvalidArgumentError(fmt::format("whiteout {} lies past a symlink", relative));
  }
  RETURN_IF_ERROR(MakeParents(root, relative));
  std::string base = path.filename().string();
  if (base == kOpaqueMarker) {
    if (setxattr(path.parent_path().c_str(), OpaqueXattr(options.privileged), "y", 1, 0) != 0) {
      return InternalError(fmt::format("cannot mark {} opaque: {}", dir, std::strerror(errno)));
    }
    return OkStatus();
  }
  // A 0:0 character device: Linux lets anyone make one (5.8 on).
  fs::path hidden = path.parent_path() / base.substr(kWhiteoutPrefix.size());
  if (mknod(hidden.c_str(), S_IFCHR | 0600, makedev(0, 0)) != 0 && errno != EEXIST) {
    return InternalError(
        fmt::format("cannot make the whiteout of {}: {}", hidden.string(), std::strerror(errno)));
  }
  return OkStatus();
}

// Whether the read failed only for want of the tar's padding: the whole
// blob was read (a gzip stream to its end and checksum: a cut one fails
// in the gzip reader, with its own message), and the tar reader found no
// more bytes where padding should be.
bool EndsAfterItsBytes(archive* in, std::string_view blob) {
  std::error_code ec;
  uintmax_t size = fs::file_size(std::string(blob), ec);
  const char* why = archive_error_string(in);
  return !ec && why != nullptr && std::string_view(why).starts_with("Truncated input file") &&
         archive_filter_bytes(in, -1) == static_cast<la_int64_t>(size);
}

// Copies an entry's `expected` bytes. `ended` is set when the layer stops
// right after them, without the tar's padding and end blocks: what
// umoci's `insert` wrote before 0.5 (Debian 12's 0.4.7; umoci#436), which
// Go's archive/tar, and so containerd and podman, read to the end. The
// blob's digest was checked: nothing of what its maker wrote is missing.
Status CopyData(archive* in, archive* out, std::string_view blob, la_int64_t expected,
                bool& ended) {
  const void* buffer;
  size_t size;
  la_int64_t offset;
  la_int64_t copied = 0;
  for (;;) {
    int r = archive_read_data_block(in, &buffer, &size, &offset);
    if (r == ARCHIVE_EOF) return OkStatus();
    if (r < ARCHIVE_WARN && copied >= expected && EndsAfterItsBytes(in, blob)) {
      ended = true;
      return OkStatus();
    }
    if (r < ARCHIVE_WARN) return ArchiveError(in, "reading", blob);
    if (archive_write_data_block(out, buffer, size, offset) < ARCHIVE_WARN) {
      return ArchiveError(out, "writing", blob);
    }
    copied = std::max(copied, offset + static_cast<la_int64_t>(size));
  }
}

Status Extract(const std::string& blob, const fs::path& root, const UnpackOptions& options,
               UnpackedLayer& stats) {
  ArchivePtr in(archive_read_new(), archive_read_free);
  archive_read_support_filter_all(in.get());  // gzip, zstd, none
  archive_read_support_format_tar(in.get());
  if (archive_read_open_filename(in.get(), blob.c_str(), 1 << 16) != ARCHIVE_OK) {
    return ArchiveError(in.get(), "opening", blob);
  }
  ArchivePtr out(archive_write_disk_new(), archive_write_free);
  // Numeric owners (no lookup of this machine's names); no write through
  // a symlink or to "..".
  int flags = ARCHIVE_EXTRACT_PERM | ARCHIVE_EXTRACT_TIME | ARCHIVE_EXTRACT_SECURE_SYMLINKS |
              ARCHIVE_EXTRACT_SECURE_NODOTDOT | ARCHIVE_EXTRACT_UNLINK;
  if (options.privileged) flags |= ARCHIVE_EXTRACT_OWNER | ARCHIVE_EXTRACT_XATTR;
  archive_write_disk_set_options(out.get(), flags);
  archive_entry* entry;
  for (;;) {
    int r = archive_read_next_header(in.get(), &entry);
    if (r == ARCHIVE_EOF) break;
    if (r < ARCHIVE_WARN) return ArchiveError(in.get(), "reading", blob);
    std::optional<std::string> path = CleanPath(archive_entry_pathname(entry));
    if (!path) {
      return InvalidArgumentError(
          fmt::format("layer {}: entry {} leaves the layer", blob, archive_entry_pathname(entry)));
    }
    if (path->empty()) continue;  // the root itself
    ++stats.entries;
    std::string base = fs::path(*path).filename().string();
    if (base.starts_with(kWhiteoutPrefix)) {
      RETURN_IF_ERROR(PlaceWhiteout(root, *path, options));
      continue;
    }
    mode_t type = archive_entry_filetype(entry);
    if (!options.privileged && (type == AE_IFCHR || type == AE_IFBLK)) continue;  // cannot make
    if (const char* link = archive_entry_hardlink(entry)) {
      std::optional<std::string> target = CleanPath(link);
      if (!target || target->empty() || CrossesSymlink(root, *target)) {
        return InvalidArgumentError(
            fmt::format("layer {}: hard link {} leaves the layer", blob, *path));
      }
      archive_entry_set_hardlink(entry, (root / *target).c_str());
    }
    if (CrossesSymlink(root, fs::path(*path).parent_path().string())) {
      return InvalidArgumentError(
          fmt::format("layer {}: entry {} lies past a symlink", blob, *path));
    }
    RETURN_IF_ERROR(MakeParents(root, *path));
    archive_entry_set_pathname(entry, (root / *path).c_str());
    if (archive_write_header(out.get(), entry) < ARCHIVE_WARN) {
      return ArchiveError(out.get(), "writing " + *path, blob);
    }
    bool ended = false;
    if (type == AE_IFREG && archive_entry_size(entry) > 0) {
      RETURN_IF_ERROR(CopyData(in.get(), out.get(), blob, archive_entry_size(entry), ended));
      stats.bytes += static_cast<uint64_t>(archive_entry_size(entry));
    }
    if (archive_write_finish_entry(out.get()) < ARCHIVE_WARN) {
      return ArchiveError(out.get(), "finishing " + *path, blob);
    }
    if (ended) break;
  }
  // Directories' own modes and times are set last, once all is in them.
  if (archive_write_close(out.get()) != ARCHIVE_OK) return ArchiveError(out.get(), "closing", blob);
  return OkStatus();
}

}  // namespace

const char* OpaqueXattr(bool privileged) {
  return privileged ? "trusted.overlay.opaque" : "user.overlay.opaque";
}

Result<UnpackedLayer> UnpackLayer(const std::string& blob, const std::string& dest,
                                  const UnpackOptions& options) {
  fs::path target(dest);
  std::error_code ec;
  if (fs::exists(target, ec)) return AlreadyExistsError(dest + " exists");
  // Unique to this unpack: two threads (a server's puller and its node
  // agent) or two trainyards may unpack the same layer at once.
  static std::atomic<uint64_t> unpacks{0};
  fs::path tmp = target;
  tmp += fmt::format(".unpacking-{}-{}", getpid(), unpacks.fetch_add(1));
  fs::remove_all(tmp, ec);
  fs::create_directories(tmp, ec);
  if (ec) return InternalError(fmt::format("cannot make {}: {}", tmp.string(), ec.message()));
  UnpackedLayer stats;
  // Canonical, so that the symlink checks see only the layer's own links.
  Status extracted = Extract(blob, fs::canonical(tmp, ec), options, stats);
  if (extracted.ok()) {
    // The layer's root is every user's to pass, as an image's "/" is.
    fs::permissions(tmp, fs::perms(0755), ec);
    fs::rename(tmp, target, ec);
    // Lost a race to another unpack of the same blob: its copy is as good.
    if (ec && fs::is_directory(target)) {
      fs::remove_all(tmp, ec);
      return stats;
    }
    if (ec) extracted = InternalError(fmt::format("cannot rename to {}: {}", dest, ec.message()));
  }
  if (!extracted.ok()) {
    fs::remove_all(tmp, ec);
    return extracted;
  }
  return stats;
}

}  // namespace trainyard::image
