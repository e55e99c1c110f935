#include "cli/validate_command.h"

#include <fmt/format.h>

#include <iostream>

#include "api/yaml.h"
#include "cli/manifests.h"
#include "engine/inventory.h"

namespace trainyard::cli {

int RunValidate(const ValidateOptions& options, std::ostream& out, std::ostream& err) {
  std::ostream& report = options.show_defaults ? err : out;
  LoadedManifests loaded = LoadManifests(options.paths, report);
  int valid = 0;
  int invalid = loaded.unreadable;
  if (!options.quiet) {
    for (const std::string& file : loaded.empty_files) report << file << ": no objects\n";
  }
  for (const LoadedObject& object : loaded.objects) {
    // Nodes are not applied: they describe a --nodes inventory.
    if (engine::IsNodeDocument(object.document)) {
      Result<scheduler::Node> node = engine::NodeFromDocument(object.document, object.where);
      if (node.ok()) {
        ++valid;
        if (!options.quiet) {
          report << fmt::format("{}: Node {}: valid (for --nodes)\n", object.where, node->name);
        }
      } else {
        ++invalid;
        report << node.status().message() << '\n';
      }
      continue;
    }
    const api::ValidationResult& result = object.checked.result;
    if (!result.ok()) {
      ++invalid;
      PrintErrors(object, report);
    } else {
      ++valid;
      if (!options.quiet || !result.warnings.empty()) {
        report << fmt::format("{}: {}: valid\n", object.where, object.Describe());
      }
    }
    for (const std::string& w : result.warnings) report << "  warning: " << w << '\n';
    if (options.show_defaults && result.ok()) {
      api::Json doc = api::EncodeObject(*object.checked.object);
      if (options.output == "json") {
        out << doc.dump(2) << '\n';
      } else {
        if (valid > 1) out << "---\n";
        out << api::ToYaml(doc);
      }
    }
  }
  if (!options.quiet || invalid > 0)
    report << fmt::format("{} valid, {} invalid\n", valid, invalid);
  return invalid == 0 ? 0 : 1;
}

}  // namespace trainyard::cli
