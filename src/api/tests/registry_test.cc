// The resource registry: one descriptor per kind, complete and consistent,
// and the kinds added through it alone (Secret, Service,
// PersistentVolumeClaim) decoded, defaulted and checked as Kubernetes does.
#include "api/registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "api/object.h"
#include "api/tests/test_util.h"
#include "api/validation.h"

namespace trainyard::api {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using testing::ParseOne;

TEST(RegistryTest, EveryKindHasOneCompleteDescriptor) {
  std::set<std::string> kinds;
  std::set<std::string> resources;
  for (const ResourceType& t : AllResourceTypes()) {
    SCOPED_TRACE(t.kind);
    EXPECT_TRUE(kinds.insert(t.store_kind).second);
    EXPECT_TRUE(resources.insert(t.Qualified()).second);
    EXPECT_EQ(ResourceTypeOfKind(t.store_kind), &t);
    EXPECT_EQ(ResourceTypeOf({{"apiVersion", t.GroupVersion()}, {"kind", t.kind}}), &t);
    EXPECT_EQ(FindResourceType(t.group, t.version, t.plural), &t);
    EXPECT_EQ(ResolveResourceType(t.Qualified()), &t);
    // A plural two groups share names the first; the other is qualified.
    if (t.store_kind == t.kind) EXPECT_EQ(ResolveResourceType(t.plural), &t);
    EXPECT_FALSE(t.verbs.empty());
    ASSERT_TRUE(t.columns);
    EXPECT_FALSE(t.columns().empty());
    // A kind that is read from manifests is read, defaulted, checked and
    // written back by its descriptor alone.
    bool manifest = static_cast<bool>(t.hooks.decode);
    EXPECT_EQ(static_cast<bool>(t.hooks.set_defaults), manifest);
    EXPECT_EQ(static_cast<bool>(t.hooks.validate), manifest);
    EXPECT_EQ(static_cast<bool>(t.hooks.encode), manifest);
    EXPECT_EQ(manifest, t.role != ResourceRole::kCluster && t.role != ResourceRole::kRecord &&
                            t.role != ResourceRole::kPod && t.role != ResourceRole::kInstall);
    EXPECT_EQ(!t.framework.empty(), t.role == ResourceRole::kJob && t.group == "kubeflow.org");
    // What the code that treats every job alike asks a job kind, it has.
    bool job = t.role == ResourceRole::kJob;
    ASSERT_EQ(t.job_shape.has_value(), job);
    if (job) {
      const JobShape& shape = *t.job_shape;
      EXPECT_FALSE(shape.pod_job_label.empty());
      EXPECT_FALSE(shape.suspend_path.empty());
      EXPECT_TRUE(shape.pod_templates && shape.main_container && shape.metrics_container);
      EXPECT_EQ(shape.pod_owner_kinds.empty(), shape.child_jobs_status.empty());
      EXPECT_EQ(t.strategy.tracking, Tracking::kOwnOutput);
    }
  }
  EXPECT_EQ(ResolveResourceType("svc")->kind, "Service");
  EXPECT_EQ(ResolveResourceType("PVC")->kind, "PersistentVolumeClaim");
  EXPECT_EQ(ResolveResourceType("secret")->kind, "Secret");
  EXPECT_EQ(ResolveResourceType("statefulsets"), nullptr);
  EXPECT_THAT(JobKindNames(), Contains("Job"));
  EXPECT_THAT(JobKindNames(), Not(Contains("Experiment")));
}

// Volcano and scheduler-plugins both call theirs PodGroup: stores key the
// second by its group, so the two never meet.
TEST(RegistryTest, TwoGroupsKindsOfOneNameAreKeptApart) {
  Json volcano = {{"apiVersion", "scheduling.volcano.sh/v1beta1"}, {"kind", "PodGroup"}};
  Json plugins = {{"apiVersion", "scheduling.x-k8s.io/v1alpha1"}, {"kind", "PodGroup"}};
  EXPECT_EQ(StoreKindOf(volcano), "PodGroup");
  EXPECT_EQ(StoreKindOf(plugins), "PodGroup.scheduling.x-k8s.io");
  EXPECT_EQ(ResourceTypeOfKind("PodGroup.scheduling.x-k8s.io")->kind, "PodGroup");
  EXPECT_EQ(ResourceTypeOfKind("PodGroup.scheduling.x-k8s.io")->group, "scheduling.x-k8s.io");
  EXPECT_EQ(ResolveResourceType("podgroups.scheduling.x-k8s.io")->version, "v1alpha1");
  EXPECT_EQ(StoreKindOf({{"apiVersion", "example.com/v1"}, {"kind", "Widget"}}), "Widget");
}

// Decode, default, validate, as every entry point does; then encode.
CheckedObject Check(const std::string& yaml) { return DecodeAndValidate(ParseOne(yaml)); }

std::vector<std::string> Errors(const CheckedObject& checked) {
  std::vector<std::string> out;
  for (const FieldError& e : checked.result.errors) out.push_back(e.ToString());
  return out;
}

TEST(RegistryTest, ASecretsStringDataBecomesBase64DataAndItsValuesAreNeverShown) {
  CheckedObject ok = Check(R"(
apiVersion: v1
kind: Secret
metadata: {name: creds}
stringData: {token: hunter2}
data: {user: YWxpY2U=}
)");
  ASSERT_TRUE(ok.object);
  EXPECT_THAT(Errors(ok), IsEmpty());
  Json encoded = EncodeObject(*ok.object);
  EXPECT_EQ(encoded["type"], "Opaque");
  EXPECT_EQ(encoded["data"]["token"], "aHVudGVyMg==");
  EXPECT_EQ(encoded["data"]["user"], "YWxpY2U=");
  EXPECT_FALSE(encoded.contains("stringData"));
  EXPECT_EQ(DecodeObject(encoded).object, ok.object);  // defaulting is idempotent

  CheckedObject bad = Check(R"(
apiVersion: v1
kind: Secret
metadata: {name: creds}
data: {"bad key": c2VjcmV0, token: "not base64!"}
)");
  std::vector<std::string> errors = Errors(bad);
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_THAT(errors[0], HasSubstr("data: Invalid value: \"bad key\""));
  EXPECT_EQ(errors[1], "data[token]: Invalid value: \"<secret>\": must be base64-encoded");
  for (const std::string& e : errors) EXPECT_THAT(e, Not(HasSubstr("not base64!")));
}

TEST(RegistryTest, AServiceIsDefaultedAndCheckedAndSaysItRoutesNothing) {
  CheckedObject ok = Check(R"(
apiVersion: v1
kind: Service
metadata: {name: trainer}
spec:
  clusterIP: None
  selector: {app: trainer}
  ports: [{port: 23456}]
)");
  ASSERT_TRUE(ok.object);
  EXPECT_THAT(Errors(ok), IsEmpty());
  EXPECT_THAT(ok.result.warnings, Contains(HasSubstr("does not route its traffic")));
  Json spec = EncodeObject(*ok.object)["spec"];
  EXPECT_EQ(spec["type"], "ClusterIP");
  EXPECT_EQ(spec["ports"][0]["protocol"], "TCP");
  EXPECT_EQ(spec["ports"][0]["targetPort"], 23456);

  CheckedObject bad = Check(R"(
apiVersion: v1
kind: Service
metadata: {name: 1trainer}
spec:
  type: Magic
  ports: [{name: a, port: 0}, {name: a, port: 80, protocol: QUIC}]
  typo: 1
)");
  EXPECT_THAT(Errors(bad), ::testing::UnorderedElementsAre(
                               HasSubstr("metadata.name: Invalid value: \"1trainer\""),
                               HasSubstr("spec.type: Unsupported value: \"Magic\""),
                               HasSubstr("spec.ports[0].port: Invalid value: 0"),
                               HasSubstr("spec.ports[1].name: Duplicate value: \"a\""),
                               HasSubstr("spec.ports[1].protocol: Unsupported value: \"QUIC\""),
                               HasSubstr("spec.typo: Unknown field")));
}

TEST(RegistryTest, AClaimNeedsAccessModesAndStorageAndStartsPending) {
  CheckedObject ok = Check(R"(
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: checkpoints}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: standard
  resources: {requests: {storage: 10Gi}}
)");
  ASSERT_TRUE(ok.object);
  EXPECT_THAT(Errors(ok), IsEmpty());
  EXPECT_THAT(
      ok.result.warnings,
      ::testing::ElementsAre(HasSubstr("spec.storageClassName \"standard\": recorded only")));
  Json claim = EncodeObject(*ok.object);
  EXPECT_EQ(claim["status"]["phase"], "Pending");
  EXPECT_EQ(claim["spec"]["volumeMode"], "Filesystem");
  EXPECT_EQ(claim["spec"]["storageClassName"], "standard");

