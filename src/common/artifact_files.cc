#include "common/artifact_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <random>

namespace trainyard {
namespace {

constexpr size_t kMaxPathBytes = 4096;
constexpr int kMaxDepth = 32;

std::vector<std::string> PartsOf(std::string_view path) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) slash = path.size();
    parts.emplace_back(path.substr(start, slash - start));
    start = slash + 1;
  }
  return parts;
}

constexpr int kDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

// The directory `parts` names under `root`, each step refusing a link.
Result<Fd> OpenDirBeneath(const std::string& root, const std::vector<std::string>& parts) {
  Fd dir(open(root.c_str(), kDirFlags));
  if (dir.get() < 0) return NotFoundError(fmt::format("{} is not there", root));
  for (const std::string& part : parts) {
    Fd next(openat(dir.get(), part.c_str(), kDirFlags));
    if (next.get() < 0) return NotFoundError(fmt::format("no folder {:?} there", part));
    dir = std::move(next);
  }
  return dir;
}

// Whether `st` may be shown as an artifact of the folder whose own stat is
// `root`: on the folder's filesystem (a mount a replica made there, FUSE
// say, could hold a reader), and, for a file, its one name (a hard link a
// replica made to a file it may not read, /etc/shadow, is no artifact).
bool Contained(const struct stat& st, const struct stat& root) {
  if (st.st_dev != root.st_dev) return false;
  return S_ISDIR(st.st_mode) || (S_ISREG(st.st_mode) && st.st_nlink == 1);
}

// Names trainyard gives uploads being written: never listed.
constexpr std::string_view kUploadPrefix = ".trainyard-upload-";

TimePoint ModifiedOf(const struct stat& st) {
  return TimePoint(std::chrono::duration_cast<Duration>(
      std::chrono::seconds(st.st_mtim.tv_sec) + std::chrono::nanoseconds(st.st_mtim.tv_nsec)));
}

struct Walk {
  bool recursive;
  size_t limit;
  std::string_view name_contains;
  struct stat root;
  // Every name read and folder opened counts, shown or not: a replica's
  // million links or empty folders cost a listing no more than this.
  size_t budget = 100'000;
  ArtifactListing out;
};

