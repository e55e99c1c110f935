// Trainer v2's kinds: defaults, and the rules with their upstream messages
// that the rule-by-rule corpus (tests/data/invalid) cannot show: updates.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/core_hooks.h"
#include "api/defaults.h"
#include "api/tests/test_util.h"
#include "api/trainer.h"
#include "api/validation.h"

namespace trainyard::api {
namespace {

using ::testing::ElementsAre;
using testing::ErrorStrings;
using ::testing::IsEmpty;
using testing::ParseOne;

constexpr const char* kTrainJob = R"(
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: tj, namespace: default}
spec:
  runtimeRef: {name: torch-distributed}
  trainer: {numNodes: 2, command: [torchrun, train.py]}
)";

Object Checked(const std::string& yaml) {
  CheckedObject checked = DecodeAndValidate(ParseOne(yaml));
  EXPECT_THAT(ErrorStrings(checked.result.errors), IsEmpty());
  return *checked.object;
}

TEST(TrainJobTest, DefaultsAreTheCrdsAndAreIdempotent) {
  Object job = Checked(kTrainJob);
  TrainJobSpec spec = std::get<TrainJob>(job).spec;
  EXPECT_EQ(spec.runtime_ref.api_group, "trainer.kubeflow.org");
  EXPECT_EQ(spec.runtime_ref.kind, "ClusterTrainingRuntime");
  EXPECT_EQ(spec.suspend, false);
  EXPECT_EQ(spec.managed_by, "trainer.kubeflow.org/trainjob-controller");
  Object again = job;
  SetDefaults(again);
  EXPECT_EQ(again, job);
}

TEST(TrainJobTest, TrainJobAndJobSetAreObjectsOfTheirOwnTypes) {
  DecodeResult job = DecodeObject(ParseOne(kTrainJob));
  ASSERT_TRUE(job.object && std::holds_alternative<TrainJob>(*job.object));
  EXPECT_EQ(KindName(*job.object), "TrainJob");
  EXPECT_EQ(ApiVersion(*job.object), "trainer.kubeflow.org/v1alpha1");
  EXPECT_EQ(std::get<TrainJob>(*job.object).spec.trainer->num_nodes, 2);
  // Encoded back with nothing added or lost (keys compared in any order).
  EXPECT_EQ(nlohmann::json::parse(EncodeObject(*job.object).dump()),
            nlohmann::json::parse(ParseOne(kTrainJob).dump()));

  DecodeResult jobset = DecodeObject(ParseOne(R"(
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: js}
spec: {replicatedJobs: [{name: w}]}
sepc: {}
)"));
  ASSERT_TRUE(jobset.object && std::holds_alternative<JobSet>(*jobset.object));
  EXPECT_EQ(ApiVersion(*jobset.object), "jobset.x-k8s.io/v1alpha2");
  EXPECT_EQ(std::get<JobSet>(*jobset.object).spec.replicated_jobs.at(0).name, "w");
  EXPECT_THAT(ErrorStrings(jobset.errors), ElementsAre(::testing::HasSubstr("sepc")));
}

TEST(TrainJobTest, WhatTheRuntimeWasGivenNeverChangesButSuspendDoes) {
  Object old_job = Checked(kTrainJob);
  Json changed = ParseOne(kTrainJob);
  changed["spec"]["trainer"]["numNodes"] = 3;
  changed["spec"]["runtimeRef"]["name"] = "other";
  EXPECT_THAT(ErrorStrings(ValidateUpdate(old_job, Checked(changed.dump()))),
              ElementsAre("spec.runtimeRef: Invalid value: field is immutable",
                          "spec.trainer: Invalid value: field is immutable"));
  Json suspended = ParseOne(kTrainJob);
  suspended["spec"]["suspend"] = true;
  EXPECT_THAT(ErrorStrings(ValidateUpdate(old_job, Checked(suspended.dump()))), IsEmpty());
}

TEST(TrainJobTest, RuntimePatchesChangeOnlyAroundASuspension) {
  Object running = Checked(kTrainJob);
  Json patched = ParseOne(kTrainJob);
  patched["spec"]["runtimePatches"] = Json::parse(R"([{"manager": "kueue"}])");
  EXPECT_THAT(ErrorStrings(ValidateUpdate(running, Checked(patched.dump()))),
              ElementsAre("spec.runtimePatches: Forbidden: RuntimePatches can only be modified "
                          "when the TrainJob is suspended before or after the update"));
  patched["spec"]["suspend"] = true;
  EXPECT_THAT(ErrorStrings(ValidateUpdate(running, Checked(patched.dump()))), IsEmpty());
}

