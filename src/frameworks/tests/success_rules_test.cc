// Success and failure rules per framework (reference section 5.5), on
// replica states as the engine reports them.
#include <gtest/gtest.h>

#include "frameworks/tests/frameworks_test_util.h"

namespace trainyard::frameworks {
namespace {

using testing::Job;
using P = ReplicaPhase;

Verdict Evaluate(const api::TrainingJob& job, ReplicaStates states) {
  return FrameworkFor(job.kind).Evaluate(job, states);
}

ReplicaState S(P phase, int exit_code = 0) { return {phase, exit_code}; }

const api::TrainingJob& PyTorchJob() {
  static const api::TrainingJob job = Job(R"(
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: mnist, namespace: ml}
spec:
  pytorchReplicaSpecs:
    Master: {template: {spec: {containers: [{name: pytorch, image: i}]}}}
    Worker: {replicas: 2, restartPolicy: Never, template: {spec: {containers: [{name: pytorch, image: i}]}}}
)");
  return job;
}

TEST(PyTorchRulesTest, CreatedRunningSucceeded) {
  const api::TrainingJob& job = PyTorchJob();
  Verdict v = Evaluate(job, {});
  EXPECT_EQ(v.phase, JobPhase::kCreated);
  EXPECT_EQ(v.reason, "PyTorchJobCreated");
  EXPECT_EQ(v.message, "PyTorchJob mnist is created.");
  v = Evaluate(job, {{{"Master", 0}, S(P::kRunning)}});
  EXPECT_EQ(v.phase, JobPhase::kRunning);
  EXPECT_EQ(v.message, "PyTorchJob mnist is running.");
  // The master decides, even while workers still run; the engine then stops
  // them (upstream leaves them holding resources, issue #1982).
  v = Evaluate(job, {{{"Master", 0}, S(P::kSucceeded)}, {{"Worker", 0}, S(P::kRunning)}});
  EXPECT_EQ(v.phase, JobPhase::kSucceeded);
  EXPECT_EQ(v.reason, "PyTorchJobSucceeded");
  EXPECT_EQ(v.message, "PyTorchJob mnist is successfully completed.");
}

TEST(PyTorchRulesTest, FailedAndRestarting) {
  const api::TrainingJob& job = PyTorchJob();
  Verdict v = Evaluate(job, {{{"Master", 0}, S(P::kRunning)}, {{"Worker", 1}, S(P::kFailed, 1)}});
  EXPECT_EQ(v.phase, JobPhase::kFailed);
  EXPECT_EQ(v.reason, "PyTorchJobFailed");
  EXPECT_EQ(v.message, "PyTorchJob mnist is failed because 1 Worker replica(s) failed.");
  v = Evaluate(job, {{{"Master", 0}, S(P::kRestarting, 137)}, {{"Worker", 0}, S(P::kRunning)}});
  EXPECT_EQ(v.phase, JobPhase::kRestarting);
  EXPECT_EQ(v.message, "PyTorchJob mnist is restarting because 1 Master replica(s) failed.");
}

TEST(PyTorchRulesTest, WorkerOnlyAndElastic) {
  api::TrainingJob plain = Job(R"(
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: w, namespace: ml}
spec:
  pytorchReplicaSpecs:
    Worker: {replicas: 2, template: {spec: {containers: [{name: pytorch, image: i}]}}}
)");
  ReplicaStates one_done = {{{"Worker", 0}, S(P::kSucceeded)}, {{"Worker", 1}, S(P::kRunning)}};
  EXPECT_EQ(Evaluate(plain, one_done).phase, JobPhase::kRunning);
  Verdict all =
      Evaluate(plain, {{{"Worker", 0}, S(P::kSucceeded)}, {{"Worker", 1}, S(P::kSucceeded)}});
  EXPECT_EQ(all.phase, JobPhase::kSucceeded);
  EXPECT_EQ(all.message, "PyTorchJob ml/w successfully completed.");
  api::TrainingJob elastic = plain;
  elastic.spec.elastic_policy.emplace();
  EXPECT_EQ(Evaluate(elastic, one_done).phase, JobPhase::kSucceeded);
}

const char* kTf = R"(
apiVersion: kubeflow.org/v1
kind: TFJob
metadata: {name: tf, namespace: ns}
spec:
  %s
  tfReplicaSpecs:
    PS: {template: {spec: {containers: [{name: tensorflow, image: i}]}}}
    Worker: {replicas: 2, template: {spec: {containers: [{name: tensorflow, image: i}]}}}
)";

