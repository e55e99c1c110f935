// The Deployment controller with a fake clock and an in-memory store, the
// test playing the node agent: pods kept, replaced, scaled and rolled out.
#include "controller/deployment_reconciler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/deployment.h"
#include "api/object.h"
#include "api/pod_object.h"
#include "api/validation.h"
#include "api/yaml.h"
#include "store/sqlite_store.h"

namespace trainyard::controller {
namespace {

using ::testing::Each;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::SizeIs;

class DeploymentReconcilerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = std::move(*store::SqliteStore::Open({.clock = &clock_}));
    reconciler_ = std::make_unique<DeploymentReconciler>(
        DeploymentReconcilerOptions{.store = store_.get(), .clock = &clock_});
  }
  static std::string Manifest(const std::string& spec, const std::string& command = "serve") {
    return "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: op, namespace: default}\n"
           "spec:\n" +
           spec +
           "  selector: {matchLabels: {app: op}}\n"
           "  template:\n    metadata: {labels: {app: op}}\n    spec:\n"
           "      containers: [{name: main, image: i, command: [" +
           command + "]}]\n";
  }
  void Apply(const std::string& spec, const std::string& command = "serve") {
    auto docs = api::ParseManifests(Manifest(spec, command), "deploy.yaml");
    ASSERT_TRUE(docs.ok()) << docs.status().ToString();
    api::Json doc = (*docs)[0].value;
    Result<api::Json> existing = store_->Get({"Deployment", "default", "op"});
    if (existing.ok()) {
      doc["metadata"] = (*existing)["metadata"];
      doc["status"] = (*existing)["status"];
      ASSERT_TRUE(store_->Update(doc).ok());
    } else {
      ASSERT_TRUE(store_->Create(doc).ok());
    }
  }
  void Reconcile() {
    Result<ReconcileResult> r = reconciler_->Reconcile({"Deployment", "default", "op"});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }
  std::vector<api::Pod> Pods() {
    std::vector<api::Pod> pods;
    store::ObjectStore::ListResult list = *store_->List("Pod", "default");
    for (const api::Json& doc : list.items) {
      api::Pod pod = *api::DecodePod(doc);
      if (pod.metadata.deletion_timestamp.empty()) pods.push_back(std::move(pod));
    }
    return pods;
  }
  // What the node agent reports: the pod running and ready, or ended.
  void SetPod(const std::string& name, const std::string& phase) {
    api::Pod pod = *api::DecodePod(*store_->Get({"Pod", "default", name}));
    pod.status.phase = phase;
    api::ContainerStatus c;
    c.name = "main";
    c.ready = phase == "Running";
    if (phase == "Running") c.state.running = api::ContainerStateRunning{};
    if (phase != "Running") c.state.terminated = api::ContainerStateTerminated{.exit_code = 1};
    pod.status.container_statuses = {c};
    ASSERT_TRUE(store_->UpdateStatus(api::EncodePod(pod)).ok());
  }
  void RunAll() {
    for (const api::Pod& pod : Pods()) SetPod(pod.metadata.name, "Running");
  }
  api::Json Status() { return (*store_->Get({"Deployment", "default", "op"}))["status"]; }
  std::string Condition(const std::string& type) {
    api::Json status = Status();  // ArrayRefAt's reference outlives no temporary
    for (const api::Json& c : api::ArrayRefAt(status, {"conditions"})) {
      if (api::StringAt(c, "type") == type) {
        return api::StringAt(c, "status") + " " + api::StringAt(c, "reason");
      }
    }
    return "";
  }

  FakeClock clock_;
  std::unique_ptr<store::SqliteStore> store_;
  std::unique_ptr<DeploymentReconciler> reconciler_;
};

