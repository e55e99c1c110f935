// What `trainyard run` and `trainyard server` both build: this machine's
// control plane (engine::Engine), its replicas under the trainyard-shim
// installed beside trainyard, in sandboxes where bubblewrap works, with the
// base environment, claims kept under the home for both, and the node
// inventory given. Each command adds what is its own (a server's detached
// replicas and retention, a run's kept logs) through `customize`.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "engine/engine.h"
#include "image/image_gc.h"
#include "runtime/local/credentials.h"
#include "scheduler/scheduler.h"

namespace trainyard::cli {

struct ControlPlaneSettings {
  std::string home;
  std::string state_dir;  // <home>/server, <home>/runs/<run>
  runtime::RunAsPolicy run_as;
  bool no_sandbox = false;  // --no-sandbox
  // --root: replicas in their images' roots (image, image-only) or on the
  // machine's files (host); with image, a pod may ask for the machine's
  // (api::kRootAnnotation), refused under image-only.
  std::string root = "image";
  image::ImageGcPolicy image_gc;           // when images no pod uses are removed
  std::vector<std::string> cdi_spec_dirs;  // --cdi-spec-dir; empty: the default
  int64_t pod_max_pids = 0;                // --pod-max-pids as given
  std::vector<scheduler::Node> nodes;      // a simulated inventory; empty: this machine
  // What is lost without the shim beside trainyard, said if it is missing.
  std::string without_shim;
  // The folders replicas' users must pass through to theirs.
  std::vector<std::string> passable;
};

// Made and ready: the folders in `settings.passable` passable for the
// replicas' users, a note printed when the machine's GPUs cannot be used.
Result<std::unique_ptr<engine::Engine>> BuildControlPlane(
    ControlPlaneSettings settings, const std::function<void(engine::EngineOptions&)>& customize);

}  // namespace trainyard::cli
