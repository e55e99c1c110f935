// The job lifecycle at the controller level: a fake clock, an in-memory
// store, and the test playing the node agent by writing pod statuses.
#include "controller/job_reconciler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/object.h"
#include "api/pod_object.h"
#include "api/tracking.h"
#include "api/yaml.h"
#include "controller/conditions.h"
#include "controller/owned.h"
#include "controller/pod_state.h"
#include "store/sqlite_store.h"

namespace trainyard::controller {
namespace {

using std::chrono::seconds;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

class JobReconcilerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = std::move(*store::SqliteStore::Open({.clock = &clock_}));
    reconciler_ = std::make_unique<JobReconciler>(JobReconcilerOptions{
        .store = store_.get(), .clock = &clock_, .replicas = {.ports = &ports_}});
  }
  // The reconciler as the operator runs it, on a cluster.
  void OnACluster() {
    reconciler_ = std::make_unique<JobReconciler>(
        JobReconcilerOptions{.store = store_.get(),
                             .clock = &clock_,
                             .replicas = {.ports = &ports_, .cluster = ReplicaOptions::Cluster{}}});
  }

  void Submit(const std::string& yaml) {
    auto docs = api::ParseManifests(yaml, "job.yaml");
    ASSERT_TRUE(docs.ok()) << docs.status().ToString();
    api::Json doc = (*docs)[0].value;
    doc["metadata"]["namespace"] = "default";
    key_ = *store::KeyOf(doc);
    ASSERT_TRUE(store_->Create(doc).ok());
  }

  ReconcileResult Reconcile() {
    Result<ReconcileResult> r = reconciler_->Reconcile(key_);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : ReconcileResult{};
  }

  api::TrainingJob Job() {
    return std::get<api::TrainingJob>(*api::DecodeObject(*store_->Get(key_)).object);
  }
  bool JobExists() { return store_->Get(key_).ok(); }

  std::vector<std::string> Pods() {
    std::vector<std::string> names;
    // Held in a variable: a range-for over a member of a temporary would
    // outlive it (until C++23).
    store::ObjectStore::ListResult pods = *store_->List("Pod", "default");
    for (const api::Json& p : pods.items) {
      names.push_back(p["metadata"]["name"]);
    }
    return names;
  }
  api::Pod Pod(const std::string& name) {
    return *api::DecodePod(*store_->Get({"Pod", "default", name}));
  }

  // The node agent's part: a pod's phase, exit code and restarts.
  void SetPod(const std::string& name, const std::string& phase, int exit_code = 0,
              int restarts = 0, bool waiting_to_restart = false) {
    api::Pod pod = Pod(name);
    pod.status.phase = phase;
    if (phase != "Pending" && pod.status.start_time.empty()) {
      pod.status.start_time = FormatRfc3339(clock_.Now());
    }
    api::ContainerStatus c;
    c.name = pod.spec.containers[0].name;
    c.restart_count = restarts;
    if (phase == "Succeeded" || phase == "Failed") {
      c.state.terminated = api::ContainerStateTerminated{.exit_code = exit_code};
    } else if (waiting_to_restart) {
      c.state.waiting = api::ContainerStateWaiting{.reason = std::string(api::kRestartWaitReason)};
      c.last_state.terminated = api::ContainerStateTerminated{.exit_code = exit_code};
    } else {
      c.state.running = api::ContainerStateRunning{.started_at = FormatRfc3339(clock_.Now())};
    }
    pod.status.container_statuses = {c};
    ASSERT_TRUE(store_->UpdateStatus(api::EncodePod(pod)).ok());
  }

  // The last condition: the job's state as `kubectl get` shows it.
  std::string State() {
    const auto& c = Job().status.conditions;
    return c.empty() ? "" : c.back().type;
  }
  std::string Message() { return Job().status.conditions.back().message; }

  FakeClock clock_;
  FakePortAllocator ports_;
  std::unique_ptr<store::SqliteStore> store_;
  std::unique_ptr<JobReconciler> reconciler_;
  store::ObjectKey key_;
};

constexpr const char* kPyTorch = R"(
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: mnist}
spec:
  runPolicy: {%s}
  pytorchReplicaSpecs:
    Master:
      restartPolicy: %s
      template: {spec: {containers: [{name: pytorch, image: i, command: [python3, train.py]}]}}
    Worker:
      replicas: 2
      restartPolicy: %s
      template: {spec: {containers: [{name: pytorch, image: i, command: [python3, train.py]}]}}
)";

