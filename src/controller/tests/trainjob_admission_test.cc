// Admission of a TrainJob against its runtime, as upstream's webhook does
// it: a missing runtime, what the runtime cannot do, a deprecated runtime,
// and an update whose runtime has gone.
#include "controller/trainjob_admission.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/validation.h"
#include "api/yaml.h"
#include "store/sqlite_store.h"

namespace trainyard::controller {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr const char* kDeprecatedRuntime = R"(
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata: {name: torch, namespace: team-a, labels: {trainer.kubeflow.org/support: deprecated}}
spec:
  mlPolicy: {numNodes: 1, torch: {}}
  template:
    spec:
      replicatedJobs:
      - name: node
        template:
          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
          spec: {template: {spec: {containers: [{name: node, image: torch}]}}}
)";

class TrainJobAdmissionTest : public ::testing::Test {
 protected:
  void SetUp() override { store_ = std::move(*store::SqliteStore::Open({.clock = &clock_})); }

  static api::Object Decode(const std::string& yaml) {
    auto docs = api::ParseManifests(yaml, "x.yaml");
    EXPECT_TRUE(docs.ok());
    api::CheckedObject checked = api::DecodeAndValidate((*docs)[0].value);
    EXPECT_TRUE(checked.object.has_value());
    return *checked.object;
  }
  static api::Object Job(const std::string& ref, const std::string& trainer = "{numNodes: 2}") {
    return Decode(
        "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\n"
        "metadata: {name: tj, namespace: team-a}\nspec:\n  runtimeRef: " +
        ref + "\n  trainer: " + trainer + "\n");
  }
  Admission Admit(const api::Object& job, bool update = false) {
    Result<Admission> admitted = AdmitTrainJob(*store_, job, update);
    EXPECT_TRUE(admitted.ok()) << admitted.status().ToString();
    return admitted.ok() ? *admitted : Admission{};
  }
  std::vector<std::string> Errors(const Admission& a) {
    std::vector<std::string> out;
    for (const FieldError& e : a.errors) out.push_back(e.ToString());
    return out;
  }

  FakeClock clock_;
  std::unique_ptr<store::SqliteStore> store_;
};

TEST_F(TrainJobAdmissionTest, AMissingRuntimeMustBeCreatedFirstAsUpstreamSays) {
  EXPECT_THAT(Errors(Admit(Job("{name: torch-distributed}"))),
              ElementsAre("spec.runtimeRef: Invalid value: clustertrainingruntimes.trainer."
                          "kubeflow.org \"torch-distributed\" not found: specified "
                          "clusterTrainingRuntime must be created before the TrainJob is created"));
  EXPECT_THAT(Errors(Admit(Job("{name: torch, kind: TrainingRuntime}"))),
              ElementsAre(HasSubstr("trainingruntimes.trainer.kubeflow.org \"torch\" not found: "
                                    "specified trainingRuntime must be created")));
  EXPECT_THAT(Admit(Job("{name: torch, kind: TrainingRuntime}"), /*update=*/true).errors, IsEmpty())
      << "an update is not refused for a runtime deleted after the job was created";
}

TEST_F(TrainJobAdmissionTest, WhatTheRuntimeCannotDoIsRefusedAndADeprecatedOneWarned) {
  ASSERT_TRUE(store_->Create(api::EncodeObject(Decode(kDeprecatedRuntime))).ok());
  Admission ok = Admit(Job("{name: torch, kind: TrainingRuntime}"));
  EXPECT_THAT(ok.errors, IsEmpty());
  EXPECT_THAT(ok.warnings, ElementsAre(HasSubstr("Referenced TrainingRuntime \"torch\" is "
                                                 "deprecated and will be removed")));
  Admission reserved = Admit(Job("{name: torch, kind: TrainingRuntime}",
                                 "{numNodes: 2, env: [{name: PET_NNODES, value: '9'}]}"));
  EXPECT_THAT(Errors(reserved), ElementsAre(HasSubstr("spec.trainer.env: Invalid value: "
                                                      "must not have reserved envs")));
  EXPECT_THAT(Errors(Admit(Decode("apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\n"
                                  "metadata: {name: tj, namespace: team-a}\nspec:\n"
                                  "  runtimeRef: {name: torch, kind: TrainingRuntime}\n"
                                  "  initializer: {dataset: {storageUri: 'hf://x'}}\n"))),
              ElementsAre(HasSubstr("must have dataset-initializer job when trainJob is "
                                    "configured with input datasetConfig")));
}

}  // namespace
}  // namespace trainyard::controller