TEST_F(DeploymentReconcilerTest, KeepsItsReplicasOfPodsNamedAndLabelledAsAReplicaSetsWouldBe) {
  Apply("  replicas: 2\n");
  Reconcile();
  std::vector<api::Pod> pods = Pods();
  ASSERT_THAT(pods, SizeIs(2));
  for (const api::Pod& pod : pods) {
    std::string hash = pod.metadata.labels.at("pod-template-hash");
    EXPECT_THAT(pod.metadata.name, MatchesRegex("op-" + hash + "-[b-z2-9]{5}"));
    EXPECT_EQ(pod.metadata.labels.at("app"), "op");
    EXPECT_EQ(pod.spec.restart_policy, "Always");  // defaulted: the node agent restarts it
    ASSERT_THAT(pod.metadata.owner_references, SizeIs(1));
    EXPECT_EQ(pod.metadata.owner_references[0].kind, "Deployment");
  }
  EXPECT_EQ(api::IntAt(Status(), {"replicas"}), 2);
  EXPECT_EQ(api::IntAt(Status(), {"readyReplicas"}), 0);
  EXPECT_EQ(Condition("Available"), "False MinimumReplicasUnavailable");

  RunAll();
  Reconcile();
  EXPECT_EQ(api::IntAt(Status(), {"readyReplicas"}), 2);
  EXPECT_EQ(api::IntAt(Status(), {"availableReplicas"}), 2);
  EXPECT_EQ(Condition("Available"), "True MinimumReplicasAvailable");
  EXPECT_EQ(Condition("Progressing"), "True NewReplicaSetAvailable");

  // Converged: reconciling again writes nothing.
  int64_t version = store_->CurrentResourceVersion();
  Reconcile();
  EXPECT_EQ(store_->CurrentResourceVersion(), version);
}

TEST_F(DeploymentReconcilerTest, APodThatEndsIsReplaced) {
  Apply("");
  Reconcile();
  ASSERT_THAT(Pods(), SizeIs(1));
  std::string first = Pods()[0].metadata.name;
  SetPod(first, "Failed");
  Reconcile();
  std::vector<api::Pod> pods = Pods();
  ASSERT_THAT(pods, SizeIs(1));
  EXPECT_NE(pods[0].metadata.name, first);
}

TEST_F(DeploymentReconcilerTest, ScalesDownTheNotReadyFirst) {
  Apply("  replicas: 3\n");
  Reconcile();
  std::vector<api::Pod> pods = Pods();
  ASSERT_THAT(pods, SizeIs(3));
  SetPod(pods[0].metadata.name, "Running");
  Apply("  replicas: 1\n");
  Reconcile();
  pods = Pods();
  ASSERT_THAT(pods, SizeIs(1));
  EXPECT_EQ(pods[0].status.phase, "Running");
}

TEST_F(DeploymentReconcilerTest, ARollingUpdateStopsTheOldPodsOnceTheNewAreReady) {
  Apply("  replicas: 2\n");
  Reconcile();
  RunAll();
  std::string old_hash = Pods()[0].metadata.labels.at("pod-template-hash");
  Apply("  replicas: 2\n", "serve-v2");
  Reconcile();
  ASSERT_THAT(Pods(), SizeIs(4));  // the new beside the old, which still serve
  EXPECT_EQ(api::IntAt(Status(), {"updatedReplicas"}), 2);
  EXPECT_EQ(Condition("Progressing"), "True ReplicaSetUpdated");
  RunAll();
  Reconcile();
  std::vector<api::Pod> pods = Pods();
  ASSERT_THAT(pods, SizeIs(2));
  for (const api::Pod& pod : pods) {
    EXPECT_NE(pod.metadata.labels.at("pod-template-hash"), old_hash);
    EXPECT_EQ(pod.spec.containers[0].command[0], "serve-v2");
  }
}

TEST_F(DeploymentReconcilerTest, RecreateStopsTheOldPodsBeforeStartingTheNew) {
  Apply("  strategy: {type: Recreate}\n");
  Reconcile();
  RunAll();
  Apply("  strategy: {type: Recreate}\n", "serve-v2");
  Reconcile();
  EXPECT_THAT(Pods(), SizeIs(0));
  // Once the old pod is gone (its grace over), the new one starts.
  store::ObjectStore::ListResult list = *store_->List("Pod", "default");
  for (const api::Json& doc : list.items) {
    ASSERT_TRUE(store_->Delete({"Pod", "default", api::StringAt(doc, {"metadata", "name"})}).ok());
  }
  Reconcile();
  ASSERT_THAT(Pods(), SizeIs(1));
  EXPECT_EQ(Pods()[0].spec.containers[0].command[0], "serve-v2");
}

// Paused holds the rollout, not the scaling, as Kubernetes does.
TEST_F(DeploymentReconcilerTest, APausedDeploymentScalesButDoesNotRollOut) {
  Apply("  paused: true\n  replicas: 2\n");
  Reconcile();
  ASSERT_THAT(Pods(), SizeIs(2));
  EXPECT_EQ(Condition("Progressing"), "Unknown DeploymentPaused");
  Apply("  paused: true\n  replicas: 2\n", "serve-v2");
  Reconcile();
  std::vector<api::Pod> pods = Pods();
  ASSERT_THAT(pods, SizeIs(2));
  EXPECT_EQ(pods[0].spec.containers[0].command[0], "serve");
  Apply("  paused: true\n  replicas: 1\n", "serve-v2");
  Reconcile();
  EXPECT_THAT(Pods(), SizeIs(1));
}