std::string PyTorch(const char* run_policy = "", const char* master = "OnFailure",
                    const char* worker = "OnFailure") {
  char buf[2048];
  std::snprintf(buf, sizeof(buf), kPyTorch, run_policy, master, worker);
  return buf;
}

TEST_F(JobReconcilerTest, CreatesEveryReplicaWithItsPortAndEnv) {
  Submit(PyTorch());
  Reconcile();
  EXPECT_THAT(Pods(), ElementsAre("mnist-master-0", "mnist-worker-0", "mnist-worker-1"));
  EXPECT_EQ(State(), "Created");
  EXPECT_EQ(Message(), "PyTorchJob mnist is created.");
  api::TrainingJob job = Job();
  EXPECT_EQ(job.metadata.annotations.at(std::string(api::kPortsAnnotation)),
            R"({"Master-0":30000,"Worker-0":30001,"Worker-1":30002})");
  EXPECT_FALSE(job.status.start_time.empty());
  api::Pod worker = Pod("mnist-worker-1");
  EXPECT_EQ(worker.spec.containers[0].ports[0].container_port, 30002);
  bool has_master_port = false;
  for (const auto& e : worker.spec.containers[0].env)
    has_master_port |= e.name == "MASTER_PORT" && e.value == "30000";
  EXPECT_TRUE(has_master_port);
}

// On a cluster no webhook of ours may have checked a stored job: one that
// `trainyard validate` refuses gets an event with its errors, and nothing.
TEST_F(JobReconcilerTest, OnAClusterAnInvalidJobIsSaidAndNothingIsMade) {
  OnACluster();
  Submit(R"(
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: mnist}
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 2
      template: {spec: {containers: [{name: pytorch, image: i}]}}
)");
  Reconcile();
  EXPECT_THAT(Pods(), IsEmpty());
  std::vector<std::string> reasons;
  store::ObjectStore::ListResult events = *store_->List("Event", "default");
  for (const api::Json& e : events.items) {
    reasons.push_back(e.value("reason", "") + ": " + e.value("message", ""));
  }
  EXPECT_THAT(reasons, ElementsAre(::testing::HasSubstr(
                           "PyTorchJobFailedValidation: PyTorchJob mnist is invalid, so nothing is "
                           "made for it: spec.pytorchReplicaSpecs[Master].replicas: Forbidden")));
}

// On a cluster with no gang scheduler nothing reads schedulingPolicy: said.
TEST_F(JobReconcilerTest, OnAClusterWithoutAGangSchedulerTheSchedulingPolicyIsSaidIgnored) {
  OnACluster();
  Submit(PyTorch("schedulingPolicy: {minAvailable: 3}"));
  Reconcile();
  Reconcile();  // once, however often the job is looked at
  int warnings = 0;
  store::ObjectStore::ListResult events = *store_->List("Event", "default");
  for (const api::Json& e : events.items)
    warnings += e.value("reason", "") == "SchedulingPolicyIgnored";
  EXPECT_EQ(warnings, 1);
  EXPECT_EQ(Pods().size(), 3u);  // the pods are made all the same
}

TEST_F(JobReconcilerTest, ReconcilingAgainChangesNothing) {
  Submit(PyTorch());
  Reconcile();
  int64_t rv = store_->CurrentResourceVersion();
  Reconcile();
  EXPECT_EQ(store_->CurrentResourceVersion(), rv);
}

TEST_F(JobReconcilerTest, RunningThenSucceededStopsWhatStillRuns) {
  Submit(PyTorch());
  Reconcile();
  SetPod("mnist-master-0", "Running");
  SetPod("mnist-worker-0", "Running");
  SetPod("mnist-worker-1", "Running");
  Reconcile();
  EXPECT_EQ(State(), "Running");
  EXPECT_EQ(Job().status.replica_statuses.at("Worker").active, 2);
  SetPod("mnist-master-0", "Succeeded");
  SetPod("mnist-worker-0", "Succeeded");
  Reconcile();
  EXPECT_EQ(State(), "Succeeded");
  EXPECT_EQ(Message(), "PyTorchJob mnist is successfully completed.");
  EXPECT_FALSE(Job().status.completion_time.empty());
  // cleanPodPolicy None keeps every pod; the still-running worker is
  // stopped where it runs (upstream left it holding its resources).
  EXPECT_THAT(Pods(), ElementsAre("mnist-master-0", "mnist-worker-0", "mnist-worker-1"));
  EXPECT_TRUE(Pod("mnist-worker-1").spec.extra.contains("activeDeadlineSeconds"));
  EXPECT_FALSE(Pod("mnist-worker-0").spec.extra.contains("activeDeadlineSeconds"));
  api::TrainingJob job = Job();
  EXPECT_EQ(FindCondition(job.status.conditions, "Running")->status, "False");
}

