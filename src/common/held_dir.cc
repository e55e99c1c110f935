#include "common/held_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <random>
#include <vector>

namespace trainyard {
namespace {

constexpr int kHeldDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
// Folders open at once while walking a tree: deeper ones are moved up
// (RemoveAllIn) or left as they are (GiveTree), so no tree a user makes
// can exhaust descriptors or the stack.
constexpr size_t kMaxOpen = 64;

std::string Errno() { return std::strerror(errno); }

// A new open of the folder `fd` is, to read from its start: a duplicate
// would share the position where the last reading of it ended.
int Reopen(int fd) { return openat(fd, ".", kHeldDirFlags); }

Status CheckName(std::string_view name) {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string_view::npos ||
      name.find('\0') != std::string_view::npos) {
    return InvalidArgumentError(fmt::format("{:?} is not a plain file name", name));
  }
  return OkStatus();
}

std::string TemporaryName() {
  static thread_local std::mt19937_64 random(std::random_device{}());
  return fmt::format(".trainyard-tmp-{:016x}", random());
}

Status Hand(int fd, const std::optional<FileOwner>& owner, const std::string& what) {
  if (!owner) return OkStatus();
  if (fchown(fd, owner->uid, owner->gid) != 0) {
    return UnavailableError(fmt::format("cannot hand {} to uid {}: {}", what, owner->uid, Errno()));
  }
  return OkStatus();
}

// An open folder being walked, and the name it has in its parent.
struct Level {
  DIR* dir;
  std::string name;
};

void CloseAll(std::vector<Level>& stack) {
  for (Level& l : stack) closedir(l.dir);
  stack.clear();
}

// One pass over what `top` holds, removing what it can; a folder deeper
// than kMaxOpen is moved up into `top`, for the next pass. Whether
// anything was removed or moved.
Result<bool> RemovePass(int top) {
  int first = Reopen(top);
  DIR* root = first < 0 ? nullptr : fdopendir(first);
  if (root == nullptr) {
    if (first >= 0) close(first);
    return UnavailableError(fmt::format("cannot read a folder to remove: {}", Errno()));
  }
  std::vector<Level> stack = {{root, ""}};
  bool progress = false;
  while (!stack.empty()) {
    Level& level = stack.back();
    int at = dirfd(level.dir);
    errno = 0;
    dirent* entry = readdir(level.dir);
    if (entry == nullptr) {
      std::string name = level.name;
      closedir(level.dir);
      stack.pop_back();
      if (!stack.empty() && unlinkat(dirfd(stack.back().dir), name.c_str(), AT_REMOVEDIR) == 0) {
        progress = true;
      }
      continue;
    }
    std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    int sub = openat(at, name.c_str(), kHeldDirFlags);
    if (sub < 0) {
      // A file, a link, a FIFO, ...: its name goes, never what it names.
      if (unlinkat(at, name.c_str(), 0) == 0) progress = true;
      continue;
    }
    if (stack.size() >= kMaxOpen) {
      close(sub);
      if (renameat(at, name.c_str(), top, TemporaryName().c_str()) == 0) progress = true;
      continue;
    }
    DIR* dir = fdopendir(sub);
    if (dir == nullptr) {
      close(sub);
      continue;
    }
    stack.push_back({dir, name});
  }
  CloseAll(stack);
  return progress;
}

// Removes everything the open folder `fd` holds.
Status RemoveAllIn(int fd, const std::string& what) {
  while (true) {
    ASSIGN_OR_RETURN(bool progress, RemovePass(fd));
    // Empty, or nothing more can go.
    int probe = Reopen(fd);
    DIR* dir = probe < 0 ? nullptr : fdopendir(probe);
    bool empty = true;
    if (dir != nullptr) {
      while (dirent* e = readdir(dir)) {
        if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) {
          empty = false;
          break;
        }
      }
      closedir(dir);
    } else if (probe >= 0) {
      close(probe);
    }
    if (empty) return OkStatus();
    if (!progress) return UnavailableError(fmt::format("cannot empty {}", what));
  }
}