api::TrainingJob Tf(const char* extra) {
  char buf[2048];
  std::snprintf(buf, sizeof(buf), kTf, extra);
  return Job(buf);
}

TEST(TensorFlowRulesTest, WorkerZeroFinishesTheJobUnlessAllWorkers) {
  ReplicaStates states = {{{"PS", 0}, S(P::kRunning)},
                          {{"Worker", 0}, S(P::kSucceeded)},
                          {{"Worker", 1}, S(P::kRunning)}};
  Verdict v = Evaluate(Tf(""), states);
  EXPECT_EQ(v.phase, JobPhase::kSucceeded);
  EXPECT_EQ(v.message, "TFJob ns/tf successfully completed.");
  EXPECT_EQ(Evaluate(Tf("successPolicy: AllWorkers"), states).phase, JobPhase::kRunning);
}

TEST(TensorFlowRulesTest, FailureMessageAndDynamicWorkers) {
  ReplicaStates states = {{{"PS", 0}, S(P::kRunning)}, {{"Worker", 1}, S(P::kFailed, 2)}};
  Verdict v = Evaluate(Tf(""), states);
  EXPECT_EQ(v.phase, JobPhase::kFailed);
  EXPECT_EQ(v.message, "TFJob ns/tf has failed because 1 Worker replica(s) failed.");
  EXPECT_EQ(Evaluate(Tf("enableDynamicWorker: true"), states).phase, JobPhase::kRunning);
}

TEST(MpiRulesTest, TheLauncherDecides) {
  api::TrainingJob job = Job(R"(
apiVersion: kubeflow.org/v1
kind: MPIJob
metadata: {name: m, namespace: ns}
spec:
  mpiReplicaSpecs:
    Launcher: {template: {spec: {containers: [{name: mpi, image: i}]}}}
    Worker: {replicas: 2, template: {spec: {containers: [{name: mpi, image: i}]}}}
)");
  Verdict v = Evaluate(job, {{{"Launcher", 0}, S(P::kSucceeded)}, {{"Worker", 0}, S(P::kRunning)}});
  EXPECT_EQ(v.phase, JobPhase::kSucceeded);
  EXPECT_EQ(v.message, "MPIJob ns/m successfully completed.");
  EXPECT_EQ(Evaluate(job, {{{"Launcher", 0}, S(P::kFailed, 1)}}).phase, JobPhase::kFailed);
}

TEST(OtherRulesTest, XGBoostMasterPaddleAndJaxWorkers) {
  api::TrainingJob xgb = Job(R"(
apiVersion: kubeflow.org/v1
kind: XGBoostJob
metadata: {name: x}
spec:
  xgbReplicaSpecs:
    Master: {template: {spec: {containers: [{name: xgboost, image: i}]}}}
    Worker: {template: {spec: {containers: [{name: xgboost, image: i}]}}}
)");
  EXPECT_EQ(Evaluate(xgb, {{{"Master", 0}, S(P::kSucceeded)}}).phase, JobPhase::kSucceeded);
  EXPECT_EQ(Evaluate(xgb, {{{"Worker", 0}, S(P::kSucceeded)}}).phase, JobPhase::kCreated);
  api::TrainingJob jax = Job(R"(
apiVersion: kubeflow.org/v1
kind: JAXJob
metadata: {name: j}
spec:
  jaxReplicaSpecs:
    Worker: {replicas: 2, template: {spec: {containers: [{name: jax, image: i}]}}}
)");
  EXPECT_EQ(Evaluate(jax, {{{"Worker", 0}, S(P::kSucceeded)}}).phase, JobPhase::kCreated);
  Verdict done =
      Evaluate(jax, {{{"Worker", 0}, S(P::kSucceeded)}, {{"Worker", 1}, S(P::kSucceeded)}});
  EXPECT_EQ(done.phase, JobPhase::kSucceeded);
  EXPECT_EQ(done.message, "JAXJob j is successfully completed.");
}

TEST(MasterRoleTest, AsUpstreamLabelsIt) {
  const api::TrainingJob& job = PyTorchJob();
  const Framework& f = FrameworkFor(job.kind);
  EXPECT_TRUE(f.IsMasterRole(job, {"Master", 0}));
  EXPECT_FALSE(f.IsMasterRole(job, {"Worker", 0}));
  EXPECT_TRUE(FrameworkFor(api::JobKind::kTFJob).IsMasterRole(Tf(""), {"Worker", 0}));
  EXPECT_FALSE(FrameworkFor(api::JobKind::kTFJob).IsMasterRole(Tf(""), {"PS", 0}));
}

}  // namespace
}  // namespace trainyard::frameworks
