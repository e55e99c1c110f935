// Conformance against upstream's own data in ../shared/conformance:
//  - every kubeflow.org/v1 example job is accepted, defaults as upstream
//    defaults it, and survives a read-write-read round trip unchanged;
//  - every field of the v1 CRD schemas is either modelled or kept verbatim.
// Skips, with a message, when ../shared is absent.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>

#include "api/defaults.h"
#include "api/tests/test_util.h"
#include "api/validation.h"
#include "api/yaml.h"

namespace trainyard::api {
namespace {

namespace fs = std::filesystem;

constexpr const char* kTrainingOperator = "training-operator-v1.9.4";

struct Example {
  std::string file;  // relative to examples/
  int line;
  Json document;
};

std::vector<Example> JobExamples(const fs::path& root) {
  std::vector<Example> out;
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(root / "examples")) {
    if (entry.path().extension() == ".yaml") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& path : files) {
    std::string rel = fs::relative(path, root / "examples").string();
    Result<std::vector<SourceDocument>> docs = ParseManifests(testing::ReadFile(path), rel);
    EXPECT_TRUE(docs.ok()) << docs.status().ToString();
    if (!docs.ok()) continue;
    for (SourceDocument& doc : *docs) {
      std::string kind = doc.value.value("kind", "");
      if (JobKindFromName(kind) || kind == "Job") out.push_back({rel, doc.line, doc.value});
    }
  }
  return out;
}

#define REQUIRE_SHARED(dir)                                                 \
  std::optional<fs::path> dir = testing::ConformanceDir(kTrainingOperator); \
  if (!dir)                                                                 \
  GTEST_SKIP() << "../shared/conformance/" << kTrainingOperator             \
               << " is absent: upstream conformance not checked"

TEST(ConformanceTest, EveryUpstreamExampleIsAccepted) {
  REQUIRE_SHARED(root);
  std::vector<Example> examples = JobExamples(*root);
  EXPECT_GE(examples.size(), 25u);
  for (const Example& ex : examples) {
    CheckedObject checked = DecodeAndValidate(ex.document);
    EXPECT_TRUE(checked.result.ok())
        << ex.file << ":" << ex.line << ": "
        << ::testing::PrintToString(testing::ErrorStrings(checked.result.errors));
  }
}

TEST(ConformanceTest, EveryUpstreamExampleRoundTripsUnchanged) {
  REQUIRE_SHARED(root);
  for (const Example& ex : JobExamples(*root)) {
    DecodeResult first = DecodeObject(ex.document);
    ASSERT_TRUE(first.object) << ex.file;
    Json written = EncodeObject(*first.object);
    std::string where;
    EXPECT_TRUE(testing::SameManifest(ex.document, written, &where)) << ex.file << ": " << where;
    Result<std::vector<SourceDocument>> reread = ParseManifests(ToYaml(written), ex.file);
    ASSERT_TRUE(reread.ok()) << reread.status().ToString();
    DecodeResult second = DecodeObject((*reread)[0].value);
    ASSERT_TRUE(second.object) << ex.file;
    EXPECT_EQ(*second.object, *first.object) << ex.file;
  }
}

// The leaves defaulting adds or changes, "+ path = value" / "~ path: old -> new",
// so that the expected defaults of each example can be read line by line.
void DiffLeaves(const Json& before, const Json& after, const std::string& path,
                std::vector<std::string>& out) {
  if (before.is_object() && after.is_object()) {
    for (const auto& [key, value] : after.items()) {
      std::string child = path.empty() ? key : path + "." + key;
      auto it = before.find(key);
      if (it == before.end()) {
        out.push_back("+ " + child + " = " + value.dump());
      } else {
        DiffLeaves(*it, value, child, out);
      }
    }
    for (const auto& [key, value] : before.items()) {
      if (!after.contains(key)) out.push_back("- " + (path.empty() ? key : path + "." + key));
    }
    return;
  }
  if (before.is_array() && after.is_array()) {
    for (size_t i = 0; i < after.size(); ++i) {
      std::string child = path + "[" + std::to_string(i) + "]";
      if (i < before.size()) {
        DiffLeaves(before[i], after[i], child, out);
      } else {
        out.push_back("+ " + child + " = " + after[i].dump());
      }
    }
    return;
  }
  if (!testing::SameManifest(before, after)) {
    out.push_back("~ " + path + ": " + before.dump() + " -> " + after.dump());
  }
}

std::string DefaultsReport(const std::vector<Example>& examples) {
  std::string report;
  for (const Example& ex : examples) {
    DecodeResult decoded = DecodeObject(ex.document);
    SetDefaults(*decoded.object);
    std::vector<std::string> lines;
    DiffLeaves(ex.document, EncodeObject(*decoded.object), "", lines);
    report += ex.file + ":" + std::to_string(ex.line) + "\n";
    for (const std::string& line : lines) report += "  " + line + "\n";
  }
  return report;
}

// tests/data/conformance_defaults.txt lists, per upstream example, exactly
// what upstream's defaulting adds; each line was checked against the rules
// in shared/reference/kubeflow-training.md section 2. Regenerate with
// TRAINYARD_UPDATE_GOLDEN=1 and review the diff line by line.
TEST(ConformanceTest, DefaultsMatchUpstream) {
  REQUIRE_SHARED(root);
  std::string actual = DefaultsReport(JobExamples(*root));
  fs::path golden = testing::SourceDir() / "tests" / "data" / "conformance_defaults.txt";
  if (std::getenv("TRAINYARD_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(golden) << actual;
  }
  EXPECT_EQ(actual, testing::ReadFile(golden));
}

// Independent of the golden file: defaulting only adds, and what it adds
// follows the per-kind table.
TEST(ConformanceTest, DefaultsOnlyAddAndFollowTheKindTable) {
  REQUIRE_SHARED(root);
  for (const Example& ex : JobExamples(*root)) {
    DecodeResult decoded = DecodeObject(ex.document);
    SetDefaults(*decoded.object);
    std::vector<std::string> lines;
    DiffLeaves(ex.document, EncodeObject(*decoded.object), "", lines);
    for (const std::string& line : lines) {
      EXPECT_EQ(line[0], '+') << ex.file << ": defaulting changed a user's value: " << line;
    }
    auto* job = std::get_if<TrainingJob>(&*decoded.object);
    if (job == nullptr) continue;
    const KindInfo& info = job->info();
    EXPECT_TRUE(job->spec.run_policy->clean_pod_policy || job->spec.mpi_clean_pod_policy);
    for (const auto& [type, spec] : job->spec.replica_specs) {
      EXPECT_TRUE(spec.replicas.has_value()) << ex.file << " " << type;
      EXPECT_FALSE(spec.restart_policy.empty()) << ex.file << " " << type;
      if (!info.defaults_port) continue;
      const auto& containers = spec.template_.spec.containers;
      auto it = std::find_if(containers.begin(), containers.end(),
                             [&](const Container& c) { return c.name == info.default_container; });
      ASSERT_NE(it, containers.end()) << ex.file;
      EXPECT_TRUE(std::any_of(it->ports.begin(), it->ports.end(),
                              [&](const ContainerPort& p) { return p.name == info.port_name; }))
          << ex.file << " " << type;
    }
  }
}

// Builds a value for every property of an OpenAPI schema, so that decoding
// it exercises every field the CRD defines.
Json SampleFromSchema(const Json& schema, int depth) {
  if (depth > 40) return nullptr;
  if (schema.value("x-kubernetes-int-or-string", false)) return "1";
  if (schema.contains("enum")) return schema["enum"][0];
  std::string type = schema.value("type", "");
  if (type == "object" || schema.contains("properties")) {
    Json out = Json::object();
    if (schema.contains("properties")) {
      for (const auto& [key, sub] : schema["properties"].items()) {
        out[key] = SampleFromSchema(sub, depth + 1);
      }
    } else if (schema.contains("additionalProperties") &&
               schema["additionalProperties"].is_object()) {
      out["key"] = SampleFromSchema(schema["additionalProperties"], depth + 1);
    }
    return out;
  }
  if (type == "array") return Json::array({SampleFromSchema(schema["items"], depth + 1)});
  if (type == "integer") return 1;
  if (type == "number") return 1.5;
  if (type == "boolean") return true;
  return "x";
}

TEST(ConformanceTest, EveryCrdFieldIsModelledOrKeptVerbatim) {
  REQUIRE_SHARED(root);
  fs::path crds = *root / "manifests" / "base" / "crds";
  int checked = 0;
  for (const auto& entry : fs::directory_iterator(crds)) {
    Result<std::vector<SourceDocument>> docs =
        ParseManifests(testing::ReadFile(entry.path()), entry.path().filename().string());
    ASSERT_TRUE(docs.ok()) << docs.status().ToString();
    const Json& crd = (*docs)[0].value;
    std::string kind = crd["spec"]["names"]["kind"];
    for (const Json& version : crd["spec"]["versions"]) {
      Json doc = SampleFromSchema(version["schema"]["openAPIV3Schema"], 0);
      doc["apiVersion"] = "kubeflow.org/" + version["name"].get<std::string>();
      doc["kind"] = kind;
      DecodeResult decoded = DecodeObject(doc);
      EXPECT_TRUE(decoded.errors.empty())
          << kind << ": " << ::testing::PrintToString(testing::ErrorStrings(decoded.errors));
      ASSERT_TRUE(decoded.object) << kind;
      std::string where;
      EXPECT_TRUE(testing::SameManifest(doc, EncodeObject(*decoded.object), &where))
          << kind << ": lost or changed " << where;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 6);
}

}  // namespace
}  // namespace trainyard::api