// Removes `name` in the open folder `parent` and, if it is a folder, all
// it holds; nothing there is fine.
Status RemoveAt(int parent, const std::string& name, const std::string& what) {
  Fd sub(openat(parent, name.c_str(), kHeldDirFlags));
  if (sub.get() >= 0) {
    RETURN_IF_ERROR(RemoveAllIn(sub.get(), what));
    if (unlinkat(parent, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) {
      return UnavailableError(fmt::format("cannot remove {}: {}", what, Errno()));
    }
    return OkStatus();
  }
  if (unlinkat(parent, name.c_str(), 0) != 0 && errno != ENOENT) {
    return UnavailableError(fmt::format("cannot remove {}: {}", what, Errno()));
  }
  return OkStatus();
}

// Hands what the open folder `top` holds to `owner`, kMaxOpen folders deep
// at most; a hard link to a file (which may be anyone's) is left alone.
void GiveAllIn(int top, const FileOwner& owner) {
  int first = Reopen(top);
  DIR* root = first < 0 ? nullptr : fdopendir(first);
  if (root == nullptr) {
    if (first >= 0) close(first);
    return;
  }
  std::vector<Level> stack = {{root, ""}};
  while (!stack.empty()) {
    int at = dirfd(stack.back().dir);
    dirent* entry = readdir(stack.back().dir);
    if (entry == nullptr) {
      closedir(stack.back().dir);
      stack.pop_back();
      continue;
    }
    std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    struct stat st {};
    if (fstatat(at, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (!S_ISDIR(st.st_mode)) {
      if (st.st_nlink == 1 || st.st_uid == owner.uid) {
        (void)fchownat(at, name.c_str(), owner.uid, owner.gid, AT_SYMLINK_NOFOLLOW);
      }
      continue;
    }
    int sub = openat(at, name.c_str(), kHeldDirFlags);
    if (sub < 0) continue;
    (void)fchown(sub, owner.uid, owner.gid);
    DIR* dir = stack.size() < kMaxOpen ? fdopendir(sub) : nullptr;
    if (dir == nullptr) {
      close(sub);
      continue;
    }
    stack.push_back({dir, name});
  }
}

}  // namespace

Result<HeldDir> HeldDir::OpenOwn(const std::string& path, mode_t mode) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  Fd fd(open(path.c_str(), kHeldDirFlags));
  if (fd.get() < 0) {
    return UnavailableError(fmt::format("cannot open the folder {}: {}", path, Errno()));
  }
  struct stat st {};
  fstat(fd.get(), &st);
  if ((st.st_uid != geteuid() && fchown(fd.get(), geteuid(), getegid()) != 0) ||
      ((st.st_mode & 07777) != mode && fchmod(fd.get(), mode) != 0)) {
    return UnavailableError(
        fmt::format("cannot make the folder {} trainyard's: {}", path, Errno()));
  }
  return HeldDir(std::move(fd), path);
}

Result<HeldDir> HeldDir::Open(const std::string& path) {
  Fd fd(open(path.c_str(), kHeldDirFlags));
  if (fd.get() < 0) {
    return FailedPreconditionError(fmt::format("{} is not a folder: {}", path, Errno()));
  }
  return HeldDir(std::move(fd), path);
}

Result<HeldDir> HeldDir::Child(std::string_view name, mode_t mode,
                               const std::optional<FileOwner>& owner) const {
  RETURN_IF_ERROR(CheckName(name));
  std::string n(name);
  std::string path = path_ + "/" + n;
  bool made = mkdirat(fd_.get(), n.c_str(), 0700) == 0;
  if (!made && errno != EEXIST) {
    return UnavailableError(fmt::format("cannot make the folder {}: {}", path, Errno()));
  }
  Fd child(openat(fd_.get(), n.c_str(), kHeldDirFlags));
  if (child.get() < 0) {
    return FailedPreconditionError(
        fmt::format("{} is not a folder (a link or a file is there)", path));
  }
  if (made) {
    // Its mode once it is whole, never wider while it is made.
    RETURN_IF_ERROR(Hand(child.get(), owner, path));
    if (fchmod(child.get(), mode) != 0) {
      return UnavailableError(fmt::format("cannot set the mode of {}: {}", path, Errno()));
    }
  }
  return HeldDir(std::move(child), std::move(path));
}

Result<HeldDir> HeldDir::OwnChild(std::string_view name, mode_t mode) const {
  ASSIGN_OR_RETURN(HeldDir child, Child(name, mode));
  struct stat st {};
  fstat(child.fd(), &st);
  if ((st.st_uid != geteuid() && fchown(child.fd(), geteuid(), getegid()) != 0) ||
      ((st.st_mode & 07777) != mode && fchmod(child.fd(), mode) != 0)) {
    return UnavailableError(
        fmt::format("cannot make the folder {} trainyard's: {}", child.path(), Errno()));
  }
  return child;
}

Result<HeldDir> HeldDir::Descend(std::string_view relative, mode_t mode,
                                 const std::optional<FileOwner>& owner) const {
  Fd copy(fcntl(fd_.get(), F_DUPFD_CLOEXEC, 0));
  HeldDir at(std::move(copy), path_);
  size_t start = 0;
  while (start < relative.size()) {
    size_t slash = relative.find('/', start);
    if (slash == std::string_view::npos) slash = relative.size();
    std::string_view part = relative.substr(start, slash - start);
    start = slash + 1;
    if (part.empty() || part == ".") continue;
    ASSIGN_OR_RETURN(at, at.Child(part, mode, owner));
  }
  return at;
}

Status HeldDir::WriteFile(std::string_view name, std::string_view content, mode_t mode,
                          const std::optional<FileOwner>& owner) const {
  RETURN_IF_ERROR(CheckName(name));
  std::string n(name);
  std::string path = path_ + "/" + n;
  std::string temporary = TemporaryName();
  Fd file(openat(fd_.get(), temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                 0600));
  if (file.get() < 0) return UnavailableError(fmt::format("cannot write {}: {}", path, Errno()));
  auto failed = [&](std::string why) {
    unlinkat(fd_.get(), temporary.c_str(), 0);
    return UnavailableError(fmt::format("cannot write {}: {}", path, why));
  };
  while (!content.empty()) {
    ssize_t n_written = write(file.get(), content.data(), content.size());
    if (n_written < 0 && errno == EINTR) continue;
    if (n_written <= 0) return failed(Errno());
    content.remove_prefix(static_cast<size_t>(n_written));
  }
  if (Status handed = Hand(file.get(), owner, path); !handed.ok()) return failed(handed.message());
  if (fchmod(file.get(), mode) != 0) return failed(Errno());
  if (renameat(fd_.get(), temporary.c_str(), fd_.get(), n.c_str()) != 0) return failed(Errno());
  return OkStatus();
}

Status HeldDir::Remove(std::string_view name) const {
  RETURN_IF_ERROR(CheckName(name));
  return RemoveAt(fd_.get(), std::string(name), path_ + "/" + std::string(name));
}

Status RemoveTree(const std::string& path) {
  std::filesystem::path p = std::filesystem::path(path).lexically_normal();
  if (p.filename().empty()) p = p.parent_path();
  std::string parent = p.has_parent_path() ? p.parent_path().string() : ".";
  std::string name = p.filename().string();
  if (CheckName(name).ok() == false) {
    return InvalidArgumentError(fmt::format("{:?}: no folder to remove", path));
  }
  Fd dir(open(parent.c_str(), kHeldDirFlags));
  if (dir.get() < 0) return OkStatus();  // nothing there
  return RemoveAt(dir.get(), name, path);
}

Status GiveTree(const std::string& path, const FileOwner& owner) {
  Fd dir(open(path.c_str(), kHeldDirFlags));
  if (dir.get() < 0) {
    struct stat st {};
    if (lstat(path.c_str(), &st) != 0) return OkStatus();  // nothing there
    // A file of its own (a FileOrCreate hostPath): handed as it is.
    if (!S_ISLNK(st.st_mode) && lchown(path.c_str(), owner.uid, owner.gid) == 0) {
      return OkStatus();
    }
    return UnavailableError(fmt::format("cannot hand {} to uid {}: {}", path, owner.uid, Errno()));
  }
  if (fchown(dir.get(), owner.uid, owner.gid) != 0) {
    return UnavailableError(fmt::format("cannot hand {} to uid {}: {}", path, owner.uid, Errno()));
  }
  GiveAllIn(dir.get(), owner);
  return OkStatus();
}

}  // namespace trainyard
