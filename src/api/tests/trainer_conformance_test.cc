// Conformance against Kubeflow Trainer v2's own examples and default
// runtimes in ../shared/conformance/trainer-v2: every TrainJob,
// TrainingRuntime and ClusterTrainingRuntime is accepted and survives a
// read-write-read round trip. Skips, with a message, when ../shared is
// absent.
#include <gtest/gtest.h>

#include <algorithm>

#include "api/tests/test_util.h"
#include "api/validation.h"
#include "api/yaml.h"

namespace trainyard::api {
namespace {

namespace fs = std::filesystem;

constexpr const char* kTrainer = "trainer-v2";

struct Manifest {
  std::string file;  // relative to the conformance folder
  Json document;
};

// Every document of every YAML file but kustomize's own.
std::vector<Manifest> Manifests(const fs::path& root) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    const fs::path& path = entry.path();
    if (path.extension() != ".yaml" || path.filename() == "kustomization.yaml") continue;
    if (path.string().find("/crds/") != std::string::npos) continue;
    files.push_back(path);
  }
  std::sort(files.begin(), files.end());
  std::vector<Manifest> out;
  for (const fs::path& path : files) {
    std::string rel = fs::relative(path, root).string();
    Result<std::vector<SourceDocument>> docs = ParseManifests(testing::ReadFile(path), rel);
    EXPECT_TRUE(docs.ok()) << docs.status().ToString();
    if (!docs.ok()) continue;
    for (SourceDocument& doc : *docs) out.push_back({rel, doc.value});
  }
  return out;
}

#define REQUIRE_TRAINER(dir)                                       \
  std::optional<fs::path> dir = testing::ConformanceDir(kTrainer); \
  if (!dir)                                                        \
  GTEST_SKIP() << "../shared/conformance/" << kTrainer << " is absent: Trainer v2 not checked"

TEST(TrainerConformanceTest, EveryExampleAndRuntimeIsAccepted) {
  REQUIRE_TRAINER(root);
  std::vector<Manifest> manifests = Manifests(*root);
  std::map<std::string, int> kinds;
  for (const Manifest& m : manifests) {
    CheckedObject checked = DecodeAndValidate(m.document);
    ASSERT_TRUE(checked.object) << m.file;
    ++kinds[std::string(KindName(*checked.object))];
    EXPECT_EQ(testing::ErrorStrings(checked.result.errors), std::vector<std::string>{}) << m.file;
  }
  // The five YAML examples, the flux ones, and every default runtime.
  EXPECT_GE(kinds["TrainJob"], 7);
  EXPECT_GE(kinds["ClusterTrainingRuntime"], 9);
  EXPECT_GE(kinds["TrainingRuntime"], 1);
}

TEST(TrainerConformanceTest, EveryManifestRoundTripsUnchanged) {
  REQUIRE_TRAINER(root);
  for (const Manifest& m : Manifests(*root)) {
    DecodeResult first = DecodeObject(m.document);
    ASSERT_TRUE(first.object) << m.file;
    Json written = EncodeObject(*first.object);
    std::string where;
    EXPECT_TRUE(testing::SameManifest(m.document, written, &where)) << m.file << ": " << where;
    DecodeResult second = DecodeObject(written);
    ASSERT_TRUE(second.object) << m.file;
    EXPECT_EQ(*second.object, *first.object) << m.file;
  }
}

}  // namespace
}  // namespace trainyard::api
