// The injected environment of every framework, name by name and value by
// value, against shared/reference/kubeflow-training.md section 4, with the
// local engine's addressing (127.0.0.1, a port per replica).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "frameworks/tests/frameworks_test_util.h"

namespace trainyard::frameworks {
namespace {

using testing::EnvOf;
using testing::Job;
using testing::LocalPlacement;

constexpr const char* kPyTorch = R"(
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: mnist, namespace: ml}
spec:
  %s
  pytorchReplicaSpecs:
    Master: {template: {spec: {containers: [{name: pytorch, image: i}]}}}
    Worker: {replicas: 2, template: {spec: {containers: [{name: pytorch, image: i}]}}}
)";

std::string With(const char* base, const char* extra) {
  char buf[4096];
  std::snprintf(buf, sizeof(buf), base, extra);
  return buf;
}

TEST(PyTorchEnvTest, MasterAndWorkers) {
  api::TrainingJob job = Job(With(kPyTorch, ""));
  Placement p = LocalPlacement(job);  // Master-0: 20000, Worker-0: 20001, Worker-1: 20002
  Env expected_master = {{"PYTHONUNBUFFERED", "1"},
                         {"MASTER_PORT", "20000"},
                         {"PET_MASTER_PORT", "20000"},
                         {"MASTER_ADDR", "127.0.0.1"},
                         {"PET_MASTER_ADDR", "127.0.0.1"},
                         {"WORLD_SIZE", "3"},
                         {"RANK", "0"},
                         {"PET_NODE_RANK", "0"},
                         {"PET_NPROC_PER_NODE", "1"},
                         {"PET_NNODES", "3"}};
  EXPECT_EQ(EnvOf(job, "Master", 0, p), expected_master);
  Env worker1 = EnvOf(job, "Worker", 1, p);
  EXPECT_THAT(worker1, ::testing::Contains(std::pair<std::string, std::string>("RANK", "2")));
  EXPECT_THAT(worker1,
              ::testing::Contains(std::pair<std::string, std::string>("MASTER_PORT", "20000")));
}

TEST(PyTorchEnvTest, NprocPerNodeIntegerScalesWorldSize) {
  api::TrainingJob job = Job(With(kPyTorch, "nprocPerNode: \"4\""));
  Env env = EnvOf(job, "Worker", 0, LocalPlacement(job));
  EXPECT_THAT(env, ::testing::Contains(std::pair<std::string, std::string>("WORLD_SIZE", "12")));
  EXPECT_THAT(env,
              ::testing::Contains(std::pair<std::string, std::string>("PET_NPROC_PER_NODE", "4")));
}

TEST(PyTorchEnvTest, AutoCountsTheReplicasGpus) {
  // Upstream says WORLD_SIZE=3 here whatever the GPUs; torchrun would start
  // two processes per node, so the job would hang (upstream issue #1992).
  api::TrainingJob job = Job(With(kPyTorch, ""));
  Placement p = LocalPlacement(job);
  for (const ReplicaRef& r : AllReplicas(job)) p.gpus[r] = 2;
  Env env = EnvOf(job, "Master", 0, p);
  EXPECT_THAT(env, ::testing::Contains(std::pair<std::string, std::string>("WORLD_SIZE", "6")));
  EXPECT_THAT(env,
              ::testing::Contains(std::pair<std::string, std::string>("PET_NPROC_PER_NODE", "2")));
}

TEST(PyTorchEnvTest, WorkerOnlyJobsGetTheMasterContractFromWorkerZero) {
  api::TrainingJob job = Job(R"(
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: w}
spec:
  pytorchReplicaSpecs:
    Worker: {replicas: 2, template: {spec: {containers: [{name: pytorch, image: i}]}}}
)");
  Env env = EnvOf(job, "Worker", 1, LocalPlacement(job));
  Env expected = {{"PYTHONUNBUFFERED", "1"},
                  {"MASTER_PORT", "20000"},
                  {"PET_MASTER_PORT", "20000"},
                  {"MASTER_ADDR", "127.0.0.1"},
                  {"PET_MASTER_ADDR", "127.0.0.1"},
                  {"WORLD_SIZE", "2"},
                  {"RANK", "1"},
                  {"PET_NODE_RANK", "1"},
                  {"PET_NPROC_PER_NODE", "1"},
                  {"PET_NNODES", "2"}};
  EXPECT_EQ(env, expected);
}

