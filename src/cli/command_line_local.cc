// The commands that run on this machine: validate, run, exec, initialize,
// images.
#include <iostream>
#include <memory>

#include "cli/command_line.h"
#include "cli/exec_command.h"
#include "cli/image_flags.h"
#include "cli/images_command.h"
#include "cli/initialize_command.h"
#include "cli/run_command.h"
#include "cli/validate_command.h"

namespace trainyard::cli {

void AddImageFlags(CLI::App& command, ImageFlags& flags) {
  command
      .add_option("--image-gc-high-threshold", flags.high_percent,
                  "Percent of the image store's disk used above which images no pod uses are "
                  "removed, least recently used first (the kubelet's; 100: never)")
      ->capture_default_str();
  command
      .add_option("--image-gc-low-threshold", flags.low_percent,
                  "Percent of that disk the removal brings usage down to")
      ->capture_default_str();
  command
      .add_option("--image-minimum-gc-age", flags.min_age,
                  "How long an image is kept after it was last pulled or used, however full the "
                  "disk")
      ->capture_default_str();
  command.add_option("--cdi-spec-dir", flags.cdi_spec_dirs,
                     "Where the Container Device Interface specs that put a pod's GPUs into its "
                     "image's root are (repeatable; default /etc/cdi and /var/run/cdi)");
}

void AddValidateCommand(CLI::App& app, int& exit_code) {
  auto validate = std::make_shared<ValidateOptions>();
  CLI::App* validate_cmd = app.add_subcommand(
      "validate", "Check manifests: every error of every object, with its field path");
  validate_cmd->add_option("files", validate->paths, "Manifest files or directories; - for stdin")
      ->required();
  validate_cmd->add_flag("--show-defaults", validate->show_defaults,
                         "Print each valid object with upstream's defaults applied");
  validate_cmd->add_option("-o,--output", validate->output, "Format for --show-defaults")
      ->check(CLI::IsMember({"yaml", "json"}));
  validate_cmd->add_flag("-q,--quiet", validate->quiet, "Print only problems");
  validate_cmd->callback(
      [validate, &exit_code] { exit_code = RunValidate(*validate, std::cout, std::cerr); });
}

void AddRunCommand(CLI::App& app, int& exit_code) {
  auto run = std::make_shared<RunOptions>();
  CLI::App* run_cmd = app.add_subcommand(
      "run",
      "Run jobs and tuning experiments on this machine, in the foreground, until they finish");
  run_cmd->add_option("files", run->paths, "Manifest files or directories; - for stdin")
      ->required();
  run_cmd->add_flag("-q,--quiet", run->quiet, "No status line; print only what failed");
  run_cmd
      ->add_option("--logs", run->logs,
                   "Which replicas' logs to print (default: all but trials', which an "
                   "experiment's table stands for; none with -q)")
      ->check(CLI::IsMember({"all", "master", "none"}));
  run_cmd->add_option("--home", run->home,
                      "Where runs keep their state and logs (default: $TRAINYARD_HOME, else "
                      "$XDG_STATE_HOME/trainyard, else /var/lib/trainyard for root and "
                      "~/.local/state/trainyard for anyone else)");
  run_cmd->add_option("--run-as", run->run_as,
                      "Run replicas as this user (default: nobody when trainyard is root, else "
                      "yourself; root only if named)");
  run_cmd->add_flag("--without-gpus", run->without_gpus,
                    "Run a GPU manifest on the CPU: drop its GPU requests and set "
                    "CUDA_VISIBLE_DEVICES empty (said once per job)");
  run_cmd->add_flag("--no-sandbox", run->no_sandbox, kNoSandboxHelp);
  run_cmd->add_option("--root", run->root, kRootHelp)
      ->check(CLI::IsMember({"image", "host", "image-only"}))
      ->capture_default_str();
  AddImageFlags(*run_cmd, run->images);
  run_cmd->add_flag("--ui", run->ui,
                    "Serve the dashboard for this run on loopback (its URL is printed), and keep "
                    "serving it after the run ends, until Ctrl-C");
  run_cmd->add_option("--pod-max-pids", run->pod_max_pids, kPodMaxPidsHelp)
      ->check(CLI::Range(int64_t{-1}, int64_t{1} << 22));
  run_cmd->add_option("--nodes", run->nodes_file,
                      "Place pods on the Node objects in this file instead of this machine "
                      "(they all still run here)");
  run_cmd->add_option("--kubeconfig", run->kubeconfig,
                      "Give pods the API server this kubeconfig names, as a service account "
                      "gives it on Kubernetes: KUBERNETES_SERVICE_HOST/PORT and its token and CA "
                      "at /var/run/secrets/kubernetes.io/serviceaccount (an operator's Deployment "
                      "runs against it)");
  run_cmd->callback([run, &exit_code] { exit_code = RunRun(*run); });
}

void AddExecCommand(CLI::App& app, int& exit_code) {
  auto exec = std::make_shared<ExecOptions>();
  CLI::App* exec_cmd = app.add_subcommand(
      "exec",
      "Run a command inside a running replica: its env, working directory and process group");
  exec_cmd->add_option("pod", exec->pod, "The replica's pod name, e.g. mnist-worker-0")->required();
  exec_cmd->add_option("command", exec->command, "The command and its arguments, after --")
      ->required();
  exec_cmd->add_option("-n,--namespace", exec->namespace_, "The pod's namespace")
      ->capture_default_str();
  exec_cmd->add_option("--state", exec->state,
                       "The run's state directory (default: the newest run under --home)");
  exec_cmd->add_option("--home", exec->home, "As for run");
  exec_cmd->add_option("-c,--container", exec->container,
                       "The pod's container to run it beside (default: its first)");
  exec_cmd->add_flag("--own-process-group", exec->own_process_group,
                     "Stay in the process group it was started in (the server's exec sessions)");
  exec_cmd->callback([exec, &exit_code] { exit_code = RunExec(*exec); });
}

void AddInitializeCommand(CLI::App& app, int& exit_code) {
  auto initialize = std::make_shared<InitializeOptions>();
  CLI::App* initialize_cmd = app.add_subcommand(
      "initialize",
      "Fetch a TrainJob's dataset or model (STORAGE_URI) into DEST, as Kubeflow's "
      "initializer images do; run by the TrainJob controller in an initializer step");
  initialize_cmd->add_option("what", initialize->what, "dataset or model")
      ->required()
      ->check(CLI::IsMember({"dataset", "model"}));
  initialize_cmd->add_option("destination", initialize->destination, "Where: /workspace/dataset")
      ->required();
  initialize_cmd->callback([initialize, &exit_code] { exit_code = RunInitialize(*initialize); });
}

void AddImagesCommand(CLI::App& app, int& exit_code) {
  auto images = std::make_shared<ImagesOptions>();
  CLI::App* images_cmd = app.add_subcommand(
      "images", "The container images this machine holds: list (the default), pull, rm, prune");
  images_cmd
      ->add_option("action", images->action,
                   "list; pull IMAGE...; rm IMAGE... (and what only they used); prune (blobs and "
                   "layers no image uses)")
      ->check(CLI::IsMember({"list", "pull", "rm", "prune"}));
  images_cmd->add_option("images", images->images, "Image references, as a pod's `image`");
  images_cmd->add_option("--home", images->home, "As for run");
  images_cmd->add_option("--authfile", images->auth_file,
                         "pull: credentials, a containers-auth.json(5) or ~/.docker/config.json "
                         "file (default: $REGISTRY_AUTH_FILE, then the host's usual places)");
  images_cmd->callback([images, &exit_code] {
    if ((images->action == "pull" || images->action == "rm") && images->images.empty()) {
      std::cerr << "error: images " << images->action << " needs an image reference\n";
      exit_code = 2;
      return;
    }
    exit_code = RunImages(*images, std::cout, std::cerr);
  });
}

}  // namespace trainyard::cli
