#include "cli/control_plane.h"

#include <filesystem>
#include <iostream>

#include "cli/run_command.h"

namespace trainyard::cli {

Result<std::unique_ptr<engine::Engine>> BuildControlPlane(
    ControlPlaneSettings settings, const std::function<void(engine::EngineOptions&)>& customize) {
  std::error_code ec;
  std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  SandboxChoice sandbox = ChooseSandbox(settings.no_sandbox);
  engine::EngineOptions options{.state_dir = settings.state_dir,
                                // Shared by `run` and `server`: a claim is the same data whichever
                                // runs its pods, beyond any one run.
                                .claims_dir = settings.home + "/claims",
                                .working_dir = std::filesystem::current_path(ec).string(),
                                .base_env = BaseEnv(),
                                .exec_program = self,
                                // Each replica under a shim of its own, so that everything it
                                // starts (setsid and double-forked daemons too) ends with it.
                                .shim = ShimBeside(self, settings.without_shim),
                                .bwrap = sandbox.bwrap,
                                .no_sandbox = sandbox.why_none,
                                .run_as = settings.run_as,
                                .pod_max_pids = PodMaxPids(settings.pod_max_pids),
                                .nodes = std::move(settings.nodes)};
  // Shared by every run and the server: an image is pulled once per machine.
  if (settings.root != "host") options.images_dir = settings.home + "/images";
  options.host_root_allowed = settings.root != "image-only";
  options.image_gc = settings.image_gc;
  if (!settings.cdi_spec_dirs.empty()) options.cdi_spec_dirs = settings.cdi_spec_dirs;
  customize(options);
  ASSIGN_OR_RETURN(std::unique_ptr<engine::Engine> engine,
                   engine::Engine::Create(std::move(options)));
  MakePassable(settings.passable, settings.run_as);
  if (!engine->machine().gpu_note.empty()) {
    std::cerr << "warning: " << engine->machine().gpu_note << '\n';
  }
  return engine;
}

}  // namespace trainyard::cli