// What kubectl describe shows: an event per pod made or removed and per
// condition reached; gone with the job.
TEST_F(JobReconcilerTest, RecordsEventsForPodsAndConditionsAndDropsThemWithTheJob) {
  Submit(PyTorch("", "Never"));
  Reconcile();
  SetPod("mnist-master-0", "Failed", 1);
  Reconcile();
  std::vector<std::string> events;
  store::ObjectStore::ListResult listed = *store_->List("Event", "default");
  for (const api::Json& e : listed.items) {
    EXPECT_EQ(e["involvedObject"]["kind"], "PyTorchJob");
    EXPECT_EQ(e["involvedObject"]["uid"], Job().metadata.uid);
    events.push_back(e["type"].get<std::string>() + " " + e["reason"].get<std::string>() + ": " +
                     e["message"].get<std::string>());
  }
  EXPECT_THAT(events, ::testing::IsSupersetOf(
                          {"Normal SuccessfulCreatePod: Created pod: mnist-master-0",
                           "Normal SuccessfulCreatePod: Created pod: mnist-worker-1",
                           "Normal PyTorchJobCreated: PyTorchJob mnist is created.",
                           "Warning PyTorchJobFailed: PyTorchJob mnist is failed because 1 "
                           "Master replica(s) failed (last failure: pod mnist-master-0, "
                           "container pytorch, exit code 1).",
                           "Normal SuccessfulDeletePod: Deleted pod: mnist-worker-0"}));
  ASSERT_TRUE(store_->Delete(key_).ok());
  Reconcile();
  EXPECT_TRUE(store_->List("Event", "default")->items.empty());
}

TEST_F(JobReconcilerTest, AFinishedJobGivesItsPortsBack) {
  Submit(PyTorch());
  Reconcile();
  EXPECT_THAT(ports_.released(), IsEmpty());
  SetPod("mnist-master-0", "Succeeded");
  Reconcile();
  EXPECT_THAT(ports_.released(), ElementsAre(30000, 30001, 30002));
}

TEST_F(JobReconcilerTest, AJobDeletedWhileItRunsGivesItsPortsBack) {
  Submit(PyTorch());
  Reconcile();
  ASSERT_TRUE(store_->Delete(key_).ok());
  Reconcile();
  EXPECT_THAT(ports_.released(), ElementsAre(30000, 30001, 30002));
}

TEST_F(JobReconcilerTest, CleanPodPolicyAllRemovesEveryPod) {
  Submit(PyTorch("cleanPodPolicy: All"));
  Reconcile();
  SetPod("mnist-master-0", "Succeeded");
  Reconcile();
  EXPECT_EQ(State(), "Succeeded");
  EXPECT_THAT(Pods(), IsEmpty());
}

TEST_F(JobReconcilerTest, NeverFailsTheJobAndStopsTheRest) {
  Submit(PyTorch("", "OnFailure", "Never"));
  Reconcile();
  SetPod("mnist-master-0", "Running");
  SetPod("mnist-worker-0", "Running");
  SetPod("mnist-worker-1", "Failed", 1);
  Reconcile();
  EXPECT_EQ(State(), "Failed");
  EXPECT_EQ(Message(),
            "PyTorchJob mnist is failed because 1 Worker replica(s) failed (last failure: pod "
            "mnist-worker-1, container pytorch, exit code 1).");
  // Kept, the master and the other worker stopped where they run.
  EXPECT_THAT(Pods(), ElementsAre("mnist-master-0", "mnist-worker-0", "mnist-worker-1"));
  EXPECT_TRUE(Pod("mnist-master-0").spec.extra.contains("activeDeadlineSeconds"));
  EXPECT_EQ(Job().status.replica_statuses.at("Worker").failed, 1);
}