TEST(PyTorchEnvTest, Elastic) {
  api::TrainingJob job = Job(R"(
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: e}
spec:
  elasticPolicy:
    minReplicas: 1
    maxReplicas: 3
    maxRestarts: 100
    rdzvId: run-1
    rdzvConf: [{key: timeout, value: "900"}, {key: read_timeout, value: "60"}]
    standalone: true
  pytorchReplicaSpecs:
    Worker: {replicas: 2, template: {spec: {containers: [{name: pytorch, image: i}]}}}
)");
  Env expected = {{"PYTHONUNBUFFERED", "1"},
                  {"PET_NPROC_PER_NODE", "1"},
                  {"PET_RDZV_ENDPOINT", "127.0.0.1:20000"},
                  {"PET_RDZV_BACKEND", "c10d"},
                  {"PET_NNODES", "1:3"},
                  {"PET_MAX_RESTARTS", "100"},
                  {"PET_RDZV_ID", "run-1"},
                  {"PET_RDZV_CONF", "timeout=900,read_timeout=60,is_host=false"},
                  {"PET_STANDALONE", ""}};
  EXPECT_EQ(EnvOf(job, "Worker", 1, LocalPlacement(job)), expected);
}

// Every replica's host is 127.0.0.1, so torchrun cannot tell from its
// hostname which replica serves the c10d store, as it does on Kubernetes:
// worker-0 is told, and the user's own is_host wins.
TEST(PyTorchEnvTest, ElasticWorkerZeroServesTheRendezvous) {
  auto job_with = [](const std::string& policy_extra) {
    return Job(R"(
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: e}
spec:
  elasticPolicy: {minReplicas: 1, maxReplicas: 2)" +
               policy_extra + R"(}
  pytorchReplicaSpecs:
    Worker: {replicas: 2, template: {spec: {containers: [{name: pytorch, image: i}]}}}
)");
  };
  auto conf = [](const Env& env) {
    for (const auto& [name, value] : env)
      if (name == "PET_RDZV_CONF") return value;
    return std::string("<unset>");
  };
  api::TrainingJob job = job_with("");
  EXPECT_EQ(conf(EnvOf(job, "Worker", 0, LocalPlacement(job))), "is_host=true");
  EXPECT_EQ(conf(EnvOf(job, "Worker", 1, LocalPlacement(job))), "is_host=false");
  api::TrainingJob own = job_with(", rdzvConf: [{key: is_host, value: \"false\"}]");
  EXPECT_EQ(conf(EnvOf(own, "Worker", 0, LocalPlacement(own))), "is_host=false");
  api::TrainingJob remote = job_with(", rdzvHost: h");
  EXPECT_EQ(conf(EnvOf(remote, "Worker", 0, LocalPlacement(remote))), "<unset>");
}

TEST(TensorFlowEnvTest, TfConfigListsEveryReplicaWithItsOwnPort) {
  api::TrainingJob job = Job(R"(
apiVersion: kubeflow.org/v1
kind: TFJob
metadata: {name: dist, namespace: ns}
spec:
  tfReplicaSpecs:
    Chief: {template: {spec: {containers: [{name: tensorflow, image: i}]}}}
    PS: {template: {spec: {containers: [{name: tensorflow, image: i}]}}}
    Worker:
      replicas: 2
      template: {spec: {containers: [{name: tensorflow, image: i}, {name: sidecar, image: s}]}}
)");
  Placement p = LocalPlacement(job);  // Chief 20000, PS 20001, Worker 20002/20003
  Env env = EnvOf(job, "Worker", 1, p);
  ASSERT_EQ(env.size(), 1u);
  EXPECT_EQ(env[0].first, "TF_CONFIG");
  EXPECT_EQ(env[0].second,
            R"({"cluster":{"chief":["127.0.0.1:20000"],"ps":["127.0.0.1:20001"],)"
            R"("worker":["127.0.0.1:20002","127.0.0.1:20003"]},"task":{"type":"worker","index":1},)"
            R"("environment":"cloud"})");
  EXPECT_TRUE(EnvOf(job, "Worker", 1, p, /*container=*/1).empty());  // only "tensorflow"
}

