// Targeted validation behaviour; the rule-by-rule corpus is in
// tests/data/invalid (invalid_cases_test.cc).
#include "api/validation.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/job_metrics.h"
#include "api/tests/test_util.h"

namespace trainyard::api {
namespace {

using ::testing::ElementsAre;
using testing::ErrorStrings;
using ::testing::IsEmpty;
using testing::ParseOne;

CheckedObject Check(const std::string& yaml) { return DecodeAndValidate(ParseOne(yaml)); }

TEST(ValidationTest, MasterWithoutReplicasIsAcceptedBecauseDefaultsComeFirst) {
  // Upstream rejects this with "must be 1" because its webhook sees the raw
  // object (no mutating webhook in v1).
  CheckedObject c = Check(R"(
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: x}
spec:
  pytorchReplicaSpecs:
    Master: {template: {spec: {containers: [{name: pytorch, image: i}]}}}
)");
  EXPECT_THAT(ErrorStrings(c.result.errors), IsEmpty());
}

TEST(ValidationTest, ReportsEveryErrorAtOnce) {
  CheckedObject c = Check(R"(
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: Bad_Name}
spec:
  runPolicy: {backoffLimit: -1}
  pytorchReplicaSpecs:
    Master: {replicas: 2, template: {spec: {containers: [{name: pytorch}]}}}
)");
  EXPECT_THAT(
      ErrorStrings(c.result.errors),
      ElementsAre(
          ::testing::StartsWith("metadata.name: Invalid value: \"Bad_Name\": should match: a "
                                "DNS-1035 label must consist of"),
          "spec.pytorchReplicaSpecs[Master].template.spec.containers[0].image: Required value: "
          "must be required",
          "spec.runPolicy.backoffLimit: Invalid value: -1: must be greater than or equal to 0",
          "spec.pytorchReplicaSpecs[Master].replicas: Forbidden: must be 1"));
}

TEST(ValidationTest, DecodeErrorsAreNotRepeatedByValidation) {
  CheckedObject c = Check(R"(
apiVersion: kubeflow.org/v1
kind: XGBoostJob
metadata: {name: x}
spec:
  xgbReplicaSpecs:
    Master: {template: {spec: {containers: [{name: 7, image: i}]}}}
)");
  // Nothing at or under the failed field is repeated; what is true of the
  // object around it (no container named xgboost) is still said.
  EXPECT_THAT(ErrorStrings(c.result.errors),
              ElementsAre("spec.xgbReplicaSpecs[Master].template.spec.containers[0].name: "
                          "Invalid value: 7: must be a string, not an integer (quote it)",
                          "spec.xgbReplicaSpecs[Master].template.spec.containers: Required value: "
                          "must have at least one container with name xgboost"));
}

TEST(ValidationTest, Warnings) {
  CheckedObject c = Check(R"(
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: x}
spec:
  elasticPolicy: {nProcPerNode: 2}
  pytorchReplicaSpecs:
    Worker:
      restartPolicy: OnFailure
      template: {spec: {restartPolicy: Always, containers: [{name: pytorch, image: i}]}}
)");
  EXPECT_TRUE(c.result.ok());
  EXPECT_THAT(
      c.result.warnings,
      ElementsAre("spec.pytorchReplicaSpecs[Worker].template.spec.restartPolicy: Always is "
                  "ignored: the replica's restartPolicy (OnFailure) decides restarts",
                  "spec.elasticPolicy.nProcPerNode is deprecated, use spec.nprocPerNode instead"));
}

