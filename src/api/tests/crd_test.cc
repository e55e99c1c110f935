// The CRDs `trainyard manifests crds` prints, generated from the object
// model: structural (every node typed, as apiextensions requires), small
// enough for a plain `kubectl apply -f` (its last-applied annotation), and,
// where ../shared has upstream's data, accepting every upstream example
// without pruning a field and agreeing with upstream's CRDs on every field.
#include "api/crd.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "api/tests/test_util.h"
#include "api/yaml.h"

namespace trainyard::api {
namespace {

namespace fs = std::filesystem;

bool Preserves(const Json& schema) {
  return schema.value("x-kubernetes-preserve-unknown-fields", false);
}

// Where `schema` is not structural: a node with no type that neither
// preserves unknown fields nor is int-or-string.
void Unstructural(const Json& schema, const std::string& path, std::vector<std::string>& out) {
  bool typed = schema.contains("type") || Preserves(schema) ||
               schema.value("x-kubernetes-int-or-string", false);
  if (!typed) out.push_back(path);
  if (schema.contains("properties")) {
    for (const auto& [key, sub] : schema["properties"].items())
      Unstructural(sub, path + "." + key, out);
  }
  if (schema.contains("items")) Unstructural(schema["items"], path + "[]", out);
  if (schema.contains("additionalProperties")) {
    Unstructural(schema["additionalProperties"], path + "{}", out);
  }
}

// What the API server would refuse or prune in `value`.
void Violations(const Json& schema, const Json& value, const std::string& path,
                std::vector<std::string>& out) {
  if (schema.value("x-kubernetes-int-or-string", false)) {
    if (!value.is_number_integer() && !value.is_string())
      out.push_back(path + ": not int-or-string");
    return;
  }
  std::string type = schema.value("type", "");
  if (type.empty()) return;  // a raw field: anything
  bool ok = type == "string"    ? value.is_string()
            : type == "integer" ? value.is_number_integer()
            : type == "number"  ? value.is_number()
            : type == "boolean" ? value.is_boolean()
            : type == "array"   ? value.is_array()
                                : value.is_object();
  if (!ok) {
    out.push_back(path + ": not " + type);
    return;
  }
  if (type == "array") {
    for (size_t i = 0; i < value.size(); ++i) {
      Violations(schema["items"], value[i], path + "[" + std::to_string(i) + "]", out);
    }
  }
  if (type != "object") return;
  for (const auto& [key, sub] : value.items()) {
    if (schema.contains("properties") && schema["properties"].contains(key)) {
      Violations(schema["properties"][key], sub, path + "." + key, out);
    } else if (schema.contains("additionalProperties")) {
      Violations(schema["additionalProperties"], sub, path + "." + key, out);
    } else if (!Preserves(schema) && path != ".metadata") {  // the server's own
      out.push_back(path + "." + key + ": pruned");
    }
  }
}

// Fields of upstream's schema ours lacks or types otherwise; a field under
// a node of ours that preserves unknown fields is kept verbatim, which
// agrees.
void Disagreements(const Json& upstream, const Json& ours, const std::string& path,
                   std::vector<std::string>& out) {
  auto type_of = [](const Json& s) {
    if (s.value("x-kubernetes-int-or-string", false)) return std::string("int-or-string");
    return s.value("type", std::string("any"));
  };
  std::string want = type_of(upstream), have = type_of(ours);
  if (have == "any") return;  // a raw field holds anything
  if (want != have) {
    out.push_back(path + ": upstream " + want + ", ours " + have);
    return;
  }
  auto walk = [&](const char* key, const std::string& suffix) {
    if (!upstream.contains(key)) return;
    if (!ours.contains(key)) {
      out.push_back(path + suffix + ": missing");
      return;
    }
    Disagreements(upstream[key], ours[key], path + suffix, out);
  };
  walk("items", "[]");
  walk("additionalProperties", "{}");
  if (!upstream.contains("properties")) return;
  for (const auto& [key, sub] : upstream["properties"].items()) {
    if (ours.contains("properties") && ours["properties"].contains(key)) {
      Disagreements(sub, ours["properties"][key], path + "." + key, out);
    } else if (!Preserves(ours) && path != ".metadata") {
      out.push_back(path + "." + key + ": missing");
    }
  }
}

TEST(CrdTest, EveryJobCrdIsStructuralAndSmallEnoughForAPlainApply) {
  for (const KindInfo& info : AllKinds()) {
    Json crd = JobCustomResourceDefinition(info.kind);
    EXPECT_EQ(crd["metadata"]["name"], std::string(info.plural) + ".kubeflow.org");
    const Json& version = crd["spec"]["versions"][0];
    std::vector<std::string> bad;
    Unstructural(version["schema"]["openAPIV3Schema"], "", bad);
    EXPECT_TRUE(bad.empty()) << info.name << ": untyped at " << ::testing::PrintToString(bad);
    // kubectl apply stores the whole object in one annotation, and the API
    // server refuses annotations over 256 KiB in all.
    EXPECT_LT(crd.dump().size(), 128u * 1024) << info.name;
    EXPECT_TRUE(version["subresources"].contains("status"));
  }
  Json pytorch = JobCustomResourceDefinition(JobKind::kPyTorchJob);
  EXPECT_EQ(pytorch["spec"]["versions"][0]["subresources"]["scale"]["specReplicasPath"],
            ".spec.pytorchReplicaSpecs.Worker.replicas");
  Json schema = JobOpenApiSchema(JobKind::kPyTorchJob);
  EXPECT_EQ(schema["properties"]["spec"]["required"], Json::array({"pytorchReplicaSpecs"}));
  // A quantity is int-or-string; a pod spec keeps the fields it does not model.
  const Json& pod = schema["properties"]["spec"]["properties"]["pytorchReplicaSpecs"]
                          ["additionalProperties"]["properties"]["template"]["properties"]["spec"];
  EXPECT_TRUE(Preserves(pod));
  EXPECT_TRUE(pod["properties"]["containers"]["items"]["properties"]["resources"]["properties"]
                 ["limits"]["additionalProperties"]["x-kubernetes-int-or-string"]
                     .get<bool>());
}

TEST(CrdTest, AgreesWithUpstreamsCrdsAndTakesEveryUpstreamExampleWhole) {
  std::optional<fs::path> root = testing::ConformanceDir("training-operator-v1.9.4");
  if (!root) GTEST_SKIP() << "../shared/conformance is absent: upstream's CRDs not compared";
  int compared = 0;
  for (const auto& entry : fs::directory_iterator(*root / "manifests" / "base" / "crds")) {
    Result<std::vector<SourceDocument>> docs =
        ParseManifests(testing::ReadFile(entry.path()), entry.path().filename().string());
    ASSERT_TRUE(docs.ok()) << docs.status().ToString();
    const Json& upstream = (*docs)[0].value;
    std::optional<JobKind> kind =
        JobKindFromName(upstream["spec"]["names"]["kind"].get<std::string>());
    ASSERT_TRUE(kind.has_value());
    std::vector<std::string> differ;
    Disagreements(upstream["spec"]["versions"][0]["schema"]["openAPIV3Schema"],
                  JobOpenApiSchema(*kind), "", differ);
    EXPECT_TRUE(differ.empty()) << InfoFor(*kind).name << ": " << ::testing::PrintToString(differ);
    ++compared;
  }
  EXPECT_EQ(compared, 6);
  int examples = 0;
  for (const auto& entry : fs::recursive_directory_iterator(*root / "examples")) {
    if (entry.path().extension() != ".yaml") continue;
    Result<std::vector<SourceDocument>> docs =
        ParseManifests(testing::ReadFile(entry.path()), entry.path().string());
    ASSERT_TRUE(docs.ok());
    for (const SourceDocument& doc : *docs) {
      std::optional<JobKind> kind = JobKindFromName(doc.value.value("kind", ""));
      if (!kind) continue;
      std::vector<std::string> bad;
      Violations(JobOpenApiSchema(*kind), doc.value, "", bad);
      EXPECT_TRUE(bad.empty()) << entry.path() << ": " << ::testing::PrintToString(bad);
      ++examples;
    }
  }
  EXPECT_GE(examples, 25);
}

// Katib's CRDs as upstream's Katib declares them: the same names, scope,
// version, printer columns, subresources and schema.
TEST(CrdTest, KatibsCrdsAreUpstreams) {
  std::optional<fs::path> root = testing::ConformanceDir("katib-v0.19");
  if (!root) GTEST_SKIP() << "../shared/conformance is absent: Katib's CRDs not compared";
  int compared = 0;
  for (const char* file : {"experiment.yaml", "trial.yaml", "suggestion.yaml"}) {
    fs::path path = *root / "manifests" / "v1beta1" / "components" / "crd" / file;
    Result<std::vector<SourceDocument>> docs = ParseManifests(testing::ReadFile(path), file);
    ASSERT_TRUE(docs.ok()) << docs.status().ToString();
    const Json& upstream = (*docs)[0].value;
    Json ours = KatibCustomResourceDefinition(upstream["spec"]["names"]["kind"]);
    EXPECT_EQ(ours["metadata"]["name"], upstream["metadata"]["name"]) << file;
    for (const char* field : {"group", "scope"}) {
      EXPECT_EQ(ours["spec"][field], upstream["spec"][field]) << file;
    }
    for (const auto& [key, value] : upstream["spec"]["names"].items()) {
      EXPECT_EQ(ours["spec"]["names"][key], value) << file << ": names." << key;
    }
    const Json& theirs = upstream["spec"]["versions"][0];
    const Json& mine = ours["spec"]["versions"][0];
    for (const char* field :
         {"name", "served", "storage", "additionalPrinterColumns", "subresources", "schema"}) {
      EXPECT_EQ(mine[field], theirs[field]) << file << ": " << field;
    }
    ++compared;
  }
  EXPECT_EQ(compared, 3);
}

}  // namespace
}  // namespace trainyard::api