TEST(JobSetTest, NamesItsJobsAndHostsCouldNotHoldAreRefused) {
  CheckedObject checked = DecodeAndValidate(ParseOne(R"(
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: a-jobset-whose-name-is-long-enough-to-matter-here-today, namespace: default}
spec:
  replicatedJobs:
  - name: workers
    replicas: 10
    template: {spec: {parallelism: 4, completions: 4,
                      template: {spec: {containers: [{name: w, image: i}]}}}}
)"));
  EXPECT_THAT(ErrorStrings(checked.result.errors),
              ElementsAre("spec.replicatedJobs[0].name: Invalid value: \"workers\": its Job's name "
                          "a-jobset-whose-name-is-long-enough-to-matter-here-today-workers-9 would "
                          "be longer than 63 characters: shorten the JobSet's name or this one"));
}

TEST(TrainingRuntimeTest, MpiDefaultsAreTheCrds) {
  Object runtime = Checked(R"(
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: mpi}
spec:
  mlPolicy: {numNodes: 1, mpi: {}}
  template:
    spec:
      replicatedJobs:
      - name: launcher
        template:
          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
          spec: {template: {spec: {containers: [{name: node, image: mpi}]}}}
)");
  TrainingRuntimeSpec spec = internal::TypedFields<TrainingRuntimeFields>(runtime).spec;
  const MpiPolicy& mpi = *spec.ml_policy->mpi;
  EXPECT_EQ(mpi.num_proc_per_node, 1);
  EXPECT_EQ(mpi.mpi_implementation, "OpenMPI");
  EXPECT_EQ(mpi.ssh_auth_mount_path, "/root/.ssh");
  EXPECT_EQ(mpi.run_launcher_as_node, false);
  EXPECT_EQ(spec.template_.spec.replicated_jobs[0].replicas, 1);
  EXPECT_EQ(spec.template_.spec.replicated_jobs[0].group_name, "default");
}

// Trainer v2.4: a runtime's replicated job names are 20 characters at most.
TEST(TrainingRuntimeTest, AReplicatedJobNameOfMoreThanTwentyCharactersIsRefused) {
  CheckedObject checked = DecodeAndValidate(ParseOne(R"(
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: long}
spec:
  template:
    spec:
      replicatedJobs:
      - name: dataset-initializer
        template: {spec: {template: {spec: {containers: [{name: dataset-initializer, image: i}]}}}}
      - name: node-with-a-long-name
        template: {spec: {template: {spec: {containers: [{name: node, image: i}]}}}}
)"));
  EXPECT_THAT(ErrorStrings(checked.result.errors),
              ElementsAre("spec.template.spec.replicatedJobs[1].name: Too long: must have at most "
                          "20 characters"));
}

TEST(TrainingRuntimeTest, ADeprecatedRuntimeIsAcceptedWithAWarning) {
  CheckedObject checked = DecodeAndValidate(ParseOne(R"(
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata: {name: old, namespace: default, labels: {trainer.kubeflow.org/support: deprecated}}
spec:
  template:
    spec:
      replicatedJobs:
      - name: node
        template: {spec: {template: {spec: {containers: [{name: node, image: i}]}}}}
)"));
  EXPECT_THAT(ErrorStrings(checked.result.errors), IsEmpty());
  ASSERT_EQ(checked.result.warnings.size(), 1u);
  EXPECT_THAT(checked.result.warnings[0], ::testing::HasSubstr("deprecated"));
}

TEST(JobSetTest, TheWebhooksDefaultsMakeARunnableJobSet) {
  Object jobset = Checked(R"(
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: js, namespace: default}
spec:
  replicatedJobs:
  - name: workers
    replicas: 2
    template: {spec: {parallelism: 1, completions: 1,
                      template: {spec: {containers: [{name: w, image: i}]}}}}
)");
  JobSetSpec spec = std::get<JobSet>(jobset).spec;
  EXPECT_EQ(spec.success_policy->operator_, "All");
  EXPECT_EQ(spec.startup_policy->startup_policy_order, "AnyOrder");
  EXPECT_EQ(spec.network->enable_dns_hostnames, true);
  const BatchJobSpec& job = spec.replicated_jobs[0].template_.spec;
  EXPECT_EQ(job.completion_mode, "Indexed");
  EXPECT_EQ(job.template_.spec.restart_policy, "OnFailure");
}

}  // namespace
}  // namespace trainyard::api