// Whom a replica runs as is trainyard's choice: a securityContext's user is
// said to be unheeded, never ignored in silence.
TEST(ValidationTest, ASecurityContextsUserIsSaidToBeUnheeded) {
  CheckedObject c = Check(R"(
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: x}
spec:
  pytorchReplicaSpecs:
    Worker:
      template:
        spec:
          securityContext: {runAsUser: 1000, fsGroup: 1000, seccompProfile: {type: RuntimeDefault}}
          containers: [{name: pytorch, image: i, securityContext: {runAsNonRoot: true}}]
)");
  EXPECT_TRUE(c.result.ok());
  const char* unheeded =
      ": not acted on: replicas run as trainyard's user, or the one its --run-as names";
  const char* in_image =
      ": acted on only in the container's image with --run-as root; otherwise replicas run as "
      "trainyard's user, or the one its --run-as names";
  std::string spec = "spec.pytorchReplicaSpecs[Worker].template.spec.";
  EXPECT_THAT(c.result.warnings,
              ElementsAre(spec + "containers[0].securityContext.runAsNonRoot" + in_image,
                          spec + "securityContext.runAsUser" + in_image,
                          spec + "securityContext.fsGroup" + unheeded));
}

// A job's collector (api/job_metrics.h): Katib's, with paths in its
// output folder; anything else refused with what would do.
TEST(ValidationTest, AJobsMetricsCollectorIsKatibsOrRefused) {
  auto job = [](const std::string& annotations) {
    return "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\n"
           "metadata: {name: x, annotations: {" +
           annotations +
           "}}\nspec:\n  pytorchReplicaSpecs:\n"
           "    Master: {template: {spec: {containers: [{name: pytorch, image: i}]}}}\n";
  };
  auto errors = [&](const std::string& annotations) {
    CheckedObject c = Check(job(annotations));
    EXPECT_THAT(c.result.warnings, IsEmpty());
    return ErrorStrings(c.result.errors);
  };
  for (std::string ok : {"StdOut", "File", "'File:logs/metrics.log'", "TensorFlowEvent",
                         "'TensorFlowEvent:tb'", "Push", "none"}) {
    EXPECT_THAT(errors("trainyard.dev/metrics: " + ok), IsEmpty()) << ok;
  }
  EXPECT_THAT(errors("trainyard.dev/metrics: StdOut, trainyard.dev/metrics-filter: "
                     "'([a-z]+):\\s*([0-9.]+)'"),
              IsEmpty());
  EXPECT_THAT(errors("trainyard.dev/metrics: Prometheus"),
              ElementsAre(::testing::StartsWith(
                  "metadata.annotations[trainyard.dev/metrics]: Invalid value: \"Prometheus\": "
                  "want StdOut, File[:<path>], TensorFlowEvent[:<dir>], Push or none")));
  EXPECT_THAT(errors("trainyard.dev/metrics: 'File:/var/log/m.log'"),
              ElementsAre(::testing::HasSubstr("want a path relative to the job's output folder")));
  EXPECT_THAT(errors("trainyard.dev/metrics: 'File:../m.log'"),
              ElementsAre(::testing::HasSubstr("want a path within the job's output folder")));
  EXPECT_EQ(JobMetricsSpecOf({{"trainyard.dev/metrics", "File: m.log"}}).path, "m.log");
  EXPECT_THAT(errors("trainyard.dev/metrics: 'File:a//b'"),
              ElementsAre(::testing::HasSubstr("of plain names")));
  EXPECT_THAT(errors("trainyard.dev/metrics: 'TensorFlowEvent:runs/'"), IsEmpty());
  EXPECT_THAT(errors("trainyard.dev/metrics: None"), IsEmpty());  // Katib's spelling
  EXPECT_THAT(errors("trainyard.dev/metrics-filter: '(unclosed'"),
              ElementsAre(::testing::StartsWith(
                  "metadata.annotations[trainyard.dev/metrics-filter]: Invalid value")));
  EXPECT_THAT(errors("trainyard.dev/metrics: Push, trainyard.dev/metrics-filter: '(a)(b)'"),
              ElementsAre(::testing::HasSubstr("for the StdOut and File collectors alone")));
  // On what is no job: said to do nothing.
  EXPECT_THAT(Check("apiVersion: v1\nkind: ConfigMap\n"
                    "metadata: {name: x, annotations: {trainyard.dev/metrics: StdOut}}\n")
                  .result.warnings,
              ElementsAre("metadata.annotations[trainyard.dev/metrics]: not acted on: a "
                          "ConfigMap is no job, and has no metrics of its own to collect"));
}

