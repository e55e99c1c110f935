#include "engine/artifact_dirs.h"

#include <fmt/format.h>

#include <atomic>
#include <deque>
#include <filesystem>
#include <optional>
#include <set>
#include <thread>

#include "api/object.h"
#include "api/registry.h"
#include "api/tracking.h"
#include "common/artifact_files.h"
#include "common/held_dir.h"
#include "common/mutex.h"

namespace trainyard::engine {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kTrash = ".trash";

// The kinds whose objects own an output folder, as stores key them.
std::vector<std::string> OwnerKinds() {
  std::vector<std::string> kinds = {"Trial", std::string(api::kTrackingRunKind)};
  for (const std::string& kind : api::JobKindNames()) {
    kinds.push_back(api::ResourceTypeOfKind(kind)->store_kind);
  }
  return kinds;
}

bool OwnsFolder(std::string_view kind) {
  return api::TrackingOf(kind) != api::Tracking::kNone || kind == api::kTrackingRunKind;
}

// The name of the folder `object` owns: its uid; a client's MLflow run's
// is named by the run's id, its object's name (mlflow::RunArtifactsDir).
std::string FolderName(const api::Json& object) {
  bool run = api::StringAt(object, "kind") == api::kTrackingRunKind;
  return api::StringAt(object, {"metadata", run ? "name" : "uid"});
}

// When a folder whose owner was deleted at `deleted` is due; saturating:
// a retention of centuries is due never.
TimePoint DueOf(TimePoint deleted, Duration retention) {
  return TimePoint::max() - deleted > retention ? deleted + retention : TimePoint::max();
}

std::string Absolute(const std::string& root) {
  if (root.empty()) return root;
  std::error_code ec;
  fs::path absolute = fs::absolute(root, ec);
  return ec ? root : absolute.lexically_normal().string();
}

}  // namespace

struct ArtifactDirs::Emptier {
  std::string root;
  Duration retention;
  Logger* log;  // outlives the emptier's thread (the process's, by default)
  Mutex mu;
  CondVar wake;
  std::deque<std::string> trash TRAINYARD_GUARDED_BY(mu);       // folders in .trash to remove
  std::optional<TimePoint> expire_at TRAINYARD_GUARDED_BY(mu);  // expire as of then
  // When the next deleted owner's folder is due, as read or noted last.
  TimePoint next_due TRAINYARD_GUARDED_BY(mu) = TimePoint::max();
  bool stop TRAINYARD_GUARDED_BY(mu) = false;

  // Renames `dir` (and drops its record) into the trash, to be removed.
  void Trash(const std::string& dir) {
    std::error_code ec;
    fs::remove(dir + ".owner", ec);
    if (!fs::exists(dir, ec)) return;
    static std::atomic<uint64_t> trashed{0};
    fs::path bin = fs::path(root) / kTrash;
    fs::create_directories(bin, ec);
    fs::path to = bin / fmt::format("{}-{}", fs::path(dir).filename().string(), ++trashed);
    fs::rename(dir, to, ec);
    if (ec) {
      // Nothing waits on it; a folder left is swept at the next start.
      log->Warning("trainyard: cannot remove {}: {}", dir, ec.message());
      return;
    }
    Queue(to.string());
  }
  void Queue(std::string dir) {
    {
      MutexLock lock(mu);
      trash.push_back(std::move(dir));
    }
    wake.NotifyOne();
  }
  // Trashes the folders whose owners were deleted `retention` before `now`.
  void Expire(TimePoint now) {
    std::error_code ec;
    std::vector<std::string> expired;
    TimePoint next = TimePoint::max();
    for (fs::directory_iterator ns(root, ec), end; !ec && ns != end; ns.increment(ec)) {
      std::error_code inner;
      if (ns->path().filename() == kTrash || !ns->is_directory(inner)) continue;
      ForEachDeletedOwner(ns->path().string(),
                          [&](const std::string& folder, const ArtifactOwner& owner) {
                            // Saturating: a retention of centuries keeps, never wraps round.
                            if (now - *owner.deleted >= retention) {
                              expired.push_back(folder);
                            } else {
                              next = std::min(next, DueOf(*owner.deleted, retention));
                            }
                          });
    }
    for (const std::string& folder : expired) Trash(folder);
    MutexLock lock(mu);
    next_due = std::min(next_due, next);
  }
  void Run() {
    MutexLock lock(mu);
    while (true) {
      wake.Wait(mu, [&]() TRAINYARD_REQUIRES(mu) { return stop || expire_at || !trash.empty(); });
      if (stop) return;
      if (std::optional<TimePoint> now = std::exchange(expire_at, std::nullopt)) {
        lock.Unlock();
        Expire(*now);
        lock.Lock();
        continue;
      }
      std::string dir = std::move(trash.front());
      trash.pop_front();
      lock.Unlock();
      // A replica's files: no link of theirs is followed.
      if (Status removed = RemoveTree(dir); !removed.ok()) {
        log->Warning("trainyard: cannot remove {}: {}", dir, removed.message());
      }
      lock.Lock();
    }
  }
};