  CheckedObject bad = Check(R"(
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: checkpoints}
spec:
  accessModes: [ReadWriteSometimes]
  resources: {requests: {cpu: 1}}
)");
  EXPECT_THAT(Errors(bad),
              ::testing::UnorderedElementsAre(
                  HasSubstr("spec.accessModes[0]: Unsupported value: \"ReadWriteSometimes\""),
                  "spec.resources.requests[storage]: Required value"));

  // What a cluster's provisioner would act on is said, never dropped.
  CheckedObject cloned = Check(R"(
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: checkpoints}
spec:
  accessModes: [ReadOnlyMany]
  volumeMode: Block
  dataSource: {kind: PersistentVolumeClaim, name: base}
  resources: {requests: {storage: 1Gi}}
)");
  EXPECT_THAT(Errors(cloned), IsEmpty());
  EXPECT_THAT(cloned.result.warnings,
              ::testing::IsSupersetOf({HasSubstr("spec.volumeMode Block: no pod here can use it"),
                                       HasSubstr("spec.accessModes ReadOnlyMany: recorded only"),
                                       HasSubstr("spec.dataSource: not acted on")}));
}

// Every kind's words for an end: kubeflow.org/v1's Succeeded, a batch
// Job's and TrainJob's Complete, a JobSet's Completed; Failed for all.
// Each job kind's shape reads its own manifests: the container its
// parameters come from, where it is suspended, which pod its metrics are
// read from.
TEST(JobShapeTest, EachKindsShapeReadsItsManifests) {
  Json pytorch = ParseOne(R"(
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: p}
spec:
  pytorchReplicaSpecs:
    Worker: {template: {spec: {containers: [{name: pytorch, image: i, command: [w]}]}}}
    Master: {template: {spec: {containers: [{name: pytorch, image: i, command: [m]}]}}}
)");
  const JobShape* shape = JobShapeOf("PyTorchJob");
  ASSERT_NE(shape, nullptr);
  EXPECT_EQ(ArrayRefAt(*shape->main_container(pytorch), {"command"})[0], "m");
  EXPECT_EQ(shape->pod_templates(pytorch).size(), 2U);
  Json master = {{"metadata", {{"labels", {{"training.kubeflow.org/job-role", "master"}}}}},
                 {"spec", {{"containers", {{{"name", "sidecar"}}, {{"name", "pytorch"}}}}}}};
  EXPECT_EQ(shape->metrics_container(pytorch, master), "pytorch");
  master["metadata"]["labels"].erase("training.kubeflow.org/job-role");
  EXPECT_EQ(shape->metrics_container(pytorch, master), "");

  Json train = ParseOne(R"(
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: t}
spec: {runtimeRef: {name: torch-distributed}, trainer: {command: [python]}}
)");
  shape = JobShapeOf("TrainJob");
  ASSERT_NE(shape, nullptr);
  EXPECT_EQ(shape->main_container(train), FindAt(train, {"spec", "trainer"}));
  EXPECT_THAT(shape->pod_owner_kinds, ::testing::ElementsAre("JobSet", "Job"));
  MakeAt(train, shape->suspend_path) = true;
  EXPECT_TRUE(train["spec"]["suspend"].get<bool>());
  Json node0 = {{"metadata",
                 {{"labels",
                   {{"jobset.sigs.k8s.io/replicatedjob-name", "node"},
                    {"batch.kubernetes.io/job-completion-index", "0"}}}}}};
  EXPECT_EQ(shape->metrics_container(train, node0), "node");

  Json batch = ParseOne(R"(
apiVersion: batch/v1
kind: Job
metadata: {name: b}
spec: {template: {spec: {containers: [{name: main, image: i}]}}}
)");
  shape = JobShapeOf("Job");
  ASSERT_NE(shape, nullptr);
  EXPECT_EQ(StringAt(*shape->main_container(batch), "name"), "main");
  Json pod1 = {{"metadata", {{"labels", {{"batch.kubernetes.io/job-completion-index", "1"}}}}},
               {"spec", {{"containers", {{{"name", "main"}}}}}}};
  EXPECT_EQ(shape->metrics_container(batch, pod1), "");
  EXPECT_EQ(JobShapeOf("ConfigMap"), nullptr);
  // Katib's trial defaults, and the one kind Katib runs no trial of.
  EXPECT_EQ(JobShapeOf("Job")->trial_success_condition, "Complete");
  EXPECT_EQ(JobShapeOf("TFJob")->trial_success_condition, "Succeeded");
  EXPECT_EQ(JobShapeOf("TrainJob")->fixed_primary_container, "node");
  EXPECT_EQ(JobShapeOf("JobSet")->trial_success_condition, "");
}