TEST(TensorFlowEnvTest, SingleReplicaIsNotDistributed) {
  api::TrainingJob job = Job(R"(
apiVersion: kubeflow.org/v1
kind: TFJob
metadata: {name: one}
spec:
  tfReplicaSpecs:
    Worker: {template: {spec: {containers: [{name: tensorflow, image: i}]}}}
)");
  EXPECT_TRUE(EnvOf(job, "Worker", 0, LocalPlacement(job)).empty());
}

TEST(XGBoostEnvTest, MasterAndWorkers) {
  api::TrainingJob job = Job(R"(
apiVersion: kubeflow.org/v1
kind: XGBoostJob
metadata: {name: xgb}
spec:
  xgbReplicaSpecs:
    Master: {template: {spec: {containers: [{name: xgboost, image: i}]}}}
    Worker: {replicas: 2, template: {spec: {containers: [{name: xgboost, image: i}]}}}
)");
  Placement p = LocalPlacement(job);
  Env master = {{"MASTER_PORT", "20000"},
                {"MASTER_ADDR", "127.0.0.1"},
                {"WORLD_SIZE", "3"},
                {"RANK", "0"},
                {"PYTHONUNBUFFERED", "1"},
                {"WORKER_PORT", "20001"},
                {"WORKER_ADDRS", "127.0.0.1,127.0.0.1"}};
  EXPECT_EQ(EnvOf(job, "Master", 0, p), master);
  Env worker1 = EnvOf(job, "Worker", 1, p);
  EXPECT_EQ(worker1[3], (std::pair<std::string, std::string>("RANK", "2")));
  EXPECT_EQ(worker1[5], (std::pair<std::string, std::string>("WORKER_PORT", "20002")));
}

TEST(MpiEnvTest, LauncherGetsHostfileAndAgentWorkersNothing) {
  api::TrainingJob job = Job(R"(
apiVersion: kubeflow.org/v1
kind: MPIJob
metadata: {name: allreduce}
spec:
  slotsPerWorker: 2
  mpiReplicaSpecs:
    Launcher:
      template:
        spec:
          containers:
            - {name: mpi, image: i, env: [{name: I_MPI_HYDRA_BOOTSTRAP, value: ssh}]}
    Worker: {replicas: 2, template: {spec: {containers: [{name: mpi, image: i}]}}}
)");
  Placement p = LocalPlacement(job);
  Env launcher = {{"OMPI_MCA_plm_rsh_agent", "/usr/lib/trainyard/rsh-agent"},
                  {"OMPI_MCA_orte_default_hostfile", "/run/job/etc/mpi/hostfile"},
                  {"NVIDIA_VISIBLE_DEVICES", ""},
                  {"NVIDIA_DRIVER_CAPABILITIES", ""},
                  {"I_MPI_HYDRA_BOOTSTRAP_EXEC", "/usr/lib/trainyard/rsh-agent"}};
  EXPECT_EQ(EnvOf(job, "Launcher", 0, p), launcher);
  EXPECT_TRUE(EnvOf(job, "Worker", 0, p).empty());
  EXPECT_EQ(MpiHostfile(job), "allreduce-worker-0 slots=2\nallreduce-worker-1 slots=2\n");
}

