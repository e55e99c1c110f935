// A trial's own directory, for an experiment whose algorithm settings name
// suggestion_trial_dir (pbt's checkpoints): what Katib keeps on the
// suggestion's volume as <experiment>/<trial> and mounts in the trial's
// primary container at that path. Here it is a directory on this machine,
// `<root>/<namespace>/<experiment>/<trial>`, mounted as a hostPath volume.
// A trial with a parent (kPbtParentLabel) starts with a copy of the
// parent's directory; the others start empty. The directories are kept
// while the experiment lives, so the last generation's checkpoints are
// there when it ends, and removed with it.
#pragma once

#include <atomic>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "api/katib.h"
#include "common/mutex.h"
#include "common/status.h"

namespace trainyard::controller {

struct TrialDir {
  std::string mount_path;   // the setting's value: where the trial sees it
  std::string host_path;    // the trial's directory on this machine
  std::string parent_path;  // the parent's, when the trial has one
};

// nullopt when the experiment asks for no trial directories. A parent label
// that is not a trial's name (one path component) is no parent: the label
// is the trial's to set, and must not lead out of the experiment's folder.
std::optional<TrialDir> TrialDirOf(const api::Experiment& experiment, const api::Trial& trial,
                                   const std::string& root);

// Makes the trial's directory: a copy of the parent's, or empty. Safe to
// run again: an existing directory is kept, and a copy is made beside it,
// every file and folder synced to disk, then renamed into place, so neither
// a crash nor a power cut leaves half a copy under the trial's name.
// `parent_missing` is set when the parent's directory is not there (the
// trial then starts empty). `stop` turning true abandons a copy half-way
// (what was copied is removed by the next attempt).
Status PrepareTrialDir(const TrialDir& dir, bool* parent_missing,
                       const std::atomic<bool>* stop = nullptr);

// Makes trial directories on a thread of its own: copying a large
// checkpoint takes as long as the disk needs, and the control loop must not
// wait for it. The loop asks again until the directory is ready.
class TrialDirMaker {
 public:
  struct Readiness {
    bool ready = false;
    bool parent_missing = false;  // ready, but started empty (PrepareTrialDir)
  };

  TrialDirMaker();
  ~TrialDirMaker();  // abandons a copy under way; the next start makes it again

  // Ready once the directory has been made (by this maker, or before it
  // started). Otherwise the first call queues it and later ones report it
  // under way; a failed attempt is returned once, and the next call queues
  // it again.
  Result<Readiness> Ensure(const TrialDir& dir);

 private:
  void Work();

  Mutex mu_;
  CondVar wake_;
  std::deque<TrialDir> queue_ TRAINYARD_GUARDED_BY(mu_);
  // Host paths queued or being made.
  std::set<std::string> under_way_ TRAINYARD_GUARDED_BY(mu_);
  // Made empty for want of a parent.
  std::set<std::string> parent_missing_ TRAINYARD_GUARDED_BY(mu_);
  std::map<std::string, Status> failed_ TRAINYARD_GUARDED_BY(mu_);
  std::atomic<bool> stop_ = false;
  std::thread worker_;
};

// Every trial directory of an experiment.
std::string ExperimentTrialDirs(const std::string& root, const std::string& namespace_,
                                const std::string& experiment);

}  // namespace trainyard::controller
