// Writing as root where a less privileged user shapes the files: a folder
// held by its descriptor, in which names are made, written, handed over
// and removed relative to it (openat and friends), never following a link
// and never through a path a user could change midway. A replica that
// replaces a file with a link to /etc/passwd, or a folder with a link to
// /, turns no write of trainyard's into one there.
//
// The rule the node agent keeps with it: trainyard writes only in folders
// it owns (the pod's folder, its volumes folder); what a replica's user
// owns, trainyard creates whole in a folder of its own and then hands over,
// and never writes into again, only removes (RemoveTree).
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>

#include "common/artifact_files.h"
#include "common/status.h"

namespace trainyard {

// Who a file or folder made here is handed to; nullopt: whoever makes it.
struct FileOwner {
  uid_t uid;
  gid_t gid;
};

class HeldDir {
 public:
  // The folder at `path`, made (with its missing parents, `mode`) when it
  // is not there. Its parents are trainyard's own, so links on the way
  // there are followed; the folder itself must be no link. Taken back from
  // whoever owned it (made ours, `mode`), so that only we write in it.
  static Result<HeldDir> OpenOwn(const std::string& path, mode_t mode);

  // The folder at `path`, as it is (whoever owns it): for a folder a
  // user shapes, to make or remove names in it from here. `path` itself
  // must be no link; its parents are trainyard's.
  static Result<HeldDir> Open(const std::string& path);

  const std::string& path() const { return path_; }
  int fd() const { return fd_.get(); }

  // The folder `name` in this one, made when missing (`mode`, handed to
  // `owner`; an existing one is left as it is); never a link.
  Result<HeldDir> Child(std::string_view name, mode_t mode,
                        const std::optional<FileOwner>& owner = std::nullopt) const;
  // Like Child, but the folder is taken back from whoever owns it: for a
  // folder this one made and only it writes in.
  Result<HeldDir> OwnChild(std::string_view name, mode_t mode) const;
  // The folders of `relative` ("a/b"), each made when missing as Child.
  Result<HeldDir> Descend(std::string_view relative, mode_t mode,
                          const std::optional<FileOwner>& owner = std::nullopt) const;

  // Writes `name` whole: a new file (mode `mode`, handed to `owner`) under
  // a temporary name, renamed over what was there; a reader sees the old
  // file or the new one.
  Status WriteFile(std::string_view name, std::string_view content, mode_t mode,
                   const std::optional<FileOwner>& owner = std::nullopt) const;
  // Removes `name` and, if it is a folder, all it holds, without
  // following a link; nothing there is fine.
  Status Remove(std::string_view name) const;

 private:
  HeldDir(Fd fd, std::string path) : fd_(std::move(fd)), path_(std::move(path)) {}
  Fd fd_;
  std::string path_;
};

// Removes `path` and all it holds as HeldDir::Remove does: `path`'s own
// parents are trainyard's.
Status RemoveTree(const std::string& path);

// Hands the folder `path` and all it holds to `owner`, folder by folder
// from descriptors, never following a link.
Status GiveTree(const std::string& path, const FileOwner& owner);

}  // namespace trainyard
