// Defaulting, case by case against upstream v1.9's rules (pkg/apis/kubeflow.org/v1/*_defaults.go
// as described in shared/reference/kubeflow-training.md section 2).
#include "api/defaults.h"

#include <gtest/gtest.h>

#include "api/tests/test_util.h"

namespace trainyard::api {
namespace {

using testing::DecodeOk;

TrainingJob Defaulted(const std::string& yaml) {
  Object object = DecodeOk(yaml);
  SetDefaults(object);
  return std::get<TrainingJob>(object);
}

const ContainerPort* FindPort(const Container& c, const std::string& name) {
  for (const ContainerPort& p : c.ports) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

TEST(DefaultsTest, PyTorchReplicasRestartPolicyPortCleanPodPolicyNproc) {
  TrainingJob job = Defaulted(R"(
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: x}
spec:
  pytorchReplicaSpecs:
    master: {template: {spec: {containers: [{name: pytorch, image: i}]}}}
    WORKER:
      replicas: 3
      template: {spec: {containers: [{name: sidecar, image: s}, {name: pytorch, image: i}]}}
)");
  ASSERT_TRUE(job.spec.replica_specs.contains("Master"));  // case-normalised
  ASSERT_TRUE(job.spec.replica_specs.contains("Worker"));
  const ReplicaSpec& master = job.spec.replica_specs.at("Master");
  EXPECT_EQ(master.replicas, 1);
  EXPECT_EQ(master.restart_policy, "OnFailure");
  const ContainerPort* port = FindPort(master.template_.spec.containers[0], "pytorchjob-port");
  ASSERT_NE(port, nullptr);
  EXPECT_EQ(port->container_port, 23456);
  const ReplicaSpec& worker = job.spec.replica_specs.at("Worker");
  EXPECT_EQ(worker.replicas, 3);
  // The port goes on the container named pytorch, not on the first one.
  EXPECT_TRUE(worker.template_.spec.containers[0].ports.empty());
  EXPECT_NE(FindPort(worker.template_.spec.containers[1], "pytorchjob-port"), nullptr);
  EXPECT_EQ(job.spec.run_policy->clean_pod_policy, "None");
  EXPECT_EQ(job.spec.run_policy->suspend, false);
  EXPECT_EQ(job.spec.nproc_per_node, "auto");
  EXPECT_FALSE(job.spec.elastic_policy.has_value());
}

TEST(DefaultsTest, PortFallsBackToFirstContainerAndKeepsExistingPort) {
  TrainingJob job = Defaulted(R"(
apiVersion: kubeflow.org/v1
kind: TFJob
metadata: {name: x}
spec:
  runPolicy: {cleanPodPolicy: All}
  tfReplicaSpecs:
    ps: {template: {spec: {containers: [{name: other, image: i}]}}}
    Worker:
      template:
        spec:
          containers: [{name: tensorflow, image: i, ports: [{name: tfjob-port, containerPort: 3333}]}]
)");
  const ReplicaSpec& ps = job.spec.replica_specs.at("PS");
  EXPECT_EQ(ps.restart_policy, "Never");
  EXPECT_EQ(FindPort(ps.template_.spec.containers[0], "tfjob-port")->container_port, 2222);
  const Container& worker = job.spec.replica_specs.at("Worker").template_.spec.containers[0];
  ASSERT_EQ(worker.ports.size(), 1u);
  EXPECT_EQ(worker.ports[0].container_port, 3333);
  EXPECT_EQ(job.spec.run_policy->clean_pod_policy, "All");  // user's value kept
  EXPECT_EQ(job.spec.run_policy->suspend, false);           // the CRD's default
  EXPECT_EQ(job.spec.success_policy, "");
}

TEST(DefaultsTest, ElasticPolicyMinMax) {
  const char* base = R"(
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: x}
spec:
  elasticPolicy: %s
  pytorchReplicaSpecs:
    Worker: {replicas: 4, template: {spec: {containers: [{name: pytorch, image: i}]}}}
)";
  auto with = [&](const char* policy) {
    char buf[1024];
    std::snprintf(buf, sizeof(buf), base, policy);
    return *Defaulted(buf).spec.elastic_policy;
  };
  ElasticPolicy only_max = with("{maxReplicas: 6}");
  EXPECT_EQ(only_max.min_replicas, 6);
  EXPECT_EQ(only_max.max_replicas, 6);
  ElasticPolicy only_min = with("{minReplicas: 2}");
  EXPECT_EQ(only_min.min_replicas, 2);
  EXPECT_EQ(only_min.max_replicas, 2);
  ElasticPolicy neither = with("{rdzvBackend: c10d}");
  EXPECT_EQ(neither.min_replicas, 4);
  EXPECT_EQ(neither.max_replicas, 4);
  ElasticPolicy both = with("{minReplicas: 1, maxReplicas: 5}");
  EXPECT_EQ(both.min_replicas, 1);
  EXPECT_EQ(both.max_replicas, 5);
}

TEST(DefaultsTest, DeprecatedElasticNprocSuppressesNprocDefault) {
  TrainingJob job = Defaulted(R"(
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: x}
spec:
  elasticPolicy: {nProcPerNode: 2}
  pytorchReplicaSpecs:
    Worker: {template: {spec: {containers: [{name: pytorch, image: i}]}}}
)");
  EXPECT_EQ(job.spec.nproc_per_node, std::nullopt);
}

