// OptimizationJob against upstream's CRD (Trainer v2.3): what it accepts is
// accepted with its defaults, what its schema and CEL rules refuse is
// refused with kube-apiserver's words, and every field its schema has is
// one trainyard reads (../shared's copy of the CRD; skipped without it).
#include "api/optimization_job.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/defaults.h"
#include "api/tests/test_util.h"
#include "api/validation.h"
#include "api/yaml.h"

namespace trainyard::api {
namespace {

using ::testing::HasSubstr;

// The KEP's example, in the CRD's spelling.
constexpr const char* kSample = R"(apiVersion: trainer.kubeflow.org/v1alpha1
kind: OptimizationJob
metadata: {name: random-tuning-mvp, namespace: default}
spec:
  objectives:
  - metric: loss
  parameters:
  - name: learning_rate
    searchSpace: {logUniform: {min: "1e-5", max: "1e-1"}}
  - name: batch_size
    searchSpace: {categorical: {choices: ["16", "32", "64"]}}
  - name: epochs
    searchSpace: {uniform: {min: "1", max: "5", type: Int}}
  numTrials: 10
  parallelTrials: 2
  trainJobTemplate:
    spec:
      runtimeRef: {name: torch-distributed}
      trainer:
        image: docker.io/kubeflow/pytorch-mnist:latest
        command: [python, train.py]
)";

OptimizationJobFields Defaulted(const std::string& yaml) {
  Object object = testing::DecodeOk(yaml);
  SetDefaults(object);
  return OptimizationJobFieldsOf(std::get<CoreObject>(object));
}

std::vector<std::string> Errors(const std::string& yaml) {
  CheckedObject checked = DecodeAndValidate(testing::ParseOne(yaml));
  return testing::ErrorStrings(checked.result.errors);
}

// kSample with `from` replaced by `to` (once).
std::string Changed(const std::string& from, const std::string& to) {
  std::string text = kSample;
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

TEST(OptimizationJobTest, TheKepsExampleIsAcceptedWithTheCrdsDefaults) {
  EXPECT_EQ(Errors(kSample), std::vector<std::string>{});
  OptimizationJobFields job = Defaulted(kSample);
  EXPECT_EQ(job.spec.objectives[0].direction, "Minimize");
  ASSERT_TRUE(job.spec.search_algorithm);
  EXPECT_TRUE(job.spec.search_algorithm->random) << "random search by default";
  EXPECT_EQ(job.spec.parameters[0].search_space.log_uniform->type, "Float");
  EXPECT_EQ(job.spec.train_job_template.spec.runtime_ref.kind, "ClusterTrainingRuntime");
  OptimizationJobFields bare = Defaulted(Changed("  numTrials: 10\n  parallelTrials: 2\n", ""));
  EXPECT_EQ(bare.spec.num_trials, 1);
  EXPECT_EQ(bare.spec.parallel_trials, 1);
}

TEST(OptimizationJobTest, WhatTheCrdRefusesIsRefusedWithItsMessage) {
  struct Case {
    std::string from, to, error;
  };
  std::vector<Case> cases = {
      {"- metric: loss", "- metric: loss\n    direction: minimize",
       R"(spec.objectives[0].direction: Unsupported value: "minimize": supported values: "Maximize", "Minimize")"},
      {"{logUniform: {min: \"1e-5\", max: \"1e-1\"}}", "{logUniform: {min: \"0\", max: \"1\"}}",
       R"(spec.parameters[0].searchSpace.logUniform: Invalid value: "object": min must be strictly greater than 0)"},
      {"{uniform: {min: \"1\", max: \"5\", type: Int}}", "{uniform: {min: \"5\", max: \"1\"}}",
       R"(spec.parameters[2].searchSpace.uniform: Invalid value: "object": min must be strictly less than max)"},
      {"{uniform: {min: \"1\", max: \"5\", type: Int}}", "{}",
       R"(spec.parameters[2].searchSpace: Invalid value: "object": exactly one of the fields in [uniform logUniform categorical] must be set)"},
      {"min: \"1e-5\"", "min: \"1e\"", "should match"},
      {"parallelTrials: 2", "parallelTrials: 20",
       R"(spec: Invalid value: "object": parallelTrials cannot exceed numTrials)"},
      {"numTrials: 10", "numTrials: 101",
       "spec.numTrials: Invalid value: 101: spec.numTrials in body should be less than or equal to "
       "100"},
      {"  trainJobTemplate:\n", "  searchAlgorithm: {grid: {}}\n  trainJobTemplate:\n",
       R"(spec: Invalid value: "object": Grid search requires all parameters to be Categorical; Uniform and LogUniform are not supported.)"},
      {"  trainJobTemplate:\n", "  searchAlgorithm: {random: {}, grid: {}}\n  trainJobTemplate:\n",
       R"(spec.searchAlgorithm: Invalid value: "object": exactly one of the fields in [random grid] must be set)"},
      {"  trainJobTemplate:\n    spec:", "  trainJobTemplate:\n    metadata: {name: x}\n    spec:",
       R"(spec.trainJobTemplate.metadata: Invalid value: "object": name and namespace cannot be set in a template.)"},
      {"runtimeRef: {name: torch-distributed}", "runtimeRef: {}",
       "spec.trainJobTemplate.spec.runtimeRef.name: Required value"},
  };
  for (const Case& c : cases) {
    EXPECT_THAT(Errors(Changed(c.from, c.to)), ::testing::Contains(HasSubstr(c.error))) << c.to;
  }
}

TEST(OptimizationJobTest, TrainyardsOwnRulesSayWhyAndHow) {
  EXPECT_THAT(Errors(Changed("{uniform: {min: \"1\", max: \"5\", type: Int}}",
                             "{uniform: {min: \"1.5\", max: \"5\", type: Int}}")),
              ::testing::Contains(HasSubstr("must be whole numbers")));
  EXPECT_THAT(Errors(Changed("- name: epochs", "- name: learning-rate")),
              ::testing::Contains(HasSubstr(
                  "gives the same environment variable, KUBEFLOW_TRAINER_OPT_LEARNING_RATE")));
  EXPECT_THAT(Errors(Changed("  trainJobTemplate:\n",
                             "  searchAlgorithm: {trainyard: {algorithmName: nope}}\n"
                             "  trainJobTemplate:\n")),
              ::testing::Contains(HasSubstr("spec.searchAlgorithm.trainyard.algorithmName: "
                                            "Unsupported value: \"nope\"")));
  EXPECT_THAT(Errors(Changed("  trainJobTemplate:\n",
                             "  searchAlgorithm:\n    trainyard:\n      algorithmName: tpe\n"
                             "      algorithmSettings: [{name: gamma, value: \"2\"}]\n"
                             "  trainJobTemplate:\n")),
              ::testing::Contains(HasSubstr("gamma")));
  EXPECT_EQ(Errors(Changed("  trainJobTemplate:\n",
                           "  searchAlgorithm: {trainyard: {algorithmName: multivariate-tpe}}\n"
                           "  trainJobTemplate:\n")),
            std::vector<std::string>{});
  // Several objectives: trainyard's extension, up to three.
  EXPECT_EQ(Errors(Changed("- metric: loss", "- metric: loss\n  - metric: params")),
            std::vector<std::string>{});
  EXPECT_THAT(Errors(Changed("- metric: loss", "- metric: loss\n  - metric: loss")),
              ::testing::Contains(HasSubstr("Duplicate value")));
  EXPECT_EQ(OptimizationEnvName("batch.size-2"), "KUBEFLOW_TRAINER_OPT_BATCH_SIZE_2");
  EXPECT_EQ(Errors(Changed("  trainJobTemplate:\n",
                           "  earlyStopping: {algorithmName: medianstop}\n  trainJobTemplate:\n")),
            std::vector<std::string>{});
  EXPECT_THAT(
      Errors(Changed("  trainJobTemplate:\n",
                     "  earlyStopping: {algorithmName: hyperband}\n  trainJobTemplate:\n")),
      ::testing::Contains(HasSubstr("spec.earlyStopping.algorithmName: Unsupported value")));
}

TEST(OptimizationJobTest, TheSpecNeverChanges) {
  Object old_object = testing::ValidObject(kSample);
  Object new_object = testing::ValidObject(Changed("numTrials: 10", "numTrials: 12"));
  EXPECT_THAT(testing::ErrorStrings(ValidateUpdate(old_object, new_object)),
              ::testing::ElementsAre(R"(spec: Invalid value: "object": OptimizationJobSpec is )"
                                     "immutable and cannot be updated after creation"));
  EXPECT_TRUE(ValidateUpdate(old_object, testing::ValidObject(kSample)).empty());
}

// An object with every property the schema has (one item per list), as
// the schema types it: what it holds is beside the point, only that each
// field is one trainyard knows.
Json Exemplar(const Json& schema) {
  std::string type = StringAt(schema, "type");
  if (schema.contains("enum")) return schema["enum"][0];
  if (schema.contains("x-kubernetes-int-or-string")) return "1";
  if (type == "object") {
    Json out = Json::object();
    for (const auto& [key, property] : ObjectAt(schema, "properties").items()) {
      out[key] = Exemplar(property);
    }
    return out;
  }
  if (type == "array") return Json::array({Exemplar(ObjectAt(schema, "items"))});
  if (type == "integer") return 1;
  if (type == "boolean") return false;
  if (type == "string") return "1";
  return Json::object();  // int-or-string, preserved fields: anything
}

TEST(OptimizationJobTest, EveryFieldOfUpstreamsCrdIsOneTrainyardReads) {
  std::optional<std::filesystem::path> dir = testing::ConformanceDir("trainer-v2");
  if (!dir) GTEST_SKIP() << "../shared/conformance/trainer-v2 is absent: the CRD not checked";
  std::filesystem::path file =
      *dir / "manifests/base/crds/trainer.kubeflow.org_optimizationjobs.yaml";
  Json crd = testing::ParseOne(testing::ReadFile(file));
  Json schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
  Json object = Exemplar(schema);
  object["apiVersion"] = "trainer.kubeflow.org/v1alpha1";
  object["kind"] = "OptimizationJob";
  object["metadata"] = {{"name", "every-field"}};
  DecodeResult decoded = DecodeObject(object);
  EXPECT_EQ(testing::ErrorStrings(decoded.errors), std::vector<std::string>{});
}

}  // namespace
}  // namespace trainyard::api