// What the API server does beyond storing, asked of the kind.
TEST(ApiStrategyTest, EachKindSaysWhatTheServerDoesWithIt) {
  EXPECT_TRUE(HoldsSecrets("Secret"));
  EXPECT_FALSE(HoldsSecrets("ConfigMap"));
  EXPECT_EQ(ResourceTypeOfKind("Pod")->strategy.deletion, Deletion::kGraceful);
  EXPECT_EQ(ResourceTypeOfKind("Namespace")->strategy.deletion, Deletion::kWithContents);
  EXPECT_TRUE(ResourceTypeOfKind("Node")->strategy.kubelet_registered);
  EXPECT_EQ(TrackingOf("Trial"), Tracking::kPushed);
  EXPECT_EQ(TrackingOf("XGBoostJob"), Tracking::kOwnOutput);
  EXPECT_EQ(TrackingOf("Experiment"), Tracking::kNone);
  // A pod starts Pending; a new Node is tainted not ready.
  const ApiStrategy& pods = ResourceTypeOfKind("Pod")->strategy;
  EXPECT_EQ(pods.initial_status, Json({{"phase", "Pending"}}));
  Json node = {{"kind", "Node"}};
  ResourceTypeOfKind("Node")->strategy.prepare_for_create(node);
  EXPECT_EQ(node["spec"]["taints"][0]["key"], "node.kubernetes.io/not-ready");
  // The tracked-owner mark is its controller's: a pod created through the
  // API loses one it carries, and keeps its other annotations.
  Json forged = {
      {"kind", "Pod"},
      {"metadata",
       {{"annotations", {{"trainyard.dev/tracked-owner", "PyTorchJob/other/u"}, {"team", "a"}}}}}};
  pods.prepare_for_create(forged);
  EXPECT_EQ(forged["metadata"]["annotations"], Json({{"team", "a"}}));
  FieldErrors no_containers = pods.validate_kept({{"kind", "Pod"}, {"spec", Json::object()}});
  ASSERT_EQ(no_containers.size(), 1U);
  EXPECT_EQ(no_containers[0].path.ToString(), "spec.containers");
}