// A rollout that makes no step for progressDeadlineSeconds is said to
// have timed out, as `kubectl rollout status` then reports.
TEST_F(DeploymentReconcilerTest, ARolloutWithoutProgressExceedsItsDeadline) {
  Apply("  progressDeadlineSeconds: 30\n");
  Result<ReconcileResult> first = reconciler_->Reconcile({"Deployment", "default", "op"});
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(first->requeue_after.has_value());
  EXPECT_EQ(*first->requeue_after, std::chrono::seconds(30));
  EXPECT_EQ(Condition("Progressing"), "True ReplicaSetUpdated");
  clock_.Advance(std::chrono::seconds(31));
  Reconcile();
  EXPECT_EQ(Condition("Progressing"), "False ProgressDeadlineExceeded");
  // Once the pod is ready, it has progressed after all.
  RunAll();
  Reconcile();
  EXPECT_EQ(Condition("Progressing"), "True NewReplicaSetAvailable");
}

TEST(DeploymentValidationTest, RefusesWhatKubeApiserverRefuses) {
  struct Checked {
    std::string text;
    bool ok() const { return text.empty(); }
    std::string ToString() const { return text; }
  };
  auto check = [](const std::string& yaml) {
    auto docs = api::ParseManifests(yaml, "d.yaml");
    EXPECT_TRUE(docs.ok());
    Checked out;
    for (const FieldError& e : api::DecodeAndValidate((*docs)[0].value).result.errors) {
      out.text += e.ToString() + "\n";
    }
    return out;
  };
  std::string head = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n";
  Checked mismatch =
      check(head +
            "  selector: {matchLabels: {app: a}}\n  template:\n    metadata: {labels: {app: b}}\n"
            "    spec: {containers: [{name: c, image: i}]}\n");
  EXPECT_THAT(mismatch.ToString(),
              HasSubstr("spec.template.metadata.labels: Invalid value: "
                        "map[string]string{\"app\":\"b\"}: `selector` does not match template "
                        "`labels`"));
  Checked on_failure =
      check(head +
            "  selector: {matchLabels: {app: a}}\n  template:\n    metadata: {labels: {app: a}}\n"
            "    spec: {restartPolicy: OnFailure, containers: [{name: c, image: i}]}\n");
  EXPECT_THAT(on_failure.ToString(),
              HasSubstr("spec.template.spec.restartPolicy: Unsupported value: \"OnFailure\": "
                        "supported values: \"Always\""));
  Checked no_selector =
      check(head + "  template:\n    spec: {containers: [{name: c, image: i}]}\n");
  EXPECT_THAT(no_selector.ToString(), HasSubstr("spec.selector: Required value"));
  Checked no_values = check(head +
                            "  selector: {matchExpressions: [{key: app, operator: In}]}\n"
                            "  template:\n    metadata: {labels: {app: a}}\n"
                            "    spec: {containers: [{name: c, image: i}]}\n");
  EXPECT_THAT(no_values.ToString(),
              HasSubstr("spec.selector.matchExpressions[0].values: Required value"));
  Checked fine = check(head +
                       "  selector: {matchExpressions: [{key: app, operator: In, values: [a]}]}\n"
                       "  template:\n    metadata: {labels: {app: a}}\n"
                       "    spec: {containers: [{name: c, image: i}]}\n");
  EXPECT_TRUE(fine.ok()) << fine.ToString();
}

}  // namespace
}  // namespace trainyard::controller

namespace trainyard::controller {
namespace {

TEST(DeploymentValidationTest, ItsSelectorCannotChange) {
  auto decode = [](const std::string& app) {
    auto docs = api::ParseManifests(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n"
        "  selector: {matchLabels: {app: " +
            app + "}}\n  template:\n    metadata: {labels: {app: " + app +
            "}}\n    spec: {containers: [{name: c, image: i}]}\n",
        "d.yaml");
    return *api::DecodeAndValidate((*docs)[0].value).object;
  };
  FieldErrors errors = api::ValidateUpdate(decode("a"), decode("b"));
  ASSERT_THAT(errors, SizeIs(1));
  EXPECT_THAT(errors[0].ToString(), HasSubstr("spec.selector: Invalid value"));
  EXPECT_THAT(errors[0].ToString(), HasSubstr("field is immutable"));
  EXPECT_THAT(api::ValidateUpdate(decode("a"), decode("a")), ::testing::IsEmpty());
}

}  // namespace
}  // namespace trainyard::controller
