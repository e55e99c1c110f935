// Jobs' and trials' output folders (api::ArtifactsDirOf) go with their
// owners: removed once an owner's deletion is durable, never before (a
// deletion a failed commit takes back keeps its job's files), and, at
// start, any folder whose owner is gone (a crash between the two). A
// folder is renamed into <root>/.trash at once, and emptied there by a
// thread of its own: a large tree must not hold the control loop.
#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "api/json.h"
#include "common/status.h"
#include "store/object_store.h"

namespace trainyard::engine {

class ArtifactDirs {
 public:
  // `root` is made absolute (replicas and sandboxes see it from anywhere).
  explicit ArtifactDirs(const std::string& root);
  ~ArtifactDirs();  // what is left in the trash goes at the next start
  ArtifactDirs(const ArtifactDirs&) = delete;
  ArtifactDirs& operator=(const ArtifactDirs&) = delete;
  const std::string& root() const { return root_; }

  // Notes a deleted object: a job's, a trial's or a client's MLflow run's
  // folder is removed at the next Committed().
  void OnDeleted(const api::Json& object);
  // The writes so far are durable: their owners' folders go.
  void Committed();
  // They were taken back: their folders stay.
  void Abandon() { doomed_.clear(); }
  // Removes every folder whose owner `store` does not hold, and empties
  // the trash. Best effort: what cannot be removed is said, and left.
  void Sweep(const store::ObjectStore& store);

 private:
  void Trash(const std::string& dir);
  void Empty();

  std::string root_;
  std::vector<std::pair<std::string, std::string>> doomed_;  // namespace, folder
  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<std::string> trash_;  // guarded by mu_: folders in .trash to remove
  bool stop_ = false;              // guarded by mu_
  std::thread emptier_;
};

}  // namespace trainyard::engine
