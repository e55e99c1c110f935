// Reading manifests for the verbs that take files: paths (directories are
// searched for *.yaml, *.yml, *.json; "-" is stdin), parsing, and decoding,
// defaulting and validating every object in them.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "api/validation.h"

namespace trainyard::cli {

struct LoadedObject {
  std::string where;  // "file.yaml:12"
  api::Json document;
  api::CheckedObject checked;
  // "PyTorchJob ns/name", or the document's kind and name if undecodable.
  std::string Describe() const;
};

struct LoadedManifests {
  std::vector<LoadedObject> objects;
  int unreadable = 0;  // files that could not be read or parsed (reported)
  // Files that held no object at all (e.g. only comments).
  std::vector<std::string> empty_files;
};

// Reports files that cannot be read or parsed to `err` as "error: ...".
LoadedManifests LoadManifests(const std::vector<std::string>& paths, std::ostream& err);

// "<where>: <name>: invalid, N errors" and each error, indented.
void PrintErrors(const LoadedObject& object, std::ostream& out);

}  // namespace trainyard::cli
