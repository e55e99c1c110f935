// A job's artifacts: the files under its output folder (api::ArtifactsDirOf),
// read on behalf of whoever may read the job (the API), or for its metrics
// (engine/metrics_collector.h). The folder's contents are the replicas' to
// shape, so nothing here follows a symbolic link: a link planted there to
// /etc/shadow is no artifact, and neither is a FIFO that would hold a
// reader forever.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/status.h"

namespace trainyard {

struct Artifact {
  std::string path;  // relative to the folder, '/'-separated
  bool directory = false;
  int64_t size = 0;  // bytes; 0 for a directory
  TimePoint modified;
};

struct ArtifactListing {
  std::vector<Artifact> items;  // in path order
  bool truncated = false;       // more than the limit asked for
};

// INVALID_ARGUMENT unless `path` is a relative path of plain names (no
// "", ".", ".." or NUL) of at most 4096 bytes.
Status CheckArtifactPath(std::string_view path);

// The files (and, unless `recursive`, directories) under `dir` of `root`
// ("" the root itself): recursively, every regular file; else its entries
// alone, as MLflow lists a level. At most `limit` entries, 32 levels deep.
// NOT_FOUND when `dir` is not a directory there; an empty listing when the
// root is missing (a job that wrote nothing).
// With `name_contains`, only files whose name holds it (the event files
// among a job's checkpoints) are listed, and count toward the limit.
Result<ArtifactListing> ListArtifacts(const std::string& root, std::string_view dir, bool recursive,
                                      size_t limit, std::string_view name_contains = "");

// A descriptor closed when it goes.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    std::swap(fd_, other.fd_);
    return *this;
  }
  ~Fd();
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

// A regular file, open for reading, and its size when opened.
struct OpenedArtifact {
  Fd fd;
  int64_t size = 0;
};
// The regular file `path` under `root`: NOT_FOUND for anything else, or
// where a link lies on the way.
Result<OpenedArtifact> OpenArtifact(const std::string& root, std::string_view path);
// The regular file at `path`, whose folders are trainyard's own but whose
// last name may be a replica's (a metrics file): NOT_FOUND for a link,
// a FIFO or anything else there, or nothing.
Result<OpenedArtifact> OpenRegularFile(const std::string& path);
// At most `max` bytes of `file` from `offset` (fewer at its end, none on
// an error).
std::string ReadAt(const OpenedArtifact& file, int64_t offset, int64_t max);

// Writes `content` to `path` under `root` (whose folders it makes, `root`
// itself 0700), through a temporary file renamed into place: a reader never sees half a
// file. FAILED_PRECONDITION where a link or file lies on the way.
Status WriteArtifact(const std::string& root, std::string_view path, std::string_view content);

// Whose a job's output folder is, kept beside it in `<folder>.owner` (in
// a folder the replicas cannot write when they run as a user of their
// own; read as a replica could have shaped it all the same): so that its
// artifacts outlive the job for a while, and are still found by the job's
// kind and name.
struct ArtifactOwner {
  std::string kind;  // a job kind, or Trial
  std::string name;
  std::string uid;
  std::optional<TimePoint> deleted;  // when its owner was deleted
};
// Written whole (a temporary file renamed into place).
Status WriteArtifactOwner(const std::string& folder, const ArtifactOwner& owner);
// Nothing when the folder has no record (a client's MLflow run's), or one
// that is not a small regular file naming the folder's uid.
std::optional<ArtifactOwner> ReadArtifactOwner(const std::string& folder);
// Each folder under `namespace_dir` whose owner was deleted, with its
// record.
void ForEachDeletedOwner(
    const std::string& namespace_dir,
    const std::function<void(const std::string& folder, const ArtifactOwner& owner)>& visit);
// The folder under `namespace_dir` whose deleted owner was `kind`/`name`,
// the one deleted last; "" when there is none.
std::string DeletedOwnersFolder(const std::string& namespace_dir, std::string_view kind,
                                std::string_view name);

}  // namespace trainyard
