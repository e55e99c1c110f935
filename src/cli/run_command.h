// `trainyard run FILE...`: validates every object, runs the jobs on this
// machine through an embedded control plane, streams their logs and status,
// and exits 0 only when every job succeeded (1 otherwise, 130 when
// interrupted). Ctrl-C stops every replica; nothing outlives the command.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "cli/image_flags.h"
#include "common/status.h"
#include "runtime/local/credentials.h"

namespace trainyard::cli {

struct RunOptions {
  std::vector<std::string> paths;
  bool quiet = false;  // no status line, no summary beyond failures
  // all | master | none; empty: all for jobs, none when an experiment runs
  // (its trials' logs would interleave; they stay in the state directory).
  std::string logs;
  std::string home;        // default: $TRAINYARD_HOME, else ~/.local/state/trainyard
  std::string nodes_file;  // set: a simulated inventory of Node objects
  // Whom replicas run as (runtime::MakeRunAsPolicy): empty is nobody when
  // trainyard is root, else trainyard's own user.
  std::string run_as;
  // Try a GPU manifest on a machine without GPUs: its GPU requests are
  // dropped and CUDA_VISIBLE_DEVICES set empty (cli/without_gpus.h).
  bool without_gpus = false;
  // Replicas run without sandboxes: volumes through path rewriting.
  bool no_sandbox = false;
  // Where replicas' files are: "host", the machine's (a container's
  // command runs the machine's programs), or "image", their images' roots
  // (pulled first; docs/images.md).
  std::string root = "image";
  ImageFlags images;  // image GC and CDI (cli/image_flags.h)
  // Print the dashboard's URL (the run's own API on loopback), and keep
  // serving it after the run ends, until Ctrl-C.
  bool ui = false;
  // The tasks a pod may have at once (node/cgroups.h); 0: the machine's
  // default, -1: no bound.
  int64_t pod_max_pids = 0;
  // Set: pods reach the API server this kubeconfig names as their service
  // account would (cli/api_access.h).
  std::string kubeconfig;
};

// --pod-max-pids as given (0: the machine's default; -1: none), as the node
// agent takes it (0 or less: none).
int64_t PodMaxPids(int64_t flag);

int RunRun(const RunOptions& options);

// What a container's image would otherwise provide: trainyard passes its
// own values of these on (PATH, HOME, LANG, PYTHONPATH, ...), and nothing
// else from its environment.
std::vector<std::pair<std::string, std::string>> BaseEnv();

// $TRAINYARD_HOME, else $XDG_STATE_HOME/trainyard, else ~/.local/state/trainyard.
std::string DefaultHome();

// OK when every user `policy` runs replicas as may pass through `home` and
// the folders above it, to the folders trainyard gives them under it; else
// the reason and the fix.
Status CheckHomeReachable(const std::string& home, const runtime::RunAsPolicy& policy);

// Makes `dirs` passable (0711), never listable, when `policy` runs replicas
// as users other than trainyard's.
void MakePassable(const std::vector<std::string>& dirs, const runtime::RunAsPolicy& policy);

// trainyard-shim, installed beside the trainyard binary `self`; empty,
// with a warning that says what `without` costs, when it is missing.
std::string ShimBeside(const std::string& self, const std::string& without);

// Where replicas' sandboxes come from: bwrap's path, or "" and why not.
struct SandboxChoice {
  std::string bwrap;
  std::string why_none;
};
SandboxChoice ChooseSandbox(bool no_sandbox);

}  // namespace trainyard::cli
