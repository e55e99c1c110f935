#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/kubernetes_fields.h"
#include "api/object.h"
#include "api/pod_object.h"
#include "api/tests/test_util.h"
#include "api/yaml.h"

namespace trainyard::api {
namespace {

using testing::DecodeOk;
using ::testing::ElementsAre;
using testing::ErrorStrings;
using ::testing::HasSubstr;
using testing::ParseOne;

constexpr const char* kPyTorchJob = R"(
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: mnist
  namespace: team-a
  labels: {app: mnist}
spec:
  nprocPerNode: "2"
  runPolicy:
    backoffLimit: 3
    schedulingPolicy:
      minAvailable: 2
      minResources: {cpu: 4, nvidia.com/gpu: "2"}
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      restartPolicy: OnFailure
      template:
        metadata:
          annotations: {sidecar.istio.io/inject: "false"}
        spec:
          priorityClassName: high
          securityContext: {runAsUser: 1000}
          containers:
            - name: pytorch
              image: pytorch:2
              imagePullPolicy: Always
              command: [python3, train.py]
              env:
                - {name: A, value: "1"}
                - name: POD
                  valueFrom: {fieldRef: {fieldPath: metadata.name}}
              resources:
                limits: {cpu: 500m, memory: 4Gi, nvidia.com/gpu: 1}
              volumeMounts: [{name: scratch, mountPath: /scratch}]
              livenessProbe: {exec: {command: [true]}}
          volumes:
            - name: scratch
              emptyDir: {}
            - name: nfs
              nfs: {server: nfs.local, path: /data}
    Worker:
      replicas: 2
      template:
        spec:
          containers: [{name: pytorch, image: pytorch:2}]
status:
  conditions:
    - {type: Created, status: "True", reason: PyTorchJobCreated}
  replicaStatuses: {Master: {active: 1}}
)";

TEST(CodecTest, DecodesModelledFields) {
  Object object = DecodeOk(kPyTorchJob);
  const auto& job = std::get<TrainingJob>(object);
  EXPECT_EQ(job.kind, JobKind::kPyTorchJob);
  EXPECT_EQ(job.metadata.namespace_, "team-a");
  EXPECT_EQ(job.spec.nproc_per_node, "2");
  EXPECT_EQ(job.spec.run_policy->backoff_limit, 3);
  EXPECT_EQ(job.spec.run_policy->scheduling_policy->min_resources->at("cpu").milli(), 4000);
  const ReplicaSpec& master = job.spec.replica_specs.at("Master");
  const Container& c = master.template_.spec.containers.at(0);
  EXPECT_EQ(c.command, (std::vector<std::string>{"python3", "train.py"}));
  EXPECT_EQ(c.resources.limits.at("memory").Value(), 4LL << 30);
  EXPECT_EQ(c.env.at(1).value_from->field_ref->field_path, "metadata.name");
  EXPECT_TRUE(master.template_.spec.volumes.at(0).empty_dir.has_value());
  EXPECT_EQ(master.template_.spec.priority_class_name, "high");
  EXPECT_EQ(job.status.conditions.at(0).reason, "PyTorchJobCreated");
  EXPECT_EQ(job.status.replica_statuses.at("Master").active, 1);
}

TEST(CodecTest, EveryPartlyModelledKubernetesTypeHasItsFieldList) {
  for (std::string_view type : {PodSpec::kKubernetesType,
                                Container::kKubernetesType,
                                EnvVar::kKubernetesType,
                                EnvVarSource::kKubernetesType,
                                ObjectFieldSelector::kKubernetesType,
                                ResourceFieldSelector::kKubernetesType,
                                KeySelector::kKubernetesType,
                                ContainerPort::kKubernetesType,
                                ResourceRequirements::kKubernetesType,
                                VolumeMount::kKubernetesType,
                                Volume::kKubernetesType,
                                HostPathVolumeSource::kKubernetesType,
                                EmptyDirVolumeSource::kKubernetesType,
                                KeyToPath::kKubernetesType,
                                ConfigMapVolumeSource::kKubernetesType,
                                SecretVolumeSource::kKubernetesType,
                                PersistentVolumeClaimVolumeSource::kKubernetesType,
                                Affinity::kKubernetesType,
                                NodeAffinity::kKubernetesType,
                                NodeSelector::kKubernetesType,
                                NodeSelectorTerm::kKubernetesType,
                                NodeSelectorRequirement::kKubernetesType,
                                PreferredSchedulingTerm::kKubernetesType,
                                Toleration::kKubernetesType,
                                ObjectMeta::kKubernetesType}) {
    const std::vector<std::string>* fields = KubernetesFieldNames(type);
    ASSERT_NE(fields, nullptr) << type;
    EXPECT_FALSE(fields->empty()) << type;
  }
  // Every field the model reads is one Kubernetes defines.
  std::vector<std::string> modelled;
  auto collect = [&](const char* key, auto&) { modelled.emplace_back(key); };
  Container c;
  Container::Fields(c, collect);
  const std::vector<std::string>& known = *KubernetesFieldNames("Container");
  for (const std::string& f : modelled) {
    EXPECT_NE(std::find(known.begin(), known.end(), f), known.end()) << f;
  }
}

TEST(CodecTest, KeepsUnmodelledKubernetesFieldsVerbatim) {
  Object object = DecodeOk(kPyTorchJob);
  const auto& spec = std::get<TrainingJob>(object).spec.replica_specs.at("Master").template_.spec;
  EXPECT_EQ(spec.extra["securityContext"]["runAsUser"], 1000);
  EXPECT_EQ(spec.containers[0].extra["imagePullPolicy"], "Always");
  EXPECT_EQ(spec.volumes[1].extra["nfs"]["server"], "nfs.local");
}

TEST(CodecTest, WriteThenReadGivesTheSameObjectAndLosesNothing) {
  Json original = ParseOne(kPyTorchJob);
  Object object = DecodeOk(kPyTorchJob);
  Json written = EncodeObject(object);
  std::string where;
  EXPECT_TRUE(testing::SameManifest(original, written, &where)) << where;
  // Through YAML text and back.
  Object again = DecodeOk(ToYaml(written));
  EXPECT_EQ(again, object);
  // Through JSON text and back.
  Result<std::vector<SourceDocument>> docs = ParseManifests(written.dump(), "x.json");
  ASSERT_TRUE(docs.ok());
  EXPECT_EQ(*DecodeObject((*docs)[0].value).object, object);
}

TEST(CodecTest, QuantitiesWriteBackAsWritten) {
  Object object = DecodeOk(kPyTorchJob);
  Json written = EncodeObject(object);
  const Json& limits = written["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]
                              ["containers"][0]["resources"]["limits"];
  EXPECT_EQ(limits["cpu"], "500m");
  EXPECT_EQ(limits["memory"], "4Gi");
  EXPECT_EQ(limits["nvidia.com/gpu"], "1");  // a bare number comes back as Kubernetes writes it
}

TEST(CodecTest, ReportsEveryTypeErrorWithItsPath) {
  DecodeResult r = DecodeObject(ParseOne(R"(
apiVersion: kubeflow.org/v1
kind: TFJob
metadata: {name: x}
spec:
  runPolicy: {backoffLimit: "3", suspend: "yes"}
  tfReplicaSpecs:
    Worker:
      replicas: 1.5
      template:
        spec:
          containers: [{name: tensorflow, image: 2.0, command: python}]
)"));
  ASSERT_TRUE(r.object.has_value());
  EXPECT_THAT(
      ErrorStrings(r.errors),
      ElementsAre(
          "spec.tfReplicaSpecs[Worker].replicas: Invalid value: 1.5: must be an integer",
          "spec.tfReplicaSpecs[Worker].template.spec.containers[0].image: Invalid value: 2.0: "
          "must be a string, not a number (quote it)",
          "spec.tfReplicaSpecs[Worker].template.spec.containers[0].command: Invalid value: "
          "\"python\": must be a list, not a string",
          "spec.runPolicy.backoffLimit: Invalid value: \"3\": must be an integer, not a string",
          "spec.runPolicy.suspend: Invalid value: \"yes\": must be a boolean (true or false), not "
          "a string"));
}

TEST(CodecTest, UnknownKubeflowFieldsAreErrorsWithSuggestions) {
  DecodeResult r = DecodeObject(ParseOne(R"(
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: x}
spec:
  runPolicy: {backofLimit: 3}
  successPolicy: AllWorkers
  pytorchReplicaSpecs: {}
)"));
  EXPECT_THAT(ErrorStrings(r.errors),
              ElementsAre("spec.runPolicy.backofLimit: Unknown field: not a field of this object; "
                          "did you mean \"backoffLimit\"?",
                          "spec.successPolicy: Unknown field: not a field of this object"));
}

// A field written where it does not belong, but that the kind has
// elsewhere, is said with where it belongs, indices and keys kept.
TEST(CodecTest, AMisplacedFieldSaysWhereItBelongs) {
  DecodeResult r = DecodeObject(ParseOne(R"(
apiVersion: kubeflow.org/v1
kind: TFJob
metadata: {name: x}
spec:
  ttlSecondsAfterFinished: 60
  tfReplicaSpecs:
    Worker:
      template:
        spec:
          serviceAccountName: trainer
          containers:
            - name: tensorflow
              image: tf
              nodeSelector: {gpu: a100}
              limits: {cpu: 2}
)"));
  EXPECT_THAT(ErrorStrings(r.errors),
              ::testing::UnorderedElementsAre(
                  "spec.ttlSecondsAfterFinished: Unknown field: not a field of this object; "
                  "did you mean spec.runPolicy.ttlSecondsAfterFinished?",
                  "spec.tfReplicaSpecs[Worker].template.spec.containers[0].nodeSelector: "
                  "Unknown field: not a field of this object; did you mean "
                  "spec.tfReplicaSpecs[Worker].template.spec.nodeSelector?",
                  "spec.tfReplicaSpecs[Worker].template.spec.containers[0].limits: "
                  "Unknown field: not a field of this object; did you mean "
                  "spec.tfReplicaSpecs[Worker].template.spec.containers[0].resources.limits?"));
  // A batch/v1 Job's too; a near name at its own level is the hint first.
  DecodeResult batch = DecodeObject(ParseOne(R"(
apiVersion: batch/v1
kind: Job
metadata: {name: x}
spec:
  restartPolicy: Never
  template: {spec: {restartPolicy: Never, containers: [{name: c, image: i}]}}
  backofLimit: 2
)"));
  EXPECT_THAT(ErrorStrings(batch.errors),
              ::testing::UnorderedElementsAre(
                  "spec.restartPolicy: Unknown field: not a field of this object; did you mean "
                  "spec.template.spec.restartPolicy?",
                  "spec.backofLimit: Unknown field: not a field of this object; did you mean "
                  "\"backoffLimit\"?"));
}

TEST(CodecTest, ValuesOutsideTheirIntegerTypeAreRejected) {
  DecodeResult r = DecodeObject(ParseOne(R"(
apiVersion: kubeflow.org/v1
kind: JAXJob
metadata: {name: x}
spec:
  runPolicy: {backoffLimit: 3000000000, activeDeadlineSeconds: 3000000000}
  jaxReplicaSpecs: {}
)"));
  EXPECT_THAT(ErrorStrings(r.errors),
              ElementsAre("spec.runPolicy.backoffLimit: Invalid value: 3000000000: must be at "
                          "most 2147483647"));
}

TEST(CodecTest, KindAndApiVersionAreChecked) {
  EXPECT_THAT(
      ErrorStrings(DecodeObject(ParseOne("apiVersion: v1\nkind: StatefulSet\n")).errors),
      ElementsAre(
          "kind: Unsupported value: \"StatefulSet\": supported values: "
          "\"PyTorchJob\", \"TFJob\", \"XGBoostJob\", \"MPIJob\", \"PaddleJob\", "
          "\"JAXJob\", \"Job\", \"TrainJob\", \"JobSet\", \"ConfigMap\", \"Secret\", \"Service\", "
          "\"PersistentVolumeClaim\", \"TrainingRuntime\", \"ClusterTrainingRuntime\", "
          "\"ClusterQueue\", \"LocalQueue\", "
          "\"ResourceFlavor\", \"PriorityClass\", \"ResourceQuota\", "
          "\"OptimizationJob\", \"Experiment\", \"Trial\", \"Suggestion\", \"Deployment\""));
  EXPECT_THAT(
      ErrorStrings(
          DecodeObject(
              ParseOne(
                  "apiVersion: kubeflow.org/v2\nkind: JAXJob\nmetadata: {name: x}\nspec: {}\n"))
              .errors),
      ElementsAre("apiVersion: Unsupported value: \"kubeflow.org/v2\": supported values: "
                  "\"kubeflow.org/v1\""));
  EXPECT_THAT(ErrorStrings(DecodeObject(ParseOne("metadata: {name: x}\n")).errors),
              ElementsAre("kind: Required value"));
}

TEST(CodecTest, ConfigMapRoundTripsWithItsDataAtTheTop) {
  const char* yaml = R"(
apiVersion: v1
kind: ConfigMap
metadata: {name: settings.v1, namespace: ns}
data: {hostfile: "w-0 slots=1\n", mode: fast}
binaryData: {blob: aGk=}
immutable: true
)";
  Object object = DecodeOk(yaml);
  const auto& map = std::get<ConfigMap>(object);
  EXPECT_EQ(map.data.at("hostfile"), "w-0 slots=1\n");
  EXPECT_EQ(map.binary_data.at("blob"), "aGk=");
  EXPECT_EQ(EncodeObject(object), ParseOne(yaml));
  EXPECT_EQ(DisplayName(object), "ConfigMap ns/settings.v1");
  EXPECT_THAT(
      ErrorStrings(DecodeObject(ParseOne("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: "
                                         "x}\nspec: {}\ndata: {a: [1]}\n"))
                       .errors),
      ElementsAre(HasSubstr("spec"), HasSubstr("data[a]")));
}

TEST(CodecTest, BatchJobRoundTrips) {
  const char* yaml = R"(
apiVersion: batch/v1
kind: Job
metadata: {name: trial-1}
spec:
  backoffLimit: 2
  podFailurePolicy: {rules: [{action: FailJob, onExitCodes: {operator: In, values: [42]}}]}
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: busybox, args: [--lr, "0.1"]}]
)";
  Object object = DecodeOk(yaml);
  const auto& job = std::get<BatchJob>(object);
  EXPECT_EQ(job.spec.backoff_limit, 2);
  EXPECT_EQ(job.spec.pod_failure_policy["rules"][0]["action"], "FailJob");
  EXPECT_TRUE(testing::SameManifest(ParseOne(yaml), EncodeObject(object)));
}

TEST(CodecTest, PodRoundTripsWithItsStatus) {
  Json doc = ParseOne(R"(
apiVersion: v1
kind: Pod
metadata: {name: mnist-master-0, namespace: ml}
spec:
  nodeName: local
  restartPolicy: OnFailure
  containers: [{name: pytorch, image: i, command: [python3]}]
status:
  phase: Running
  qosClass: BestEffort
  containerStatuses:
    # As core/v1 writes a status: ready, image and imageID always there.
    - name: pytorch
      ready: true
      image: i
      imageID: ""
      restartCount: 2
      state: {running: {startedAt: "2026-11-21T10:00:00Z"}}
      lastState: {terminated: {exitCode: 137, signal: 9, reason: Error}}
)");
  Result<Pod> pod = DecodePod(doc);
  ASSERT_TRUE(pod.ok()) << pod.status().ToString();
  EXPECT_EQ(pod->spec.node_name, "local");
  EXPECT_EQ(pod->status.container_statuses[0].restart_count, 2);
  EXPECT_EQ(pod->status.container_statuses[0].last_state.terminated->exit_code, 137);
  EXPECT_TRUE(testing::SameManifest(doc, EncodePod(*pod)));
  EXPECT_FALSE(DecodePod(ParseOne("kind: Service\n")).ok());
}

TEST(YamlTest, MultiDocumentListsAndLines) {
  Result<std::vector<SourceDocument>> docs =
      ParseManifests("---\na: 1\n---\n---\nkind: List\nitems:\n  - {b: 2}\n  - {c: 3}\n", "f.yaml");
  ASSERT_TRUE(docs.ok()) << docs.status().ToString();
  ASSERT_EQ(docs->size(), 3u);
  EXPECT_EQ((*docs)[0].value["a"], 1);
  EXPECT_EQ((*docs)[0].line, 2);
  EXPECT_EQ((*docs)[1].value["b"], 2);
  EXPECT_EQ((*docs)[2].value["c"], 3);
}

TEST(YamlTest, CoreSchemaScalars) {
  Json j = ParseOne(
      "a: yes\nb: true\nc: 010\nd: 1.5\ne: ~\nf: '1'\ng: 0x1F\nh: 1e3\ni: on\nj: 4Gi\nk: \"\"\n");
  EXPECT_EQ(j["a"], "yes");  // YAML 1.1 booleans stay strings
  EXPECT_EQ(j["b"], true);
  EXPECT_EQ(j["c"], 8);  // a leading zero is octal, as kubectl reads defaultMode: 0644
  EXPECT_EQ(j["d"], 1.5);
  EXPECT_TRUE(j["e"].is_null());
  EXPECT_EQ(j["f"], "1");
  EXPECT_EQ(j["g"], 31);
  EXPECT_EQ(j["h"], 1000.0);
  EXPECT_EQ(j["i"], "on");
  EXPECT_EQ(j["j"], "4Gi");
  EXPECT_EQ(j["k"], "");
}

TEST(YamlTest, NumberShapesFollowTheCoreSchema) {
  Json j = ParseOne(
      "a: .5\nb: 5.\nc: +1\nd: -x\ne: 1e\nf: e5\ng: .\nh: -2.5E-3\ni: 1.2.3\nj: 1e400\n"
      "k: 99999999999999999999\n");
  EXPECT_EQ(j["a"], 0.5);
  EXPECT_EQ(j["b"], 5.0);
  EXPECT_EQ(j["c"], 1);
  EXPECT_EQ(j["d"], "-x");
  EXPECT_EQ(j["e"], "1e");
  EXPECT_EQ(j["f"], "e5");
  EXPECT_EQ(j["g"], ".");
  EXPECT_EQ(j["h"], -0.0025);
  EXPECT_EQ(j["i"], "1.2.3");
  EXPECT_EQ(j["j"], "1e400");  // beyond a double: kept as written, JSON has no infinity
  EXPECT_EQ(j["k"], 1e20);     // beyond int64: still a number
  Json special = ParseOne("a: .inf\nb: .nan\n~: 1\n2: 3\n");
  EXPECT_EQ(special["a"], ".inf");
  EXPECT_EQ(special["b"], ".nan");
  EXPECT_EQ(special["~"], 1);  // keys are the text as written
  EXPECT_EQ(special["2"], 3);
}

TEST(YamlTest, ErrorsSayFileLineAndColumn) {
  Result<std::vector<SourceDocument>> r = ParseManifests("a: 1\nb: [1, 2\n", "job.yaml");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(r.status().message().starts_with("job.yaml:3:1: ")) << r.status().message();

  r = ParseManifests("a: 1\nb: 2\na: 3\n", "dup.yaml");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "dup.yaml:3:1: key \"a\" already set in this map");

  r = ParseManifests("{\n  \"a\": 1,\n  \"b\": }\n", "job.json");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().message().starts_with("job.json:3:8: ")) << r.status().message();
}

