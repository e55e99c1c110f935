// Conformance against Katib v0.19's own examples in ../shared/conformance:
// every Experiment is accepted, or refused as Katib's webhook refuses it, or
// refused with a clear reason where it needs what trainyard does not do
// (neural architecture search, Argo or Tekton trials, a custom metrics
// collector); and every one survives a read-write-read round
// trip. Skips, with a message, when ../shared is absent.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "api/defaults.h"
#include "api/tests/test_util.h"
#include "api/validation.h"
#include "api/yaml.h"

namespace trainyard::api {
namespace {

namespace fs = std::filesystem;

constexpr const char* kKatib = "katib-v0.19";

struct KatibExample {
  std::string file;  // relative to examples/v1beta1
  Json document;
};

std::vector<KatibExample> Experiments(const fs::path& root) {
  fs::path base = root / "examples" / "v1beta1";
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(base)) {
    if (entry.path().extension() == ".yaml") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  std::vector<KatibExample> out;
  for (const fs::path& path : files) {
    std::string rel = fs::relative(path, base).string();
    Result<std::vector<SourceDocument>> docs = ParseManifests(testing::ReadFile(path), rel);
    EXPECT_TRUE(docs.ok()) << docs.status().ToString();
    if (!docs.ok()) continue;
    for (SourceDocument& doc : *docs) {
      if (doc.value.value("kind", "") == "Experiment") out.push_back({rel, doc.value});
    }
  }
  return out;
}

// The examples trainyard refuses, and a phrase its reason must contain.
const std::map<std::string, std::string>& Refused() {
  static const std::map<std::string, std::string> kRefused = {
      // maxFailedTrialCount 3 > maxTrialCount 2: Katib's own webhook refuses
      // its example with this message too.
      {"hp-tuning/simple-pbt.yaml", "should be less than or equal to spec.maxTrialCount"},
      {"nas/darts-cpu.yaml", "not supported by trainyard"},
      {"nas/darts-gpu.yaml", "not supported by trainyard"},
      {"nas/enas-cpu.yaml", "not supported by trainyard"},
      {"nas/enas-gpu.yaml", "not supported by trainyard"},
      {"argo/argo-workflow.yaml", "trainyard cannot run a Workflow as a trial"},
      {"tekton/pipeline-run.yaml", "trainyard cannot run a PipelineRun as a trial"},
      {"metrics-collector/custom-metrics-collector.yaml",
       "does not collect metrics of kind Custom"},
  };
  return kRefused;
}

#define REQUIRE_KATIB(dir)                                       \
  std::optional<fs::path> dir = testing::ConformanceDir(kKatib); \
  if (!dir)                                                      \
  GTEST_SKIP() << "../shared/conformance/" << kKatib << " is absent: Katib conformance not checked"

TEST(KatibConformanceTest, EveryExampleIsAcceptedOrRefusedWithAReason) {
  REQUIRE_KATIB(root);
  std::vector<KatibExample> examples = Experiments(*root);
  EXPECT_GE(examples.size(), 30u);
  for (const KatibExample& ex : examples) {
    std::vector<std::string> errors =
        testing::ErrorStrings(DecodeAndValidate(ex.document).result.errors);
    auto refused = Refused().find(ex.file);
    if (refused == Refused().end()) {
      EXPECT_TRUE(errors.empty()) << ex.file << ": " << ::testing::PrintToString(errors);
      continue;
    }
    bool has_reason = std::any_of(errors.begin(), errors.end(), [&](const std::string& e) {
      return e.find(refused->second) != std::string::npos;
    });
    EXPECT_TRUE(has_reason) << ex.file << " should be refused with \"" << refused->second
                            << "\", got " << ::testing::PrintToString(errors);
  }
}

// What simple-pbt.yaml asks of pbt is accepted once its counts agree.
TEST(KatibConformanceTest, ThePbtExampleWithItsCountsMendedIsAccepted) {
  REQUIRE_KATIB(root);
  for (KatibExample& ex : Experiments(*root)) {
    if (ex.file != "hp-tuning/simple-pbt.yaml") continue;
    ex.document["spec"]["maxFailedTrialCount"] = 2;
    EXPECT_EQ(testing::ErrorStrings(DecodeAndValidate(ex.document).result.errors),
              std::vector<std::string>{});
    return;
  }
  FAIL() << "hp-tuning/simple-pbt.yaml not found";
}

TEST(KatibConformanceTest, EveryExampleRoundTripsUnchanged) {
  REQUIRE_KATIB(root);
  for (const KatibExample& ex : Experiments(*root)) {
    DecodeResult first = DecodeObject(ex.document);
    ASSERT_TRUE(first.object) << ex.file;
    EXPECT_TRUE(first.errors.empty())
        << ex.file << ": " << ::testing::PrintToString(testing::ErrorStrings(first.errors));
    Json written = EncodeObject(*first.object);
    std::string where;
    EXPECT_TRUE(testing::SameManifest(ex.document, written, &where)) << ex.file << ": " << where;
    DecodeResult second = DecodeObject(written);
    ASSERT_TRUE(second.object) << ex.file;
    EXPECT_EQ(*second.object, *first.object) << ex.file;
  }
}

TEST(KatibConformanceTest, DefaultsAreUpstreams) {
  REQUIRE_KATIB(root);
  for (const KatibExample& ex : Experiments(*root)) {
    if (ex.file != "hp-tuning/random.yaml" &&
        ex.file != "metrics-collector/metrics-collection-strategy.yaml") {
      continue;
    }
    DecodeResult decoded = DecodeObject(ex.document);
    ASSERT_TRUE(decoded.object);
    SetDefaults(*decoded.object);
    const ExperimentSpec& spec = std::get<Experiment>(*decoded.object).spec;
    EXPECT_EQ(spec.resume_policy, "Never");
    EXPECT_EQ(spec.metrics_collector_spec->collector->kind, "StdOut");
    const TrialTemplate& t = *spec.trial_template;
    EXPECT_EQ(t.success_condition, R"(status.conditions.#(type=="Complete")#|#(status=="True")#)");
    EXPECT_EQ(t.failure_condition, R"(status.conditions.#(type=="Failed")#|#(status=="True")#)");
    EXPECT_EQ(spec.parameters[0].feasible_space->distribution, "uniform");
    if (ex.file == "hp-tuning/random.yaml") {
      ASSERT_EQ(spec.objective->metric_strategies.size(), 1u);
      EXPECT_EQ(spec.objective->metric_strategies[0].value, "min");
    } else {
      // Explicit strategies are kept: accuracy=max, loss=min.
      std::map<std::string, std::string> strategies;
      for (const MetricStrategy& s : spec.objective->metric_strategies) {
        strategies[s.name] = s.value;
      }
      EXPECT_EQ(strategies,
                (std::map<std::string, std::string>{{"accuracy", "max"}, {"loss", "min"}}));
    }
  }
}

}  // namespace
}  // namespace trainyard::api
