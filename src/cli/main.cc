// The trainyard command line: one binary, one verb per subcommand.
#include <CLI/CLI.hpp>
#include <iostream>

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

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; a usage error exits 2, as is conventional.
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (validate_cmd->parsed()) return trainyard::cli::RunValidate(validate, std::cout, std::cerr);
  return 0;
}