TEST(DefaultsTest, MpiLauncherWorkerCleanPodPolicyNoPort) {
  TrainingJob job = Defaulted(R"(
apiVersion: kubeflow.org/v1
kind: MPIJob
metadata: {name: x}
spec:
  mpiReplicaSpecs:
    Launcher: {template: {spec: {containers: [{name: mpi, image: i}]}}}
    Worker: {template: {spec: {containers: [{name: mpi, image: i}]}}}
)");
  EXPECT_EQ(job.spec.replica_specs.at("Launcher").replicas, 1);
  EXPECT_EQ(job.spec.replica_specs.at("Worker").replicas, 0);
  EXPECT_EQ(job.spec.replica_specs.at("Launcher").restart_policy, "Never");
  EXPECT_EQ(job.spec.replica_specs.at("Worker").restart_policy, "Never");
  EXPECT_TRUE(job.spec.replica_specs.at("Worker").template_.spec.containers[0].ports.empty());
  EXPECT_EQ(job.spec.mpi_clean_pod_policy, "None");
  EXPECT_EQ(job.spec.run_policy->clean_pod_policy, "None");
}

TEST(DefaultsTest, MpiKeepsEitherCleanPodPolicyAndRunPolicyWins) {
  TrainingJob job = Defaulted(R"(
apiVersion: kubeflow.org/v1
kind: MPIJob
metadata: {name: x}
spec:
  cleanPodPolicy: All
  mpiReplicaSpecs:
    Launcher: {template: {spec: {containers: [{name: mpi, image: i}]}}}
)");
  EXPECT_EQ(job.spec.mpi_clean_pod_policy, "All");
  EXPECT_EQ(job.spec.run_policy->clean_pod_policy, std::nullopt);
  EXPECT_EQ(EffectiveCleanPodPolicy(job), "All");
}

TEST(DefaultsTest, PaddleXGBoostJaxPortsAndRestartPolicies) {
  struct Case {
    const char* kind;
    const char* field;
    const char* container;
    const char* port_name;
    int port;
    const char* restart;
  };
  for (const Case& c :
       {Case{"PaddleJob", "paddleReplicaSpecs", "paddle", "master", 36543, "OnFailure"},
        Case{"XGBoostJob", "xgbReplicaSpecs", "xgboost", "xgboostjob-port", 9999, "Never"},
        Case{"JAXJob", "jaxReplicaSpecs", "jax", "jaxjob-port", 6666, "Never"}}) {
    std::string yaml = std::string("apiVersion: kubeflow.org/v1\nkind: ") + c.kind +
                       "\nmetadata: {name: x}\nspec:\n  " + c.field +
                       ":\n    worker: {template: {spec: {containers: [{name: " + c.container +
                       ", image: i}]}}}\n";
    TrainingJob job = Defaulted(yaml);
    const ReplicaSpec& worker = job.spec.replica_specs.at("Worker");
    EXPECT_EQ(worker.restart_policy, c.restart) << c.kind;
    const ContainerPort* port = FindPort(worker.template_.spec.containers[0], c.port_name);
    ASSERT_NE(port, nullptr) << c.kind;
    EXPECT_EQ(port->container_port, c.port) << c.kind;
  }
}

TEST(DefaultsTest, CaseClashKeepsBothSpellingsForValidation) {
  TrainingJob job = Defaulted(R"(
apiVersion: kubeflow.org/v1
kind: JAXJob
metadata: {name: x}
spec:
  jaxReplicaSpecs:
    worker: {replicas: 2, template: {spec: {containers: [{name: jax, image: i}]}}}
    Worker: {replicas: 3, template: {spec: {containers: [{name: jax, image: i}]}}}
)");
  EXPECT_EQ(job.spec.replica_specs.size(), 2u);
  EXPECT_EQ(job.spec.replica_specs.at("Worker").replicas, 3);
}

TEST(DefaultsTest, BatchJob) {
  Object object = DecodeOk(R"(
apiVersion: batch/v1
kind: Job
metadata: {name: x}
spec:
  template:
    metadata: {labels: {app: t}}
    spec: {restartPolicy: Never, containers: [{name: c, image: i}]}
)");
  SetDefaults(object);
  const BatchJob& job = std::get<BatchJob>(object);
  EXPECT_EQ(job.spec.completions, 1);
  EXPECT_EQ(job.spec.parallelism, 1);
  EXPECT_EQ(job.spec.backoff_limit, 6);
  EXPECT_EQ(job.spec.completion_mode, "NonIndexed");
  EXPECT_EQ(job.spec.suspend, false);
  EXPECT_EQ(job.metadata.labels.at("app"), "t");
}

TEST(DefaultsTest, DefaultingTwiceChangesNothing) {
  Object object = DecodeOk(R"(
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: x}
spec:
  elasticPolicy: {maxReplicas: 3}
  pytorchReplicaSpecs:
    Worker: {template: {spec: {containers: [{name: pytorch, image: i}]}}}
)");
  SetDefaults(object);
  Object again = object;
  SetDefaults(again);
  EXPECT_EQ(again, object);
}

}  // namespace
}  // namespace trainyard::api
