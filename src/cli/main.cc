// The trainyard command line: one binary, one verb per subcommand, each
// added by its own file (cli/command_line.h).
#include <sys/stat.h>

#include <CLI/CLI.hpp>

#include "cli/command_line.h"

namespace {
constexpr const char* kVersion = TRAINYARD_VERSION;
}

int main(int argc, char** argv) {
  // What trainyard writes (state, logs, kubeconfig, volumes) is its owner's
  // alone unless it says otherwise, as etcd's data directory is: a state
  // database holds every namespace's objects and trials' push tokens.
  // Replicas start with a container's 022 again (runtime/local/process.h).
  umask(077);
  CLI::App app{"trainyard: runs Kubeflow training jobs and Katib experiments, standalone"};
  app.require_subcommand(1);
  app.set_version_flag("--version", kVersion);
  int exit_code = 0;
  namespace cli = trainyard::cli;
  cli::AddValidateCommand(app, exit_code);
  cli::AddRunCommand(app, exit_code);
  cli::AddExecCommand(app, exit_code);
  cli::AddInitializeCommand(app, exit_code);
  cli::AddImagesCommand(app, exit_code);
  cli::AddServerCommand(app, exit_code);
  cli::AddOperatorCommand(app, exit_code);
  cli::AddManifestsCommand(app, exit_code);
  cli::AddClientCommands(app, exit_code);
  try {
    // The parsed command's callback runs it and sets the exit code.
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; a usage error exits 2, as is conventional.
    return app.exit(e) == 0 ? 0 : 2;
  }
  return exit_code;
}
