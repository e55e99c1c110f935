#include "controller/replica_pod.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/tests/test_util.h"

namespace trainyard::controller {
namespace {

api::TrainingJob Job(const std::string& yaml) {
  api::TrainingJob job = api::testing::ValidTrainingJob(yaml);
  job.metadata.uid = "uid-1";  // as if stored
  return job;
}

frameworks::Placement Ports(const api::TrainingJob& job) {
  frameworks::Placement p;
  int port = 31000;
  for (const auto& r : frameworks::AllReplicas(job)) p.ports[r] = port++;
  return p;
}

const std::string* EnvValue(const api::Container& c, const std::string& name) {
  for (const auto& e : c.env) {
    if (e.name == name) return &*e.value;
  }
  return nullptr;
}

TEST(ReplicaPodTest, NameLabelsOwnerRestartPolicyEnvAndPort) {
  api::TrainingJob job = Job(R"(
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: mnist, namespace: ml}
spec:
  pytorchReplicaSpecs:
    Master:
      template:
        metadata: {labels: {team: vision}}
        spec:
          containers:
            - name: pytorch
              image: i
              command: [python3, train.py]
              env: [{name: LR, value: "0.1"}]
    Worker:
      replicas: 2
      restartPolicy: ExitCode
      template: {spec: {containers: [{name: pytorch, image: i}]}}
)");
  api::Pod master = *BuildReplicaPod(job, {"Master", 0}, Ports(job));
  EXPECT_EQ(master.metadata.name, "mnist-master-0");
  EXPECT_EQ(master.metadata.namespace_, "ml");
  EXPECT_THAT(
      master.metadata.labels,
      ::testing::UnorderedElementsAre(
          std::pair<const std::string, std::string>("team", "vision"),
          std::pair<const std::string, std::string>("training.kubeflow.org/operator-name",
                                                    "pytorchjob-controller"),
          std::pair<const std::string, std::string>("training.kubeflow.org/job-name", "mnist"),
          std::pair<const std::string, std::string>("training.kubeflow.org/replica-type", "master"),
          std::pair<const std::string, std::string>("training.kubeflow.org/replica-index", "0"),
          std::pair<const std::string, std::string>("training.kubeflow.org/job-role", "master")));
  ASSERT_EQ(master.metadata.owner_references.size(), 1u);
  EXPECT_EQ(master.metadata.owner_references[0].uid, "uid-1");
  EXPECT_EQ(master.metadata.owner_references[0].controller, true);
  EXPECT_EQ(master.spec.restart_policy, "OnFailure");
  const api::Container& c = master.spec.containers[0];
  EXPECT_EQ(c.env[0].name, "LR");  // the user's come first
  EXPECT_EQ(*EnvValue(c, "MASTER_PORT"), "31000");
  EXPECT_EQ(*EnvValue(c, "RANK"), "0");
  EXPECT_EQ(c.ports[0].container_port, 31000);  // the port it really listens on

  api::Pod worker = *BuildReplicaPod(job, {"Worker", 1}, Ports(job));
  EXPECT_EQ(worker.spec.restart_policy, "Never");  // ExitCode restarts are the controller's
  EXPECT_EQ(worker.metadata.labels.count("training.kubeflow.org/job-role"), 0u);
  EXPECT_EQ(*EnvValue(worker.spec.containers[0], "RANK"), "2");
  EXPECT_EQ(ReplicaOf(job, worker), (frameworks::ReplicaRef{"Worker", 1}));
}

TEST(ReplicaPodTest, MpiWorkersWithoutCommandStayUp) {
  api::TrainingJob job = Job(R"(
apiVersion: kubeflow.org/v1
kind: MPIJob
metadata: {name: m}
spec:
  mpiReplicaSpecs:
    Launcher: {template: {spec: {containers: [{name: mpi, image: i, command: [mpirun]}]}}}
    Worker: {replicas: 1, template: {spec: {containers: [{name: mpi, image: i}]}}}
)");
  api::Pod worker = *BuildReplicaPod(job, {"Worker", 0}, Ports(job));
  EXPECT_EQ(worker.metadata.name, "m-worker-0");
  EXPECT_THAT(worker.spec.containers[0].command, ::testing::ElementsAre("sleep"));
  EXPECT_THAT(worker.spec.containers[0].args, ::testing::ElementsAre("365d"));
  EXPECT_EQ(BuildReplicaPod(job, {"Launcher", 0}, Ports(job))->metadata.name, "m-launcher");
}

TEST(ReplicaPodTest, OtherJobsPodsAreNotOurs) {
  api::TrainingJob job = Job(R"(
apiVersion: kubeflow.org/v1
kind: JAXJob
metadata: {name: a}
spec:
  jaxReplicaSpecs:
    Worker: {template: {spec: {containers: [{name: jax, image: i}]}}}
)");
  api::Pod pod = *BuildReplicaPod(job, {"Worker", 0}, Ports(job));
  api::TrainingJob other = job;
  other.metadata.name = "b";
  EXPECT_EQ(ReplicaOf(other, pod), std::nullopt);
  pod.metadata.labels["training.kubeflow.org/replica-index"] = "x";
  EXPECT_EQ(ReplicaOf(job, pod), std::nullopt);
}

}  // namespace
}  // namespace trainyard::controller