// Adds the entries of the open directory `fd` (at `prefix`) to the walk.
// Returns false once the limit is reached.
bool ListDir(int fd, const std::string& prefix, int depth, Walk& walk) {
  int own = dup(fd);
  if (own < 0) return true;
  DIR* d = fdopendir(own);
  if (d == nullptr) {
    close(own);
    return true;
  }
  std::vector<std::string> names;
  while (dirent* e = readdir(d)) {
    std::string_view name = e->d_name;
    if (name == "." || name == ".." || name.starts_with(kUploadPrefix)) continue;
    if (walk.budget == 0) {
      walk.out.truncated = true;
      break;
    }
    --walk.budget;
    names.emplace_back(name);
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    struct stat st {};
    if (fstatat(fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    std::string path = prefix.empty() ? name : prefix + "/" + name;
    bool directory = S_ISDIR(st.st_mode);
    // Links, FIFOs, sockets, devices, hard links, other filesystems.
    if (!Contained(st, walk.root)) continue;
    if (!directory && name.find(walk.name_contains) == std::string::npos) continue;
    if (!directory || !walk.recursive) {
      if (walk.out.items.size() == walk.limit) {
        walk.out.truncated = true;
        return false;
      }
      walk.out.items.push_back({.path = path,
                                .directory = directory,
                                .size = directory ? 0 : static_cast<int64_t>(st.st_size),
                                .modified = ModifiedOf(st)});
      continue;
    }
    if (depth + 1 >= kMaxDepth || walk.budget == 0) {
      walk.out.truncated = true;
      continue;
    }
    --walk.budget;
    Fd sub(openat(fd, name.c_str(), kDirFlags));
    if (sub.get() >= 0 && !ListDir(sub.get(), path, depth + 1, walk)) return false;
  }
  return true;
}

}  // namespace

Fd::~Fd() {
  if (fd_ >= 0) close(fd_);
}

Status CheckArtifactPath(std::string_view path) {
  if (path.size() > kMaxPathBytes) {
    return InvalidArgumentError(fmt::format("path: longer than {} bytes", kMaxPathBytes));
  }
  if (path.find('\0') != std::string_view::npos) {
    return InvalidArgumentError("path: holds a NUL byte");
  }
  for (const std::string& part : PartsOf(path)) {
    if (part.empty() || part == "." || part == "..") {
      return InvalidArgumentError(fmt::format(
          "path {:?}: want a path relative to the job's output folder, of names separated "
          "by '/' (no empty, '.' or '..' names)",
          path));
    }
    if (part.starts_with(kUploadPrefix)) {
      return InvalidArgumentError(
          fmt::format("path {:?}: names beginning {} are trainyard's, for uploads being written",
                      path, kUploadPrefix));
    }
  }
  return OkStatus();
}

Result<ArtifactListing> ListArtifacts(const std::string& root, std::string_view dir, bool recursive,
                                      size_t limit, std::string_view name_contains) {
  std::vector<std::string> parts;
  if (!dir.empty()) {
    RETURN_IF_ERROR(CheckArtifactPath(dir));
    parts = PartsOf(dir);
  }
  struct stat st {};
  if (dir.empty() && lstat(root.c_str(), &st) != 0) return ArtifactListing{};
  ASSIGN_OR_RETURN(Fd top, OpenDirBeneath(root, {}));
  Walk walk{.recursive = recursive,
            .limit = limit,
            .name_contains = name_contains,
            .root = {},
            .out = {}};
  if (fstat(top.get(), &walk.root) != 0) return ArtifactListing{};
  ASSIGN_OR_RETURN(Fd fd, OpenDirBeneath(root, parts));
  struct stat here {};
  if (fstat(fd.get(), &here) != 0 || !Contained(here, walk.root)) {
    return NotFoundError(fmt::format("no folder {:?} there", std::string(dir)));
  }
  ListDir(fd.get(), std::string(dir), 0, walk);
  return std::move(walk.out);
}

Result<OpenedArtifact> OpenArtifact(const std::string& root, std::string_view path) {
  RETURN_IF_ERROR(CheckArtifactPath(path));
  std::vector<std::string> parts = PartsOf(path);
  std::string name = std::move(parts.back());
  parts.pop_back();
  ASSIGN_OR_RETURN(Fd dir, OpenDirBeneath(root, parts));
  // O_NONBLOCK: a FIFO must not hold the request until a writer comes.
  Fd file(openat(dir.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  struct stat st {};
  struct stat top {};
  if (file.get() < 0 || fstat(file.get(), &st) != 0 || stat(root.c_str(), &top) != 0 ||
      !S_ISREG(st.st_mode) || !Contained(st, top) ||
      std::string_view(name).starts_with(kUploadPrefix)) {
    return NotFoundError(fmt::format("no file {:?} in the job's artifacts", std::string(path)));
  }
  return OpenedArtifact{.fd = std::move(file), .size = static_cast<int64_t>(st.st_size)};
}

Result<OpenedArtifact> OpenRegularFile(const std::string& path) {
  // O_NONBLOCK: a FIFO must not hold the reader until a writer comes (a
  // regular file's reads are not changed by it).
  Fd file(open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  struct stat st {};
  if (file.get() < 0 || fstat(file.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return NotFoundError(fmt::format("no regular file at {}", path));
  }
  return OpenedArtifact{.fd = std::move(file), .size = static_cast<int64_t>(st.st_size)};
}

std::string ReadAt(const OpenedArtifact& file, int64_t offset, int64_t max) {
  std::string out(static_cast<size_t>(std::max<int64_t>(0, max)), '\0');
  size_t done = 0;
  while (done < out.size()) {
    ssize_t n = pread(file.fd.get(), out.data() + done, out.size() - done,
                      offset + static_cast<int64_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  out.resize(done);
  return out;
}

Status WriteArtifact(const std::string& root, std::string_view path, std::string_view content) {
  RETURN_IF_ERROR(CheckArtifactPath(path));
  std::vector<std::string> parts = PartsOf(path);
  std::string name = std::move(parts.back());
  parts.pop_back();
  // The run's folder is the server's alone (the folders above it are the
  // caller's to make as it wants them).
  std::error_code ec;
  if (std::filesystem::create_directories(root, ec)) {
    std::filesystem::permissions(root, std::filesystem::perms::owner_all, ec);
  }
  Fd dir(open(root.c_str(), kDirFlags));
  if (dir.get() < 0) return UnavailableError(fmt::format("cannot open {}", root));
  for (const std::string& part : parts) {
    mkdirat(dir.get(), part.c_str(), 0700);
    Fd next(openat(dir.get(), part.c_str(), kDirFlags));
    if (next.get() < 0) {
      return FailedPreconditionError(fmt::format("{:?} is a file, not a folder", part));
    }
    dir = std::move(next);
  }
  // Made afresh under a name no one can guess (O_EXCL: never a file, a
  // link or a FIFO someone put there first), never listed, renamed into
  // place once whole.
  static std::atomic<uint64_t> writes{0};
  std::string temp = fmt::format("{}{}-{}-{:016x}", kUploadPrefix, getpid(), ++writes,
                                 std::random_device()() * 0x100000000ULL + std::random_device()());
  Fd out(openat(dir.get(), temp.c_str(),
                O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600));
  if (out.get() < 0) {
    return FailedPreconditionError(
        fmt::format("cannot write {:?}: {}", std::string(path), std::strerror(errno)));
  }
  for (size_t done = 0; done < content.size();) {
    ssize_t n = write(out.get(), content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      unlinkat(dir.get(), temp.c_str(), 0);
      return UnavailableError(
          fmt::format("cannot write {:?}: the disk may be full", std::string(path)));
    }
    done += static_cast<size_t>(n);
  }
  if (fsync(out.get()) != 0 || renameat(dir.get(), temp.c_str(), dir.get(), name.c_str()) != 0) {
    unlinkat(dir.get(), temp.c_str(), 0);
    return FailedPreconditionError(fmt::format("cannot put {:?} in place", std::string(path)));
  }
  return OkStatus();
}

Status WriteArtifactOwner(const std::string& folder, const ArtifactOwner& owner) {
  // One field a line: kind, name, uid, and the deletion's time in
  // nanoseconds since the epoch (two deletions a second apart still order).
  std::string text =
      fmt::format("{}\n{}\n{}\n{}\n", owner.kind, owner.name, owner.uid,
                  owner.deleted ? std::to_string(owner.deleted->time_since_epoch().count()) : "");
  std::string path = folder + ".owner";
  std::string temp = path + ".new";
  {
    std::ofstream out(temp, std::ios::trunc);
    out << text;
    out.flush();
    if (!out) return UnavailableError(fmt::format("cannot write {}", temp));
  }
  std::error_code ec;
  std::filesystem::rename(temp, path, ec);
  if (ec) return UnavailableError(fmt::format("cannot write {}: {}", path, ec.message()));
  return OkStatus();
}

std::optional<ArtifactOwner> ReadArtifactOwner(const std::string& folder) {
  Fd fd(open((folder + ".owner").c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  struct stat st {};
  if (fd.get() < 0 || fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  char buffer[4096];
  ssize_t n = read(fd.get(), buffer, sizeof buffer);
  if (n <= 0) return std::nullopt;
  std::vector<std::string> lines;
  std::string_view text(buffer, static_cast<size_t>(n));
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) break;
    lines.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  if (lines.size() != 4) return std::nullopt;
  ArtifactOwner owner{.kind = lines[0], .name = lines[1], .uid = lines[2], .deleted = {}};
  if (owner.uid != std::filesystem::path(folder).filename().string()) return std::nullopt;
  if (!lines[3].empty()) {
    int64_t ns = 0;
    auto [ptr, ec] = std::from_chars(lines[3].data(), lines[3].data() + lines[3].size(), ns);
    if (ec != std::errc() || ptr != lines[3].data() + lines[3].size()) return std::nullopt;
    owner.deleted = TimePoint(Duration(ns));
  }
  return owner;
}

void ForEachDeletedOwner(
    const std::string& namespace_dir,
    const std::function<void(const std::string& folder, const ArtifactOwner& owner)>& visit) {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (fs::directory_iterator it(namespace_dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string path = it->path().string();
    if (!path.ends_with(".owner")) continue;
    std::string folder = path.substr(0, path.size() - 6);
    std::optional<ArtifactOwner> owner = ReadArtifactOwner(folder);
    if (owner && owner->deleted) visit(folder, *owner);
  }
}

std::string DeletedOwnersFolder(const std::string& namespace_dir, std::string_view kind,
                                std::string_view name) {
  std::string found;
  TimePoint latest = TimePoint::min();
  ForEachDeletedOwner(namespace_dir, [&](const std::string& folder, const ArtifactOwner& owner) {
    if (owner.kind == kind && owner.name == name && *owner.deleted >= latest) {
      latest = *owner.deleted;
      found = folder;
    }
  });
  return found;
}

}  // namespace trainyard
