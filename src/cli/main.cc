// The trainyard command line: one binary, one verb per subcommand.
#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/exec_command.h"
#include "cli/run_command.h"
#include "cli/server_command.h"
#include "cli/validate_command.h"

namespace {
constexpr const char* kVersion = "0.1.0";
}

int main(int argc, char** argv) {
  CLI::App app{"trainyard: runs Kubeflow training jobs and Katib experiments, standalone"};
  app.require_subcommand(1);
  app.set_version_flag("--version", kVersion);

  trainyard::cli::ValidateOptions validate;
  CLI::App* validate_cmd = app.add_subcommand(
      "validate", "Check manifests: every error of every object, with its field path");
  validate_cmd->add_option("files", validate.paths, "Manifest files or directories; - for stdin")
      ->required();
  validate_cmd->add_flag("--show-defaults", validate.show_defaults,
                         "Print each valid object with upstream's defaults applied");
  validate_cmd->add_option("-o,--output", validate.output, "Format for --show-defaults")
      ->check(CLI::IsMember({"yaml", "json"}));
  validate_cmd->add_flag("-q,--quiet", validate.quiet, "Print only problems");

  trainyard::cli::RunOptions run;
  CLI::App* run_cmd =
      app.add_subcommand("run", "Run jobs on this machine, in the foreground, until they finish");
  run_cmd->add_option("files", run.paths, "Manifest files or directories; - for stdin")->required();
  run_cmd->add_flag("-q,--quiet", run.quiet, "No status line; print only what failed");
  run_cmd->add_option("--logs", run.logs, "Which replicas' logs to print")
      ->check(CLI::IsMember({"all", "master", "none"}));
  run_cmd->add_option("--home", run.home,
                      "Where runs keep their state and logs (default: $TRAINYARD_HOME, else "
                      "~/.local/state/trainyard)");

  trainyard::cli::ExecOptions exec;
  CLI::App* exec_cmd = app.add_subcommand(
      "exec",
      "Run a command inside a running replica: its env, working directory and process group");
  exec_cmd->add_option("pod", exec.pod, "The replica's pod name, e.g. mnist-worker-0")->required();
  exec_cmd->add_option("command", exec.command, "The command and its arguments, after --")
      ->required();
  exec_cmd->add_option("-n,--namespace", exec.namespace_, "The pod's namespace")
      ->capture_default_str();
  exec_cmd->add_option("--state", exec.state,
                       "The run's state directory (default: the newest run under --home)");
  exec_cmd->add_option("--home", exec.home, "As for run");

  trainyard::cli::ServerOptions server;
  CLI::App* server_cmd = app.add_subcommand(
      "server", "Keep the control plane up behind a Kubernetes-style API (kubectl works with it)");
  server_cmd
      ->add_option("--address", server.address,
                   "Address to listen on (loopback unless told otherwise)")
      ->capture_default_str();
  server_cmd->add_option("--port", server.port, "Port to listen on; 0 for any free one")
      ->capture_default_str();
  server_cmd->add_option("--home", server.home, "As for run: the server keeps <home>/server/");
  server_cmd->add_option("--tls-cert", server.tls_cert, "Serve HTTPS with this certificate (PEM)");
  server_cmd->add_option("--tls-key", server.tls_key, "The certificate's private key (PEM)");
  server_cmd->add_option("--token-file", server.token_file,
                         "Require bearer tokens: lines of TOKEN USER NAMESPACES (or *)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; a usage error exits 2, as is conventional.
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (validate_cmd->parsed()) return trainyard::cli::RunValidate(validate, std::cout, std::cerr);
  if (run_cmd->parsed()) return trainyard::cli::RunRun(run);
  if (exec_cmd->parsed()) return trainyard::cli::RunExec(exec);
  if (server_cmd->parsed()) return trainyard::cli::RunServer(server);
  return 0;
}