TEST(MpiEnvTest, GpuLauncherIsInTheHostfileAndSeesItsGpus) {
  api::TrainingJob job = Job(R"(
apiVersion: kubeflow.org/v1
kind: MPIJob
metadata: {name: g}
spec:
  mpiReplicaSpecs:
    Launcher:
      template:
        spec:
          containers: [{name: mpi, image: i, resources: {limits: {nvidia.com/gpu: 1}}}]
    Worker: {replicas: 1, template: {spec: {containers: [{name: mpi, image: i}]}}}
)");
  EXPECT_EQ(MpiHostfile(job), "g-launcher slots=1\ng-worker-0 slots=1\n");
  Env env = EnvOf(job, "Launcher", 0, LocalPlacement(job));
  for (const auto& [name, value] : env) EXPECT_NE(name, "NVIDIA_VISIBLE_DEVICES");
}

TEST(PaddleEnvTest, CollectiveAndParameterServerModes) {
  api::TrainingJob collective = Job(R"(
apiVersion: kubeflow.org/v1
kind: PaddleJob
metadata: {name: pd}
spec:
  paddleReplicaSpecs:
    Worker: {replicas: 2, template: {spec: {containers: [{name: paddle, image: i}]}}}
)");
  Placement p = LocalPlacement(collective);
  Env head = {{"PYTHONUNBUFFERED", "1"},
              {"PADDLE_JOB_ID", "pd"},
              {"PADDLE_NNODES", "2"},
              {"POD_IP_DUMMY", "127.0.0.1"},
              {"PADDLE_MASTER", "$(POD_IP_DUMMY):20000"}};
  EXPECT_EQ(EnvOf(collective, "Worker", 0, p), head);
  Env other = {{"PYTHONUNBUFFERED", "1"},
               {"PADDLE_JOB_ID", "pd"},
               {"PADDLE_NNODES", "2"},
               {"PADDLE_MASTER", "127.0.0.1:20000"}};
  EXPECT_EQ(EnvOf(collective, "Worker", 1, p), other);

  api::TrainingJob ps = Job(R"(
apiVersion: kubeflow.org/v1
kind: PaddleJob
metadata: {name: pd}
spec:
  paddleReplicaSpecs:
    Master: {template: {spec: {containers: [{name: paddle, image: i}]}}}
    Worker: {template: {spec: {containers: [{name: paddle, image: i}]}}}
)");
  Env worker = EnvOf(ps, "Worker", 0, LocalPlacement(ps));
  EXPECT_EQ(worker.back(), (std::pair<std::string, std::string>("PADDLE_TRAINER_NUM", "1")));
  Env master = EnvOf(ps, "Master", 0, LocalPlacement(ps));
  EXPECT_EQ(master.back(), (std::pair<std::string, std::string>("PADDLE_SERVER_NUM", "1")));
}

TEST(JaxEnvTest, CoordinatorOnWorkerZero) {
  api::TrainingJob job = Job(R"(
apiVersion: kubeflow.org/v1
kind: JAXJob
metadata: {name: jx}
spec:
  jaxReplicaSpecs:
    Worker: {replicas: 3, template: {spec: {containers: [{name: jax, image: i}]}}}
)");
  Env expected = {{"PYTHONUNBUFFERED", "1"},
                  {"COORDINATOR_PORT", "20000"},
                  {"COORDINATOR_ADDRESS", "127.0.0.1"},
                  {"NUM_PROCESSES", "3"},
                  {"PROCESS_ID", "2"}};
  EXPECT_EQ(EnvOf(job, "Worker", 2, LocalPlacement(job)), expected);
}

TEST(NamesTest, ReplicaNamesAsUpstream) {
  api::TrainingJob job = Job(With(kPyTorch, ""));
  EXPECT_EQ(ReplicaName(job, {"Worker", 1}), "mnist-worker-1");
  EXPECT_EQ(ReplicaName(job, {"Master", 0}), "mnist-master-0");
  std::vector<ReplicaRef> all = AllReplicas(job);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0], (ReplicaRef{"Master", 0}));
  EXPECT_EQ(all[2], (ReplicaRef{"Worker", 1}));
}

}  // namespace
}  // namespace trainyard::frameworks
