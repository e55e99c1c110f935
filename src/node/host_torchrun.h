// Adapts a container's `torchrun` command to a host whose torchrun is
// torch 1.x under Python 3.11 or later, as Debian 12 packages it.
//
// Locally a replica runs the host's programs, not its image's. Kubeflow's
// images carry torch 2, and manifests are written for it; Debian 12's
// torchrun (torch 1.13) differs in two ways that break them unchanged:
//  - it knows its flags only in their underscore spelling (`--no_python`,
//    `--nproc_per_node`); torch 2 takes both, and manifests increasingly use
//    the hyphenated one (upstream's Trainer examples say `--no-python`);
//  - under Python 3.11 it cannot parse its own default for `--redirects`
//    and `--tee` (the enum it iterates lost its zero member), so every run
//    that leaves them unset fails before training.
// The adaptation renames the flags of torchrun itself (never the training
// script's) and sets PET_REDIRECTS / PET_TEE to "9:1", which it can parse
// and which keeps the default's effect for up to nine local processes (a
// tenth's stdout is tee'd through a log file). A manifest that sets either
// itself is left alone. Hosts with torch 2 are never touched.

#pragma once

#include <string>
#include <vector>

#include "node/container_env.h"

namespace trainyard::node {

// True when the torchrun script at `path` declares torch 1.x and runs under
// Python 3.11 or later, read from its first lines (Debian's entry script
// names both).
bool IsTorch1UnderPython311(const std::string& path);

// Where torchrun's own options end in `argv` (a torchrun command line,
// argv[0] the program): the index of the training script, or argv.size().
size_t OptionsEnd(const std::vector<std::string>& argv);

// Renames torch 2 spellings of torchrun's own options in `argv` to torch
// 1's. Returns what was renamed, as "--no-python as --no_python".
std::vector<std::string> RenameTorch2Flags(std::vector<std::string>& argv);

// Adapts `argv` and `env` when argv[0] is torchrun (as found on env's PATH)
// of torch 1.x under Python 3.11; when an argument only mentions torchrun
// (a shell script that runs it), sets the streams' variables alone.
// Returns what was changed, for the pod's event; empty when nothing was.
std::string AdaptTorchrunToHost(std::vector<std::string>& argv, EnvList& env);

}  // namespace trainyard::node
