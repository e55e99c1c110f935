#include "controller/trial_dir.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <vector>

#include "api/names.h"
#include "common/artifact_files.h"
#include "common/held_dir.h"
#include "tune/sampler.h"

namespace trainyard::controller {

namespace fs = std::filesystem;

namespace {

// fsync(2) on a file or directory.
Status Sync(const fs::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return UnavailableError(fmt::format("cannot open {} to sync it", path.string()));
  bool ok = ::fsync(fd) == 0;
  ::close(fd);
  return ok ? OkStatus() : UnavailableError(fmt::format("cannot sync {}", path.string()));
}

// Copies the regular file `from` to the new file `to`, read from one
// descriptor: what a replica shaped there is never followed (a link swapped
// in midway), nor a file of another's it linked to by a hard link.
Status CopyRegularFile(const fs::path& from, const fs::path& to) {
  Result<OpenedArtifact> source = OpenRegularFile(from.string());
  struct stat st {};
  if (!source.ok() || fstat(source->fd.get(), &st) != 0 || st.st_nlink != 1) {
    return OkStatus();  // not a file of its own: not copied
  }
  Fd target(
      ::open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, st.st_mode & 0777));
  if (target.get() < 0) return UnavailableError(fmt::format("cannot create {}", to.string()));
  constexpr int64_t kStep = 1 << 20;
  for (int64_t at = 0; at < source->size; at += kStep) {
    std::string bytes = ReadAt(*source, at, std::min(kStep, source->size - at));
    if (bytes.empty()) break;
    for (std::string_view left = bytes; !left.empty();) {
      ssize_t n = ::write(target.get(), left.data(), left.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return UnavailableError(fmt::format("cannot write {}", to.string()));
      left.remove_prefix(static_cast<size_t>(n));
    }
  }
  return ::fsync(target.get()) == 0 ? OkStatus()
                                    : UnavailableError(fmt::format("cannot sync {}", to.string()));
}

// Copies the tree `from` to the new directory `to`, file by file, and syncs
// every file and directory of the copy.
Status CopyTree(const fs::path& from, const fs::path& to, const std::atomic<bool>* stop) {
  std::error_code ec;
  fs::create_directory(to, ec);
  std::vector<fs::path> dirs = {to};
  for (auto it = fs::recursive_directory_iterator(from, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (stop != nullptr && *stop) return UnavailableError("stopped before the copy was done");
    fs::path target = to / it->path().lexically_relative(from);
    fs::file_status status = it->symlink_status(ec);
    if (fs::is_symlink(status)) {
      fs::copy_symlink(it->path(), target, ec);
    } else if (fs::is_directory(status)) {
      fs::create_directory(target, ec);
      dirs.push_back(target);
    } else if (fs::is_regular_file(status)) {
      RETURN_IF_ERROR(CopyRegularFile(it->path(), target));
    }
    if (ec) break;
  }
  if (ec) return UnavailableError(ec.message());
  for (const fs::path& dir : dirs) RETURN_IF_ERROR(Sync(dir));
  return OkStatus();
}

}  // namespace

std::string ExperimentTrialDirs(const std::string& root, const std::string& namespace_,
                                const std::string& experiment) {
  return fmt::format("{}/{}/{}", root, namespace_, experiment);
}

std::optional<TrialDir> TrialDirOf(const api::Experiment& experiment, const api::Trial& trial,
                                   const std::string& root) {
  if (!experiment.spec.algorithm) return std::nullopt;
  std::string mount_path;
  for (const api::AlgorithmSetting& s : experiment.spec.algorithm->algorithm_settings) {
    if (s.name == tune::kTrialDirSetting && !s.value.empty()) mount_path = s.value;
  }
  if (mount_path.empty()) return std::nullopt;
  std::string dirs =
      ExperimentTrialDirs(root, experiment.metadata.namespace_, experiment.metadata.name);
  TrialDir dir{.mount_path = mount_path, .host_path = dirs + "/" + trial.metadata.name};
  auto parent = trial.spec.labels.find(std::string(tune::kPbtParentLabel));
  if (parent != trial.spec.labels.end() && api::Dns1123SubdomainProblems(parent->second).empty()) {
    dir.parent_path = dirs + "/" + parent->second;
  }
  return dir;
}

Status PrepareTrialDir(const TrialDir& dir, bool* parent_missing, const std::atomic<bool>* stop) {
  *parent_missing = false;
  std::error_code ec;
  if (fs::is_directory(dir.host_path, ec)) return OkStatus();
  fs::path target(dir.host_path);
  fs::create_directories(target.parent_path(), ec);
  if (ec) {
    return UnavailableError(
        fmt::format("cannot create {}: {}", target.parent_path().string(), ec.message()));
  }
  fs::path partial = target.string() + ".copying";
  RETURN_IF_ERROR(RemoveTree(partial.string()));
  *parent_missing = !dir.parent_path.empty() && !fs::is_directory(dir.parent_path, ec);
  bool copy = !dir.parent_path.empty() && !*parent_missing;
  Status copied = OkStatus();
  if (copy) {
    copied = CopyTree(dir.parent_path, partial, stop);
  } else {
    fs::create_directory(partial, ec);
    copied = Sync(partial);
  }
  if (!copied.ok() && copy) {
    return UnavailableError(fmt::format("cannot copy the parent's directory {} to {}: {}",
                                        dir.parent_path, dir.host_path, copied.message()));
  }
  if (!copied.ok()) {
    return UnavailableError(fmt::format("cannot make {}: {}", dir.host_path, copied.message()));
  }
  fs::rename(partial, target, ec);
  if (ec)
    return UnavailableError(fmt::format("cannot rename {}: {}", partial.string(), ec.message()));
  return Sync(target.parent_path());
}

TrialDirMaker::TrialDirMaker() : worker_([this] { Work(); }) {}

TrialDirMaker::~TrialDirMaker() {
  {
    MutexLock lock(mu_);
    stop_ = true;
  }
  wake_.NotifyAll();
  worker_.join();
}

Result<TrialDirMaker::Readiness> TrialDirMaker::Ensure(const TrialDir& dir) {
  MutexLock lock(mu_);
  if (auto failed = failed_.find(dir.host_path); failed != failed_.end()) {
    Status status = failed->second;
    failed_.erase(failed);
    return status;
  }
  if (under_way_.contains(dir.host_path)) return Readiness{};
  std::error_code ec;
  if (fs::is_directory(dir.host_path, ec)) {
    return Readiness{.ready = true, .parent_missing = parent_missing_.erase(dir.host_path) > 0};
  }
  under_way_.insert(dir.host_path);
  queue_.push_back(dir);
  wake_.NotifyOne();
  return Readiness{};
}

void TrialDirMaker::Work() {
  MutexLock lock(mu_);
  while (true) {
    wake_.Wait(mu_, [this]() TRAINYARD_REQUIRES(mu_) { return stop_ || !queue_.empty(); });
    if (stop_) return;
    TrialDir dir = std::move(queue_.front());
    queue_.pop_front();
    lock.Unlock();
    bool parent_missing = false;
    Status status = PrepareTrialDir(dir, &parent_missing, &stop_);
    lock.Lock();
    under_way_.erase(dir.host_path);
    if (!status.ok()) failed_[dir.host_path] = status;
    if (parent_missing) parent_missing_.insert(dir.host_path);
  }
}

}  // namespace trainyard::controller
