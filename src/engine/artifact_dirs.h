// Jobs' and trials' output folders (api::ArtifactsDirOf) outlive their
// owners for a while (`retention`): an owner's deletion, once durable
// (never before: a deletion a failed commit takes back changes nothing),
// is noted in the folder's record (ArtifactOwner), and the folder is
// removed `retention` later; at start, a folder whose owner is gone (a
// crash between the two) is noted so. Removing is a thread's of its own:
// a folder is renamed into <root>/.trash at once, and emptied there, and
// the records are read for what is due there too, so that neither a large
// tree nor many records hold the control loop.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "api/json.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/status.h"
#include "store/object_store.h"

namespace trainyard::engine {

class ArtifactDirs {
 public:
  // `root` is made absolute (replicas and sandboxes see it from anywhere).
  // `retention` zero: a folder goes with its owner.
  ArtifactDirs(const std::string& root, const Clock* clock, Duration retention,
               Logger* log = &StderrLog());
  // A removal under way goes on (its thread lets go of nothing it needs);
  // what is left in the trash goes at the next start.
  ~ArtifactDirs();
  ArtifactDirs(const ArtifactDirs&) = delete;
  ArtifactDirs& operator=(const ArtifactDirs&) = delete;
  const std::string& root() const { return root_; }
  Duration retention() const { return retention_; }

  // Notes a deleted object: a job's, a trial's or a client's MLflow run's
  // folder is dealt with at the next Committed().
  void OnDeleted(const api::Json& object);
  // The writes so far are durable: their owners' folders are noted as
  // deleted (or go, without retention; or without a record, a client's
  // MLflow run's). Every few minutes, folders kept their time go.
  void Committed();
  // They were taken back: their folders stay.
  void Abandon() { doomed_.clear(); }
  // Notes every folder whose owner `store` does not hold as deleted, and
  // empties the trash. Best effort: what cannot be removed is said, and
  // left.
  void Sweep(const store::ObjectStore& store);

  struct Emptier;  // what the removing thread shares (artifact_dirs.cc)

 private:
  // The owner of `folder` is gone: noted, or the folder goes.
  void OwnerGone(const std::string& folder);
  // Has the removing thread trash the folders kept their time, when some
  // may be due.
  void RequestExpiry();

  std::string root_;
  const Clock* clock_;
  Logger* log_;
  Duration retention_;
  TimePoint next_expiry_ = TimePoint::min();
  std::vector<std::pair<std::string, std::string>> doomed_;  // namespace, folder
  std::shared_ptr<Emptier> emptier_;
};

}  // namespace trainyard::engine
