// The job a trial runs, as the trial controller builds it: the trial's name
// for every collector, where a Push trial pushes, and the volume File and
// TensorFlowEvent collectors read from.
#include "controller/trial_reconciler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/object.h"
#include "api/yaml.h"
#include "store/sqlite_store.h"

namespace trainyard::controller {
namespace {

using ::testing::Contains;

class TrialJobTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = std::move(*store::SqliteStore::Open({.clock = &clock_}));
    reconciler_ =
        std::make_unique<TrialReconciler>(TrialReconcilerOptions{.store = store_.get(),
                                                                 .observations = store_.get(),
                                                                 .clock = &clock_,
                                                                 .metrics_dir = "/state/metrics"});
  }

  // Creates trial t with `collector` (YAML), reconciles it once, and
  // returns the primary container and the pod template of its job.
  std::pair<api::Json, api::Json> JobOf(const std::string& collector) {
    std::string yaml = R"(apiVersion: kubeflow.org/v1beta1
kind: Trial
metadata: {name: t, namespace: default}
spec:
  objective: {type: minimize, objectiveMetricName: loss}
  primaryContainerName: main
  metricsCollector: )" +
                       collector + R"(
  runSpec:
    apiVersion: batch/v1
    kind: Job
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{name: main, image: i, command: [run]}, {name: other, image: i}]
)";
    auto docs = api::ParseManifests(yaml, "trial.yaml");
    EXPECT_TRUE(docs.ok()) << docs.status().ToString();
    Result<api::Json> trial = store_->Create((*docs)[0].value);
    EXPECT_TRUE(trial.ok()) << trial.status().ToString();
    uid_ = (*trial)["metadata"]["uid"];
    Result<ReconcileResult> r = reconciler_->Reconcile({"Trial", "default", "t"});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    api::Json job = *store_->Get({"Job", "default", "t"});
    api::Json pod = job["spec"]["template"];
    return {pod["spec"]["containers"][0], pod};
  }
  MetricsFile StoredFile() {
    api::DecodeResult decoded = api::DecodeObject(*store_->Get({"Trial", "default", "t"}));
    return MetricsFileOf(std::get<api::Trial>(*decoded.object), "/state/metrics");
  }
  static std::map<std::string, std::string> Env(const api::Json& container) {
    std::map<std::string, std::string> env;
    for (const api::Json& e : container.value("env", api::Json::array()))
      env[e["name"]] = e["value"];
    return env;
  }

  FakeClock clock_;
  std::unique_ptr<store::SqliteStore> store_;
  std::unique_ptr<TrialReconciler> reconciler_;
  std::string uid_;
};

TEST_F(TrialJobTest, EveryTrialIsToldItsName) {
  auto [main, pod] = JobOf("{collector: {kind: StdOut}}");
  EXPECT_EQ(Env(main), (std::map<std::string, std::string>{{"KATIB_TRIAL_NAME", "t"}}));
  EXPECT_FALSE(pod["spec"].contains("volumes"));
  EXPECT_FALSE(pod["spec"]["containers"][1].contains("env"));  // only the primary container
}

// A TrainJob's trainer env is a list keyed by name on a cluster: a
// template that sets the trial's variable itself gets the trial's value in
// its place, not a duplicate the API server would refuse.
TEST_F(TrialJobTest, ATrainJobTrialsVariableReplacesOneOfItsNameInTheTemplate) {
  auto docs = api::ParseManifests(R"(apiVersion: kubeflow.org/v1beta1
kind: Trial
metadata: {name: t, namespace: default}
spec:
  objective: {type: minimize, objectiveMetricName: loss}
  primaryContainerName: node
  metricsCollector: {collector: {kind: StdOut}}
  runSpec:
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    spec:
      runtimeRef: {name: torch-distributed}
      trainer:
        env: [{name: KATIB_TRIAL_NAME, value: template}, {name: LR, value: "0.1"}]
)",
                                  "trial.yaml");
  ASSERT_TRUE(docs.ok()) << docs.status().ToString();
  ASSERT_TRUE(store_->Create((*docs)[0].value).ok());
  ASSERT_TRUE(reconciler_->Reconcile({"Trial", "default", "t"}).ok());
  api::Json job = *store_->Get({"TrainJob", "default", "t"});
  EXPECT_EQ(job["spec"]["trainer"]["env"],
            api::Json::parse(R"([{"name": "KATIB_TRIAL_NAME", "value": "t"},
                                 {"name": "LR", "value": "0.1"}])"));
}