TEST_F(JobReconcilerTest, ExitCodeRetriesSignalsAndFailsOnProgramErrors) {
  Submit(PyTorch("", "ExitCode", "ExitCode"));
  Reconcile();
  std::string uid = Pod("mnist-worker-0").metadata.uid;
  SetPod("mnist-worker-0", "Failed", 137);  // killed: retryable
  Reconcile();
  api::Pod again = Pod("mnist-worker-0");
  EXPECT_NE(again.metadata.uid, uid);  // a new pod
  EXPECT_EQ(again.metadata.annotations.at(std::string(api::kRecreationsAnnotation)), "1");
  EXPECT_EQ(again.spec.containers[0].ports[0].container_port, 30001);  // same port
  SetPod("mnist-worker-0", "Failed", 1);                               // its own verdict: permanent
  Reconcile();
  EXPECT_EQ(State(), "Failed");
}

TEST_F(JobReconcilerTest, BackoffLimitCountsEveryRestartIncludingThePendingOne) {
  Submit(PyTorch("backoffLimit: 2"));
  Reconcile();
  SetPod("mnist-master-0", "Running", 1, /*restarts=*/1);
  SetPod("mnist-worker-0", "Running", 1, /*restarts=*/0, /*waiting_to_restart=*/true);
  Reconcile();
  EXPECT_EQ(State(), "Restarting");  // two failures: within the limit
  EXPECT_EQ(Message(), "PyTorchJob mnist is restarting because 1 Worker replica(s) failed.");
  SetPod("mnist-worker-1", "Running", 1, /*restarts=*/0, /*waiting_to_restart=*/true);
  Reconcile();
  EXPECT_EQ(State(), "Failed");
  EXPECT_EQ(Message(),
            "Job mnist has failed because it has reached the specified backoff limit (last "
            "failure: pod mnist-worker-1, container pytorch, exit code 1)");
  // All three were still active: cleanPodPolicy None keeps them, for their
  // state and logs, each stopped where it runs by a deadline of what it
  // has run (the node agent, or a kubelet, ends it DeadlineExceeded).
  ASSERT_EQ(Pods().size(), 3u);
  for (const std::string& name : Pods()) {
    EXPECT_EQ(Pod(name).spec.extra.value("activeDeadlineSeconds", 0), 1) << name;
  }
}

TEST_F(JobReconcilerTest, ABackedOffJobUnderCleanPodPolicyAllKeepsNoPod) {
  Submit(PyTorch("backoffLimit: 0, cleanPodPolicy: All"));
  Reconcile();
  SetPod("mnist-worker-0", "Running", 1, /*restarts=*/0, /*waiting_to_restart=*/true);
  Reconcile();
  EXPECT_EQ(State(), "Failed");
  EXPECT_THAT(Pods(), IsEmpty());
}

TEST_F(JobReconcilerTest, BackoffLimitCountsExitCodeRecreations) {
  Submit(PyTorch("backoffLimit: 1", "ExitCode", "ExitCode"));
  Reconcile();
  SetPod("mnist-worker-0", "Failed", 143);
  Reconcile();  // re-created: one restart
  EXPECT_NE(State(), "Failed");
  SetPod("mnist-worker-0", "Failed", 143);
  Reconcile();  // a second retry would exceed the limit
  EXPECT_EQ(State(), "Failed");
}

TEST_F(JobReconcilerTest, ActiveDeadlineIsATimerNotAnAccident) {
  Submit(PyTorch("activeDeadlineSeconds: 100"));
  ReconcileResult r = Reconcile();
  ASSERT_TRUE(r.requeue_after.has_value());
  EXPECT_EQ(*r.requeue_after, seconds(100));
  clock_.Advance(seconds(40));
  EXPECT_EQ(*Reconcile().requeue_after, seconds(60));
  clock_.Advance(seconds(60));
  Reconcile();
  EXPECT_EQ(State(), "Failed");
  EXPECT_EQ(Message(), "Job mnist has failed because it was active longer than specified deadline");
  EXPECT_THAT(Pods(), IsEmpty());
}