// Well-formed nesting that libyaml and nlohmann::json would take (libyaml
// stops at 1,000 levels, nlohmann nowhere): refused by the codec's own bound
// of 128, with the reason; within it, read.
TEST(YamlTest, RejectsHostileNesting) {
  auto nested = [](int depth) { return std::string(depth, '[') + "0" + std::string(depth, ']'); };
  Result<std::vector<SourceDocument>> deep = ParseManifests("a: " + nested(200), "deep.yaml");
  ASSERT_FALSE(deep.ok());
  EXPECT_THAT(deep.status().message(), HasSubstr("nesting deeper than 128 levels"));
  EXPECT_TRUE(ParseManifests("a: " + nested(100), "fine.yaml").ok());
  Result<Json> json = ParseJsonValue(nested(200), "the body");
  ASSERT_FALSE(json.ok());
  EXPECT_THAT(json.status().message(), HasSubstr("nesting deeper than 128 levels"));
  EXPECT_TRUE(ParseJsonValue(nested(100), "the body").ok());
}

TEST(YamlTest, WritesStringsThatLookLikeOtherTypesQuoted) {
  Json j = {{"a", "1"}, {"b", "true"}, {"c", "null"}, {"d", ""}, {"e", "plain"}, {"f", 2}};
  Json back = ParseOne(ToYaml(j));
  EXPECT_EQ(back, j);
}

}  // namespace
}  // namespace trainyard::api
