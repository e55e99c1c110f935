// Helpers shared by the api tests.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "api/json.h"
#include "api/object.h"

namespace trainyard::api::testing {

// The repository root (tests run from it; TRAINYARD_SOURCE_DIR overrides).
std::filesystem::path SourceDir();

// ../shared/conformance/<name>, or nullopt when ../shared is absent.
std::optional<std::filesystem::path> ConformanceDir(const std::string& name);

std::string ReadFile(const std::filesystem::path& path);

// Parses exactly one document from YAML text; fails the test otherwise.
Json ParseOne(const std::string& yaml);

// Decodes, fails the test on decode errors.
Object DecodeOk(const std::string& yaml);

// Decodes, defaults and validates one object; fails the test when invalid.
Object ValidObject(const std::string& yaml);
TrainingJob ValidTrainingJob(const std::string& yaml);

std::vector<std::string> ErrorStrings(const FieldErrors& errors);

// Manifest-level equality: key order ignored, and a quantity written as a
// bare number equal to the string Kubernetes writes back ("cpu: 4" vs "4").
bool SameManifest(const Json& a, const Json& b, std::string* where = nullptr);

}  // namespace trainyard::api::testing