TEST(JobOutcomeTest, EachKindsEndIsRead) {
  auto with = [](const std::string& type, const std::string& status = "True") {
    return Json{{"status", {{"conditions", {{{"type", type}, {"status", status}}}}}}};
  };
  for (const char* done : {"Succeeded", "Complete", "Completed"}) {
    EXPECT_EQ(JobOutcome(with(done)), "Succeeded") << done;
  }
  EXPECT_EQ(JobOutcome(with("Failed")), "Failed");
  EXPECT_EQ(JobOutcome(with("Completed", "False")), std::nullopt);
  EXPECT_EQ(JobOutcome(with("Running")), std::nullopt);
}

// A TrainJob Failed for a runtime that does not exist yet goes on once it
// comes (its controller waits): not an end, for MLflow's records and the
// metrics' final read alike.
TEST(JobOutcomeTest, ATrainJobWaitingForItsRuntimeHasNotEnded) {
  Json waiting = {{"kind", "TrainJob"},
                  {"status",
                   {{"conditions",
                     {{{"type", "Failed"},
                       {"status", "True"},
                       {"reason", std::string(kRuntimeNotSupportedReason)}}}}}}};
  EXPECT_EQ(JobOutcome(waiting), std::nullopt);
  waiting["status"]["conditions"][0]["reason"] = "DeadlineExceeded";
  EXPECT_EQ(JobOutcome(waiting), "Failed");
  waiting["kind"] = "PyTorchJob";
  waiting["status"]["conditions"][0]["reason"] = std::string(kRuntimeNotSupportedReason);
  EXPECT_EQ(JobOutcome(waiting), "Failed");
}

}  // namespace
}  // namespace trainyard::api