ArtifactDirs::ArtifactDirs(const std::string& root, const Clock* clock, Duration retention,
                           Logger* log)
    : root_(Absolute(root)), clock_(clock), log_(log), retention_(retention) {
  if (root_.empty()) return;
  emptier_ = std::make_shared<Emptier>();
  emptier_->root = root_;
  emptier_->retention = retention_;
  emptier_->log = log_;
  std::thread([emptier = emptier_] { emptier->Run(); }).detach();
}

ArtifactDirs::~ArtifactDirs() {
  if (emptier_ == nullptr) return;
  {
    MutexLock lock(emptier_->mu);
    emptier_->stop = true;
  }
  emptier_->wake.NotifyAll();
}

void ArtifactDirs::OnDeleted(const api::Json& object) {
  if (root_.empty() || !OwnsFolder(api::StringAt(object, "kind"))) return;
  std::string folder = FolderName(object);
  std::string ns = api::StringAt(object, {"metadata", "namespace"});
  if (!api::IsArtifactsFolderName(folder) || !api::IsArtifactsFolderName(ns)) return;
  doomed_.emplace_back(std::move(ns), std::move(folder));
}

void ArtifactDirs::Committed() {
  if (!root_.empty() && retention_ > Duration::zero()) RequestExpiry();
  // After the request: a deletion noted now stays due, whatever the read
  // the request makes finds.
  for (const auto& [ns, folder] : doomed_) OwnerGone(api::ArtifactsDirOf(root_, ns, folder));
  doomed_.clear();
}

void ArtifactDirs::RequestExpiry() {
  TimePoint now = clock_->Now();
  {
    MutexLock lock(emptier_->mu);
    // Read again when the next deletion read or noted is due, and every
    // few minutes all the same (records of an earlier run, a clock set
    // back).
    if (now < next_expiry_ && now < emptier_->next_due) return;
    next_expiry_ = now + std::chrono::minutes(5);
    emptier_->next_due = TimePoint::max();
    emptier_->expire_at = now;
  }
  emptier_->wake.NotifyOne();
}

void ArtifactDirs::OwnerGone(const std::string& folder) {
  std::optional<ArtifactOwner> owner = ReadArtifactOwner(folder);
  if (!owner || retention_ <= Duration::zero()) {
    emptier_->Trash(folder);
    return;
  }
  if (owner->deleted) return;
  owner->deleted = clock_->Now();
  {
    MutexLock lock(emptier_->mu);
    emptier_->next_due = std::min(emptier_->next_due, DueOf(*owner->deleted, retention_));
  }
  Status noted = WriteArtifactOwner(folder, *owner);
  if (!noted.ok()) log_->Warning("trainyard: {}", noted.message());
}

void ArtifactDirs::Sweep(const store::ObjectStore& store) {
  std::error_code ec;
  if (root_.empty() || !fs::is_directory(root_, ec)) return;
  std::set<std::pair<std::string, std::string>> live;  // namespace, folder
  for (const std::string& kind : OwnerKinds()) {
    Status scanned = store.Scan(kind, "", [&](const api::Json& object) {
      live.emplace(api::StringAt(object, {"metadata", "namespace"}), FolderName(object));
    });
    if (!scanned.ok()) {
      log_->Warning("trainyard: artifacts are not swept: {}", scanned.message());
      return;  // nothing is known gone
    }
  }
  std::vector<std::string> gone, trashed;
  for (fs::directory_iterator ns(root_, ec), end; !ec && ns != end; ns.increment(ec)) {
    std::error_code inner;
    std::string name = ns->path().filename().string();
    if (name == kTrash) {
      for (fs::directory_iterator t(ns->path(), inner); !inner && t != end; t.increment(inner)) {
        trashed.push_back(t->path().string());
      }
      continue;
    }
    if (!ns->is_directory(inner)) continue;
    for (fs::directory_iterator dir(ns->path(), inner); !inner && dir != end;
         dir.increment(inner)) {
      std::error_code kind;
      if (!dir->is_directory(kind)) continue;  // a record (.owner), beside its folder
      if (!live.contains({name, dir->path().filename().string()})) {
        gone.push_back(dir->path().string());
      }
    }
  }
  for (const std::string& dir : gone) OwnerGone(dir);
  for (std::string& dir : trashed) emptier_->Queue(std::move(dir));
}

}  // namespace trainyard::engine
