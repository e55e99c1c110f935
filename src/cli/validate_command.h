// `trainyard validate FILE...`: decode, default and validate manifests,
// print every error of every object, exit 1 when any is invalid.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace trainyard::cli {

struct ValidateOptions {
  std::vector<std::string> paths;  // files, directories (searched for *.yaml, *.yml, *.json), "-"
  bool show_defaults = false;      // print each valid object, defaulted
  std::string output = "yaml";     // yaml | json, for show_defaults
  bool quiet = false;              // print only problems
};

// Returns the process exit code: 0 when every object is valid, 1 otherwise.
// Per-object results go to `out`, or to `err` when `out` carries the
// defaulted objects.
int RunValidate(const ValidateOptions& options, std::ostream& out, std::ostream& err);

}  // namespace trainyard::cli