// trainyard.dev/root on a pod template: host or image, nothing else; on
// a job's own metadata it would do nothing, so said.
TEST(ValidationTest, TheRootAnnotationIsHostOrImageAndReadOnPodTemplates) {
  auto job = [](const std::string& job_annotations, const std::string& pod_annotations) {
    return Check(R"(
apiVersion: batch/v1
kind: Job
metadata: {name: j, annotations: {)" +
                 job_annotations + R"(}}
spec:
  template:
    metadata: {annotations: {)" +
                 pod_annotations + R"(}}
    spec:
      restartPolicy: Never
      containers: [{name: c, image: i, command: [train]}]
)")
        .result;
  };
  for (const char* ok : {"host", "image"}) {
    ValidationResult result = job("", std::string("trainyard.dev/root: ") + ok);
    EXPECT_THAT(result.errors, IsEmpty()) << ok;
    EXPECT_THAT(result.warnings, IsEmpty()) << ok;
  }
  EXPECT_THAT(ErrorStrings(job("", "trainyard.dev/root: Host").errors),
              ElementsAre(::testing::HasSubstr(
                  "spec.template.metadata.annotations[trainyard.dev/root]: Unsupported value: "
                  "\"Host\": supported values: \"host\", \"image\"")));
  EXPECT_THAT(job("trainyard.dev/root: host", "").warnings,
              ElementsAre("metadata.annotations[trainyard.dev/root]: not acted on: it is read on "
                          "pods; put it on the pod template's metadata "
                          "(template.metadata.annotations)"));
}

// A trial's job has no collector of its own: said where the template
// names one.
TEST(ValidationTest, ACollectorOnATrialsJobIsSaidToDoNothing) {
  CheckedObject c = Check(R"(
apiVersion: kubeflow.org/v1beta1
kind: Experiment
metadata: {name: tune}
spec:
  objective: {type: minimize, objectiveMetricName: loss}
  algorithm: {algorithmName: random}
  maxTrialCount: 4
  parameters:
  - {name: lr, parameterType: double, feasibleSpace: {min: '0.01', max: '0.1'}}
  trialTemplate:
    primaryContainerName: c
    trialParameters: [{name: learningRate, reference: lr}]
    trialSpec:
      apiVersion: batch/v1
      kind: Job
      metadata: {annotations: {trainyard.dev/metrics: 'File:m.log'}}
      spec:
        template:
          spec:
            restartPolicy: Never
            containers: [{name: c, image: i, command: [train, '--lr=${trialParameters.learningRate}']}]
)");
  EXPECT_THAT(ErrorStrings(c.result.errors), IsEmpty());
  EXPECT_THAT(c.result.warnings,
              ::testing::Contains(
                  "spec.trialTemplate.trialSpec.metadata.annotations[trainyard.dev/metrics]: not "
                  "acted on: a trial's metrics are collected as spec.metricsCollectorSpec says"));
}

// Probes, lifecycle hooks and read-only mounts, which need a kubelet and
// mounts of their own here: said, never dropped.
// readOnly mounts are enforced in a replica's sandbox; the node agent
// says so where it has none (node_agent.cc, WarnPathRewriting).
TEST(ValidationTest, ProbesHooksAndMountOptionsAreSaidToBeUnheededAndReadOnlyIsNot) {
  CheckedObject c = Check(R"(
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: x}
spec:
  pytorchReplicaSpecs:
    Worker:
      template:
        spec:
          containers:
            - name: pytorch
              image: i
              readinessProbe: {tcpSocket: {port: 23456}}
              lifecycle: {preStop: {exec: {command: [sh, -c, save]}}}
              volumeMounts:
                - {name: data, mountPath: /data, readOnly: true, subPathExpr: $(POD_NAME),
                   mountPropagation: HostToContainer, recursiveReadOnly: Enabled}
          volumes: [{name: data, persistentVolumeClaim: {claimName: d, readOnly: true}}]
)");
  EXPECT_TRUE(c.result.ok());
  std::string spec = "spec.pytorchReplicaSpecs[Worker].template.spec.";
  std::string container = spec + "containers[0].";
  EXPECT_THAT(
      c.result.warnings,
      ::testing::UnorderedElementsAre(
          ::testing::StartsWith(container + "volumeMounts[0].subPathExpr: not acted on"),
          ::testing::StartsWith(container + "volumeMounts[0].mountPropagation: not acted on"),
          ::testing::StartsWith(container + "volumeMounts[0].recursiveReadOnly: not acted on"),
          ::testing::StartsWith(container + "readinessProbe: not acted on"),
          ::testing::StartsWith(container + "lifecycle: not acted on")));
}

// A termination file of the manifest's own is not read: said. The default
// path, which every manifest a cluster wrote back carries, is not.
TEST(ValidationTest, ATerminationFileOfItsOwnIsSaidToBeUnread) {
  const char* manifest = R"(
apiVersion: batch/v1
kind: Job
metadata: {name: x}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - {name: main, image: i, terminationMessagePath: %s}
)";
  char own[1024], standard[1024];
  std::snprintf(own, sizeof(own), manifest, "/tmp/why");
  std::snprintf(standard, sizeof(standard), manifest, "/dev/termination-log");
  EXPECT_THAT(Check(own).result.warnings,
              ::testing::ElementsAre(::testing::StartsWith(
                  "spec.template.spec.containers[0].terminationMessagePath: not acted on")));
  EXPECT_THAT(Check(standard).result.warnings, ::testing::IsEmpty());
}

