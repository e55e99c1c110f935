// Manifest text <-> JSON documents.
//
// YAML (multi-document) and JSON are both read; a file whose first
// non-blank character is `{` or `[` is read as JSON, anything else as YAML.
// Plain YAML scalars are typed by the YAML 1.2 core schema, so `yes` and
// `on` stay strings (they are booleans in go-yaml's YAML 1.1, a classic
// Kubernetes trap). Duplicate keys are an error, as in kubectl.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "api/json.h"
#include "common/field_path.h"
#include "common/status.h"

namespace trainyard::api {

struct SourceDocument {
  Json value;
  int line = 1;  // 1-based line where the document (or List item) begins
};

// Parses every document in `text`. Empty documents are skipped; `kind: List`
// (and `*List`) documents are expanded into their items. Errors read
// "<file>:<line>:<column>: <what>".
Result<std::vector<SourceDocument>> ParseManifests(std::string_view text, std::string_view file);

// One JSON value, refused when it nests deeper than the codec's limit (128
// levels, as for every manifest) so that no recursive walk after it (copy,
// compare, dump, decode) can run out of stack. Errors read "<what>:<line>:
// <column>: <problem>". For bodies that are not manifests: JSON patches,
// pushed metrics, stored rows.
Result<Json> ParseJsonValue(std::string_view text, std::string_view what);

// Block-style YAML, with strings quoted wherever a plain scalar would read
// back as another type.
std::string ToYaml(const Json& value);

}  // namespace trainyard::api