TEST_F(JobReconcilerTest, TtlDeletesTheFinishedJobOnTime) {
  Submit(PyTorch("ttlSecondsAfterFinished: 60"));
  Reconcile();
  SetPod("mnist-master-0", "Succeeded");
  ReconcileResult r = Reconcile();
  EXPECT_EQ(State(), "Succeeded");
  ASSERT_TRUE(r.requeue_after.has_value());
  EXPECT_EQ(*r.requeue_after, seconds(60));
  clock_.Advance(seconds(59));
  Reconcile();
  EXPECT_TRUE(JobExists());
  clock_.Advance(seconds(1));
  Reconcile();
  EXPECT_FALSE(JobExists());
  EXPECT_THAT(Pods(), IsEmpty());
}

TEST_F(JobReconcilerTest, SuspendStopsEverythingAndResumeStartsAgain) {
  Submit(PyTorch("activeDeadlineSeconds: 100"));
  Reconcile();
  SetPod("mnist-master-0", "Running");
  Reconcile();
  api::Json stored = *store_->Get(key_);
  stored["spec"]["runPolicy"]["suspend"] = true;
  ASSERT_TRUE(store_->Update(stored).ok());
  EXPECT_FALSE(Reconcile().requeue_after.has_value());  // no deadline while suspended
  EXPECT_THAT(Pods(), IsEmpty());
  EXPECT_EQ(State(), "Suspended");
  EXPECT_EQ(FindCondition(Job().status.conditions, "Running")->status, "False");

  clock_.Advance(seconds(500));
  stored = *store_->Get(key_);
  stored["spec"]["runPolicy"]["suspend"] = false;
  ASSERT_TRUE(store_->Update(stored).ok());
  ReconcileResult r = Reconcile();
  EXPECT_EQ(Pods().size(), 3u);
  api::TrainingJob job = Job();
  const api::JobCondition* suspended = FindCondition(job.status.conditions, "Suspended");
  EXPECT_EQ(suspended->status, "False");
  EXPECT_EQ(suspended->reason, "PyTorchJobResumed");
  bool recorded = false;  // `kubectl describe` tells of the resume, as upstream's events do
  store::ObjectStore::ListResult events = *store_->List("Event", "default");
  for (const api::Json& e : events.items) {
    recorded = recorded || (e["reason"] == "PyTorchJobResumed" &&
                            e["message"] == "PyTorchJob mnist is resumed.");
  }
  EXPECT_TRUE(recorded);
  EXPECT_EQ(job.status.start_time, FormatRfc3339(clock_.Now()));  // the deadline restarts
  EXPECT_EQ(*r.requeue_after, seconds(100));
}

// The garbage collector, as the engine runs it for a deleted job: its pods
// go by its uid, a new job of the same name keeps its own.
TEST_F(JobReconcilerTest, DeletingTheJobDeletesItsPodsByItsUid) {
  Submit(PyTorch());
  Reconcile();
  // Its MLflow run's record (server/mlflow_api.h), a kind no API serves.
  std::string old_uid = (*store_->Get(key_))["metadata"]["uid"];
  ASSERT_TRUE(store_
                  ->Create({{"apiVersion", "trainyard.dev/v1"},
                            {"kind", api::kTrackingRunKind},
                            {"metadata",
                             {{"name", "pytorchjob-x"},
                              {"namespace", "default"},
                              {"ownerReferences", {{{"kind", "PyTorchJob"}, {"uid", old_uid}}}}}}})
                  .ok());
  Result<api::Json> deleted = store_->Delete(key_);
  ASSERT_TRUE(deleted.ok());
  Submit(PyTorch());  // made again at once, before the old one's pods are gone
  // The engine collects before it reconciles: the new job's pods take the
  // old ones' names.
  ASSERT_TRUE(DeleteDependents(*store_, (*deleted)["metadata"]["uid"]).ok());
  Reconcile();
  std::string uid = (*store_->Get(key_))["metadata"]["uid"];
  EXPECT_THAT(Pods(), ::testing::Not(IsEmpty()));
  std::vector<api::Json> pods = store_->List("Pod", "default")->items;
  for (const api::Json& pod : pods) {
    EXPECT_EQ(pod["metadata"]["ownerReferences"][0]["uid"], uid);
  }
  EXPECT_EQ(Reconcile().requeue_after, std::nullopt);
  EXPECT_FALSE(store_->Get({std::string(api::kTrackingRunKind), "default", "pytorchjob-x"}).ok());
}