TEST(ValidationTest, UpdateKeepsManagedByAndQueueForEveryKind) {
  const char* base = R"(
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: x}
spec:
  runPolicy: {managedBy: %s, schedulingPolicy: {queue: %s}}
  pytorchReplicaSpecs:
    Worker: {template: {spec: {containers: [{name: pytorch, image: i}]}}}
)";
  auto make = [&](const char* managed_by, const char* queue) {
    char buf[1024];
    std::snprintf(buf, sizeof(buf), base, managed_by, queue);
    return *DecodeObject(ParseOne(buf)).object;
  };
  Object old_job = make("kubeflow.org/training-operator", "a");
  EXPECT_THAT(ErrorStrings(ValidateUpdate(old_job, make("kubeflow.org/training-operator", "a"))),
              IsEmpty());
  EXPECT_THAT(
      ErrorStrings(ValidateUpdate(old_job, make("kueue.x-k8s.io/multikueue", "b"))),
      ElementsAre("spec.runPolicy.managedBy: Invalid value: \"kueue.x-k8s.io/multikueue\": field "
                  "is immutable",
                  "spec.runPolicy.schedulingPolicy.queue: Invalid value: \"b\": "
                  "spec.runPolicy.schedulingPolicy.queue is immutable"));
}

TEST(ValidationTest, TfAcceptsOnlyKnownReplicaTypes) {
  // Upstream's TFJob webhook has no whitelist; a typo there starts nothing.
  CheckedObject c = Check(R"(
apiVersion: kubeflow.org/v1
kind: TFJob
metadata: {name: x}
spec:
  tfReplicaSpecs:
    Wroker: {template: {spec: {containers: [{name: tensorflow, image: i}]}}}
)");
  EXPECT_THAT(ErrorStrings(c.result.errors),
              ElementsAre("spec.tfReplicaSpecs[Wroker]: Unsupported value: \"Wroker\": supported "
                          "values: \"Chief\", \"Master\", \"PS\", \"Worker\", \"Evaluator\""));
}

}  // namespace
}  // namespace trainyard::api
