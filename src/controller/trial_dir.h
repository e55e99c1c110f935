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

#include <optional>
#include <string>

#include "api/katib.h"
#include "common/status.h"

namespace trainyard::controller {

struct TrialDir {
  std::string mount_path;   // the setting's value: where the trial sees it
  std::string host_path;    // the trial's directory on this machine
  std::string parent_path;  // the parent's, when the trial has one
};

// nullopt when the experiment asks for no trial directories.
std::optional<TrialDir> TrialDirOf(const api::Experiment& experiment, const api::Trial& trial,
                                   const std::string& root);

// Makes the trial's directory: a copy of the parent's, or empty. Safe to
// run again: an existing directory is kept, and a copy is made beside it and
// renamed into place, so a crash never leaves half a copy under the trial's
// name. `parent_missing` is set when the parent's directory is not there
// (the trial then starts empty).
Status PrepareTrialDir(const TrialDir& dir, bool* parent_missing);

// Every trial directory of an experiment.
std::string ExperimentTrialDirs(const std::string& root, const std::string& namespace_,
                                const std::string& experiment);

}  // namespace trainyard::controller