TEST_F(JobReconcilerTest, ScalingDownRemovesExtraReplicas) {
  Submit(PyTorch());
  Reconcile();
  api::Json stored = *store_->Get(key_);
  stored["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] = 1;
  ASSERT_TRUE(store_->Update(stored).ok());
  Reconcile();
  EXPECT_THAT(Pods(), ElementsAre("mnist-master-0", "mnist-worker-0"));
}

TEST_F(JobReconcilerTest, JobsManagedElsewhereAreLeftAlone) {
  Submit(PyTorch("managedBy: kueue.x-k8s.io/multikueue"));
  Reconcile();
  EXPECT_THAT(Pods(), IsEmpty());
  EXPECT_TRUE(Job().status.conditions.empty());
}

// An MPIJob's /etc/mpi, as upstream's: ConfigMap <job>-config with the
// hostfile and the rsh agent, mounted by launcher and workers, named by the
// launcher's env; kept in step with the workers; gone with the job.
TEST_F(JobReconcilerTest, MpiJobGetsItsConfigMapMountedAtEtcMpi) {
  Submit(R"(
apiVersion: kubeflow.org/v1
kind: MPIJob
metadata: {name: m}
spec:
  slotsPerWorker: 2
  mpiReplicaSpecs:
    Launcher: {template: {spec: {containers: [{name: mpi, image: i, command: [mpirun]}]}}}
    Worker: {replicas: 2, template: {spec: {containers: [{name: mpi, image: i}]}}}
)");
  Reconcile();
  Result<api::Json> map = store_->Get({"ConfigMap", "default", "m-config"});
  ASSERT_TRUE(map.ok());
  EXPECT_EQ((*map)["data"]["hostfile"], "m-worker-0 slots=2\nm-worker-1 slots=2\n");
  EXPECT_THAT((*map)["data"]["kubexec.sh"].get<std::string>(),
              ::testing::HasSubstr("exec kubectl exec -n 'default' \"$POD_NAME\" -- /bin/sh -c"));
  EXPECT_EQ((*map)["metadata"]["ownerReferences"][0]["name"], "m");

  // The launcher comes once every worker runs, as upstream's init container waits.
  EXPECT_THAT(Pods(), ElementsAre("m-worker-0", "m-worker-1"));
  SetPod("m-worker-0", "Running");
  Reconcile();
  EXPECT_THAT(Pods(), ElementsAre("m-worker-0", "m-worker-1"));
  SetPod("m-worker-1", "Running");
  Reconcile();
  api::Pod launcher = Pod("m-launcher");
  const api::Container& c = launcher.spec.containers.at(0);
  ASSERT_EQ(c.volume_mounts.size(), 1u);
  EXPECT_EQ(c.volume_mounts[0].mount_path, "/etc/mpi");
  ASSERT_EQ(launcher.spec.volumes.size(), 1u);
  EXPECT_EQ(launcher.spec.volumes[0].config_map->name, "m-config");
  EXPECT_EQ(launcher.spec.volumes[0].config_map->items.size(), 3u);
  std::map<std::string, std::string> env;
  for (const api::EnvVar& v : c.env) env[v.name] = v.value.value_or("");
  EXPECT_EQ(env["OMPI_MCA_plm_rsh_agent"], "/etc/mpi/kubexec.sh");
  EXPECT_EQ(env["OMPI_MCA_orte_default_hostfile"], "/etc/mpi/hostfile");
  api::Pod worker = Pod("m-worker-1");
  ASSERT_EQ(worker.spec.volumes.size(), 1u);
  EXPECT_EQ(worker.spec.volumes[0].config_map->items.size(), 1u) << "workers get the agent only";

  api::Json job = *store_->Get(key_);
  job["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] = 1;
  ASSERT_TRUE(store_->Update(job).ok());
  Reconcile();
  EXPECT_EQ((*store_->Get({"ConfigMap", "default", "m-config"}))["data"]["hostfile"],
            "m-worker-0 slots=2\n");

  // Deleted, its config and pods go by its uid (the engine's garbage
  // collector).
  Result<api::Json> deleted = store_->Delete(key_);
  ASSERT_TRUE(deleted.ok());
  ASSERT_TRUE(DeleteDependents(*store_, (*deleted)["metadata"]["uid"]).ok());
  Reconcile();
  EXPECT_EQ(store_->Get({"ConfigMap", "default", "m-config"}).status().code(),
            StatusCode::kNotFound);
  EXPECT_THAT(Pods(), IsEmpty());
}

}  // namespace
}  // namespace trainyard::controller