TEST_F(TrialJobTest, APushTrialIsToldWhereToPushAndWithWhatToken) {
  reconciler_->SetApi("https://127.0.0.1:8443", "/etc/trainyard/tls.crt");
  auto [main, pod] = JobOf("{collector: {kind: Push}}");
  EXPECT_EQ(Env(main),
            (std::map<std::string, std::string>{
                {"KATIB_TRIAL_NAME", "t"},
                {"TRAINYARD_METRICS_URL",
                 "https://127.0.0.1:8443/apis/kubeflow.org/v1beta1/namespaces/default/trials/t/"
                 "observations"},
                {"TRAINYARD_METRICS_TOKEN", uid_},
                {"TRAINYARD_METRICS_CA", "/etc/trainyard/tls.crt"}}));
}

TEST_F(TrialJobTest, APushTrialWithNothingServingTheApiIsToldNothingMore) {
  auto [main, pod] = JobOf("{collector: {kind: Push}}");
  EXPECT_EQ(Env(main).size(), 1u);
}

TEST_F(TrialJobTest, FileAndEventCollectorsGetAVolumeWhereTheyWrite) {
  auto [file_main, file_pod] = JobOf(
      "{collector: {kind: File}, source: {fileSystemPath: {path: /katib/m.log, kind: File}}}");
  EXPECT_THAT(file_main["volumeMounts"],
              Contains(api::Json{{"name", "metrics-volume"}, {"mountPath", "/katib"}}));
  EXPECT_EQ(file_pod["spec"]["volumes"][0]["hostPath"]["path"], "/state/metrics/default/t");
  EXPECT_EQ(StoredFile().host_path, "/state/metrics/default/t/m.log");
}

TEST_F(TrialJobTest, AnEventDirectoryIsReadWhereItsParentIsMounted) {
  auto [main, pod] = JobOf(
      "{collector: {kind: TensorFlowEvent}, source: {fileSystemPath: {path: /logs/test/, kind: "
      "Directory}}}");
  EXPECT_THAT(main["volumeMounts"],
              Contains(api::Json{{"name", "metrics-volume"}, {"mountPath", "/logs"}}));
  EXPECT_EQ(pod["spec"]["volumes"][0]["hostPath"]["path"], "/state/metrics/default/t");
  EXPECT_FALSE(pod["spec"]["containers"][1].contains("volumeMounts"));
  EXPECT_EQ(StoredFile().container_path, "/logs/test");
  EXPECT_EQ(StoredFile().host_path, "/state/metrics/default/t/test");
}

// On a cluster the end of a pod's log is read after the pod has ended: the
// trial waits for it rather than conclude from its job without its last
// values (and delete the job, which would end the read).
TEST_F(TrialJobTest, ATrialWaitsWhileItsOutputIsStillBeingRead) {
  bool reading = true;
  reconciler_ = std::make_unique<TrialReconciler>(
      TrialReconcilerOptions{.store = store_.get(),
                             .observations = store_.get(),
                             .clock = &clock_,
                             .read_output = [&](const api::Trial&, bool) -> Result<OutputRead> {
                               return OutputRead{.reading = reading};
                             }});
  JobOf("{collector: {kind: StdOut}}");
  api::Json stored = *store_->Get({"Trial", "default", "t"});
  stored["spec"]["successCondition"] =
      R"(status.conditions.#(type=="Complete")#|#(status=="True")#)";
  ASSERT_TRUE(store_->Update(stored).ok());
  api::Json job = *store_->Get({"Job", "default", "t"});
  job["status"] = {{"conditions", {{{"type", "Complete"}, {"status", "True"}}}}};
  ASSERT_TRUE(store_->UpdateStatus(job).ok());
  ASSERT_TRUE(store_
                  ->AppendObservations("default/t",
                                       {{.time_us = 1, .metric = "loss", .value = "0.5"}}, "", 0)
                  .ok());
  auto condition = [&](const char* type) {
    api::Json trial = *store_->Get({"Trial", "default", "t"});
    for (const api::Json& c : trial["status"].value("conditions", api::Json::array())) {
      if (c["type"] == type) return c.value("status", "");
    }
    return std::string();
  };
  ASSERT_TRUE(reconciler_->Reconcile({"Trial", "default", "t"}).ok());
  EXPECT_EQ(condition("Succeeded"), "");
  api::Json trial = *store_->Get({"Trial", "default", "t"});
  EXPECT_EQ(trial["status"]["observation"]["metrics"][0]["latest"], "0.5") << "shown as it comes";
  EXPECT_TRUE(store_->Get({"Job", "default", "t"}).ok());
  reading = false;
  ASSERT_TRUE(reconciler_->Reconcile({"Trial", "default", "t"}).ok());
  EXPECT_EQ(condition("Succeeded"), "True");
}

}  // namespace
}  // namespace trainyard::controller
