#include "api/tests/test_util.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "api/validation.h"
#include "api/yaml.h"

namespace trainyard::api::testing {

std::filesystem::path SourceDir() {
  if (const char* dir = std::getenv("TRAINYARD_SOURCE_DIR")) return dir;
  return std::filesystem::current_path();
}

std::optional<std::filesystem::path> ConformanceDir(const std::string& name) {
  std::filesystem::path dir = SourceDir() / ".." / "shared" / "conformance" / name;
  if (!std::filesystem::is_directory(dir)) return std::nullopt;
  return dir;
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

Json ParseOne(const std::string& yaml) {
  Result<std::vector<SourceDocument>> docs = ParseManifests(yaml, "test.yaml");
  EXPECT_TRUE(docs.ok()) << docs.status().ToString();
  if (!docs.ok() || docs->size() != 1) {
    ADD_FAILURE() << "expected one document";
    return Json();
  }
  return (*docs)[0].value;
}

Object DecodeOk(const std::string& yaml) {
  DecodeResult decoded = DecodeObject(ParseOne(yaml));
  EXPECT_TRUE(decoded.errors.empty()) << ::testing::PrintToString(ErrorStrings(decoded.errors));
  if (!decoded.object) {
    ADD_FAILURE() << "not decoded";
    return TrainingJob{};
  }
  return *decoded.object;
}

Object ValidObject(const std::string& yaml) {
  CheckedObject checked = DecodeAndValidate(ParseOne(yaml));
  for (const FieldError& e : checked.result.errors) ADD_FAILURE() << e.ToString();
  if (!checked.object) {
    ADD_FAILURE() << "not decoded";
    return TrainingJob{};
  }
  return *checked.object;
}

TrainingJob ValidTrainingJob(const std::string& yaml) {
  Object object = ValidObject(yaml);
  auto* job = std::get_if<TrainingJob>(&object);
  if (job == nullptr) {
    ADD_FAILURE() << "not a kubeflow.org/v1 job";
    return TrainingJob{};
  }
  return *job;
}

std::vector<std::string> ErrorStrings(const FieldErrors& errors) {
  std::vector<std::string> out;
  for (const FieldError& e : errors) out.push_back(e.ToString());
  return out;
}

bool SameManifest(const Json& a, const Json& b, std::string* where) {
  auto fail = [&](const std::string& what) {
    if (where != nullptr) *where = what;
    return false;
  };
  if (a.is_number() && b.is_string()) return a.dump() == b.get<std::string>() || fail(a.dump());
  if (a.is_string() && b.is_number()) return SameManifest(b, a, where);
  if (a.type() != b.type()) return fail(a.dump() + " vs " + b.dump());
  if (a.is_object()) {
    if (a.size() != b.size()) return fail(a.dump() + " vs " + b.dump());
    for (const auto& [key, value] : a.items()) {
      auto it = b.find(key);
      if (it == b.end()) return fail("missing " + key);
      if (!SameManifest(value, *it, where)) {
        if (where != nullptr) *where = key + "." + *where;
        return false;
      }
    }
    return true;
  }
  if (a.is_array()) {
    if (a.size() != b.size()) return fail("list sizes differ");
    for (size_t i = 0; i < a.size(); ++i) {
      if (!SameManifest(a[i], b[i], where)) return false;
    }
    return true;
  }
  return a == b || fail(a.dump() + " vs " + b.dump());
}

}  // namespace trainyard::api::testing
