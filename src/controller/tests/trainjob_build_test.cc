// The JobSet a TrainJob becomes, against golden files written by hand
// from reference §8.3 (tests/data/trainer), for upstream's examples and
// default runtimes (../shared/conformance/trainer-v2; skipped, with a
// message, when absent), and what a runtime refuses to run.
#include "controller/trainjob_build.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/tests/test_util.h"
#include "api/trainer_kinds.h"
#include "api/validation.h"
#include "api/yaml.h"

namespace trainyard::controller {
namespace {

namespace fs = std::filesystem;
using api::Json;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

// Every document of a YAML file, decoded, defaulted and valid.
std::vector<api::Object> Objects(const fs::path& path) {
  Result<std::vector<api::SourceDocument>> docs =
      api::ParseManifests(api::testing::ReadFile(path), path.string());
  EXPECT_TRUE(docs.ok()) << docs.status().ToString();
  std::vector<api::Object> out;
  if (!docs.ok()) return out;
  for (const api::SourceDocument& doc : *docs) {
    api::CheckedObject checked = api::DecodeAndValidate(doc.value);
    EXPECT_THAT(api::testing::ErrorStrings(checked.result.errors), IsEmpty()) << path;
    if (checked.object) out.push_back(*checked.object);
  }
  return out;
}

const api::Object* OfKind(const std::vector<api::Object>& objects, std::string_view kind) {
  for (const api::Object& o : objects) {
    if (api::KindName(o) == kind) return &o;
  }
  return nullptr;
}

TrainJobSource JobFrom(const api::Object& object) {
  TrainJobSource job{.meta = api::Metadata(object), .spec = std::get<api::TrainJob>(object).spec};
  if (job.meta.namespace_.empty()) job.meta.namespace_ = "default";
  job.meta.uid = "uid-1";
  return job;
}

RuntimeSource RuntimeFrom(const api::Object& object) {
  return {.kind = std::string(api::KindName(object)),
          .meta = api::Metadata(object),
          .spec = api::TrainingRuntimeFieldsOf(object).spec};
}

// The golden JobSet, with $TRAINJOB_COMMAND standing for the TrainJob's command.
Json Golden(const std::string& name, const TrainJobSource& job) {
  std::string text =
      api::testing::ReadFile(api::testing::SourceDir() / "tests/data/trainer" / name);
  Json golden = api::testing::ParseOne(text);
  Json command = api::Encode(job.spec.trainer->command);
  for (Json& rjob : golden["spec"]["replicatedJobs"]) {
    for (Json& c : rjob["template"]["spec"]["template"]["spec"]["containers"]) {
      if (c.value("command", Json()) == "$TRAINJOB_COMMAND") c["command"] = command;
    }
  }
  return golden;
}

struct Built {
  TrainJobObjects objects;
  Json golden;
};

Built Build(const api::Object& job_object, const api::Object& runtime_object,
            const std::string& golden) {
  TrainJobSource job = JobFrom(job_object);
  RuntimeSource runtime = RuntimeFrom(runtime_object);
  EXPECT_THAT(api::testing::ErrorStrings(CheckAgainstRuntime(job, runtime)), IsEmpty());
  BuildOptions options{.rendezvous_host = ClusterRendezvousHost(job, runtime)};
  return {BuildTrainJobObjects(job, runtime, options), Golden(golden, job)};
}

#define EXPECT_SAME_MANIFEST(golden, actual)                        \
  do {                                                              \
    std::string where;                                              \
    EXPECT_TRUE(api::testing::SameManifest(golden, actual, &where)) \
        << where << "\nbuilt:\n"                                    \
        << api::ToYaml(actual) << "\ngolden:\n"                     \
        << api::ToYaml(golden);                                     \
  } while (0)

#define REQUIRE_TRAINER(dir)                                                \
  std::optional<fs::path> dir = api::testing::ConformanceDir("trainer-v2"); \
  if (!dir) GTEST_SKIP() << "../shared/conformance/trainer-v2 is absent: JobSets not checked"

fs::path Runtime(const fs::path& root, const char* file) {
  return root / "manifests/base/runtimes" / file;
}

TEST(TrainJobBuildTest, MultiNodeExampleOnTheTorchRuntime) {
  REQUIRE_TRAINER(root);
  auto job = Objects(*root / "examples/yaml/01-multi-node.yaml");
  auto runtime = Objects(Runtime(*root, "torch_distributed.yaml"));
  Built built = Build(job[0], runtime[0], "multi-node.jobset.yaml");
  EXPECT_SAME_MANIFEST(built.golden, built.objects.jobset);
  EXPECT_THAT(built.objects.config_maps, IsEmpty());
}

TEST(TrainJobBuildTest, RuntimePatchesExample) {
  REQUIRE_TRAINER(root);
  auto job = Objects(*root / "examples/yaml/02-runtime-patches.yaml");
  auto runtime = Objects(Runtime(*root, "torch_distributed.yaml"));
  Built built = Build(job[0], runtime[0], "runtime-patches.jobset.yaml");
  EXPECT_SAME_MANIFEST(built.golden, built.objects.jobset);
}

TEST(TrainJobBuildTest, MultiStepExampleWithItsDatasetInitializer) {
  REQUIRE_TRAINER(root);
  auto objects = Objects(*root / "examples/yaml/05-multi-step.yaml");
  Built built = Build(*OfKind(objects, "TrainJob"), *OfKind(objects, "TrainingRuntime"),
                      "multi-step.jobset.yaml");
  EXPECT_SAME_MANIFEST(built.golden, built.objects.jobset);
}

TEST(TrainJobBuildTest, DeepSpeedOnMpiWithTheLauncherAsANode) {
  REQUIRE_TRAINER(root);
  auto job = Objects(api::testing::SourceDir() / "tests/data/trainer/deepspeed.trainjob.yaml");
  auto runtime = Objects(Runtime(*root, "deepspeed_distributed.yaml"));
  Built built = Build(job[0], runtime[0], "deepspeed.jobset.yaml");
  EXPECT_SAME_MANIFEST(built.golden, built.objects.jobset);
  ASSERT_EQ(built.objects.config_maps.size(), 1u);
  const Json& hostfile = built.objects.config_maps[0];
  EXPECT_EQ(api::StringAt(hostfile, {"metadata", "name"}), "ds-mpi-hostfile");
  EXPECT_EQ(
      api::StringAt(hostfile, {"data", "hostfile"}),
      api::testing::ReadFile(api::testing::SourceDir() / "tests/data/trainer/deepspeed.hostfile"));
}

// On one machine the same runtime reaches its nodes through trainyard exec:
// the agent rides in the hostfile's ConfigMap, the launcher is told of it,
// no ssh key is mounted, and the nodes' sshd just stays up as a sleep.
TEST(TrainJobBuildTest, DeepSpeedOnOneMachineRunsMpiThroughTrainyardExec) {
  REQUIRE_TRAINER(root);
  auto job = Objects(api::testing::SourceDir() / "tests/data/trainer/deepspeed.trainjob.yaml");
  auto runtime = Objects(Runtime(*root, "deepspeed_distributed.yaml"));
  TrainJobObjects built =
      BuildTrainJobObjects(JobFrom(job[0]), RuntimeFrom(runtime[0]),
                           {.rendezvous_host = "127.0.0.1",
                            .mpi_rsh_agent = "/etc/mpi/kubexec.sh",
                            .mpi_exec_command = "'/bin/trainyard' exec --state '/run/x'"});
  ASSERT_EQ(built.config_maps.size(), 1u);
  EXPECT_THAT(api::StringAt(built.config_maps[0], {"data", "kubexec.sh"}),
              ::testing::HasSubstr("exec '/bin/trainyard' exec --state '/run/x' -n 'default' "
                                   "\"$POD_NAME\""));
  std::string text = built.jobset.dump();
  EXPECT_EQ(text.find("mpi-ssh-auth"), std::string::npos) << text;
  for (const Json& rjob : built.jobset["spec"]["replicatedJobs"]) {
    const Json& pod = rjob["template"]["spec"]["template"]["spec"];
    const Json& node = pod["containers"][0];
    if (rjob["name"] == "node") {
      EXPECT_EQ(node["command"], Json::parse(R"(["sleep"])"));
      EXPECT_EQ(node["args"], Json::parse(R"(["365d"])"));
      continue;
    }
    EXPECT_EQ(node["command"][0], "mpirun") << "the launcher runs the trainer's command";
    std::map<std::string, Json> env;
    for (const Json& var : node["env"]) env[var["name"]] = var.value("value", Json());
    EXPECT_EQ(env["OMPI_MCA_plm_rsh_agent"], "/etc/mpi/kubexec.sh");
    // Open MPI 5's PRRTE names beside Open MPI 4's, as Trainer v2.4 sets them.
    EXPECT_EQ(env["PRTE_MCA_plm_ssh_agent"], "/etc/mpi/kubexec.sh");
    EXPECT_EQ(env["PRTE_MCA_prte_default_hostfile"], "/etc/mpi/hostfile");
    EXPECT_EQ(env["PRTE_MCA_prte_keep_fqdn_hostnames"], "false");
    EXPECT_EQ(env["PRTE_MCA_prte_set_default_slots"], env["OMPI_MCA_orte_set_default_slots"]);
    EXPECT_EQ(pod["volumes"][0]["configMap"]["items"][1],
              Json::parse(R"({"key": "kubexec.sh", "path": "kubexec.sh", "mode": 365})"));
  }
}

TEST(TrainJobBuildTest, XgboostAndJaxRuntimes) {
  REQUIRE_TRAINER(root);
  fs::path data = api::testing::SourceDir() / "tests/data/trainer";
  for (auto [name, runtime_file] : {std::pair{"xgboost", "xgboost_distributed.yaml"},
                                    std::pair{"jax", "jax_distributed.yaml"}}) {
    auto job = Objects(data / (std::string(name) + ".trainjob.yaml"));
    auto runtime = Objects(Runtime(*root, runtime_file));
    Built built = Build(job[0], runtime[0], std::string(name) + ".jobset.yaml");
    EXPECT_SAME_MANIFEST(built.golden, built.objects.jobset);
  }
}

// A runtime of our own, so that these run without ../shared.
constexpr const char* kTorchRuntime = R"(
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: torch}
spec:
  mlPolicy: {numNodes: 1, torch: {}}
  podGroupPolicy: {coscheduling: {}}
  template:
    spec:
      replicatedJobs:
      - name: node
        template:
          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
          spec:
            template:
              spec:
                containers: [{name: node, image: torch, env: [{name: FROM_RUNTIME, value: "1"}]}]
)";

TrainJobSource JobOf(const std::string& yaml) { return JobFrom(api::testing::ValidObject(yaml)); }

RuntimeSource TorchRuntime() { return RuntimeFrom(api::testing::ValidObject(kTorchRuntime)); }

TEST(TrainJobBuildTest, OnOneMachineTheRendezvousIsLocalAndTheGangIsMarked) {
  TrainJobSource job = JobOf(R"(
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: tj}
spec:
  runtimeRef: {name: torch}
  suspend: true
  trainer: {numNodes: 2, numProcPerNode: 3, command: [torchrun, train.py]}
)");
  TrainJobObjects built = BuildTrainJobObjects(
      job, TorchRuntime(), {.rendezvous_host = "127.0.0.1", .rendezvous_port = 31000});
  const Json& rjob = built.jobset["spec"]["replicatedJobs"][0];
  const Json& pod = rjob["template"]["spec"]["template"];
  EXPECT_EQ(api::StringAt(pod, {"metadata", "labels", "scheduling.x-k8s.io/pod-group"}), "tj");
  const Json& node = pod["spec"]["containers"][0];
  std::map<std::string, std::string> env;
  for (const Json& var : node["env"]) env[var["name"]] = var.value("value", "<from>");
  EXPECT_EQ(env, (std::map<std::string, std::string>{{"FROM_RUNTIME", "1"},
                                                     {"PET_NNODES", "2"},
                                                     {"PET_NPROC_PER_NODE", "3"},
                                                     {"PET_NODE_RANK", "<from>"},
                                                     {"PET_MASTER_ADDR", "127.0.0.1"},
                                                     {"PET_MASTER_PORT", "31000"}}));
  EXPECT_EQ(node["ports"], Json::parse(R"([{"containerPort": 31000, "protocol": "TCP"}])"));
  EXPECT_EQ(built.jobset["spec"]["suspend"], true);
}

// On a cluster with the operator's status server (KEP-2779): every
// trainer container gets upstream's three variables (one it sets itself
// stays) and the token volume for the TrainJob's own audience; the CA comes
// in a ConfigMap the TrainJob owns. Without the server, none of it.
TEST(TrainJobBuildTest, OnAClusterTheTrainerIsGivenTheStatusServerItsTokenAndCa) {
  TrainJobSource job = JobOf(R"(
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: tj, namespace: team}
spec:
  runtimeRef: {name: torch}
  trainer: {env: [{name: KUBEFLOW_TRAINER_SERVER_CA_CERT, value: /mine.crt}]}
)");
  BuildOptions options{.rendezvous_host = "tj-node-0-0.tj",
                       .status_server_url = "https://op.kubeflow.svc:10443",
                       .status_server_ca = "PEM"};
  TrainJobObjects built = BuildTrainJobObjects(job, TorchRuntime(), options);
  const Json& pod = built.jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"];
  std::map<std::string, std::string> env;
  for (const Json& var : pod["spec"]["containers"][0]["env"]) {
    env[var["name"]] = var.value("value", "<from>");
  }
  EXPECT_EQ(env["KUBEFLOW_TRAINER_SERVER_URL"],
            "https://op.kubeflow.svc:10443/apis/trainer.kubeflow.org/v1alpha1/namespaces/team/"
            "trainjobs/tj/status");
  EXPECT_EQ(env["KUBEFLOW_TRAINER_SERVER_TOKEN"], "/var/run/secrets/kubeflow/trainer/token");
  EXPECT_EQ(env["KUBEFLOW_TRAINER_SERVER_CA_CERT"], "/mine.crt");
  EXPECT_EQ(pod["spec"]["containers"][0]["volumeMounts"], Json::parse(R"([{
      "name": "kubeflow-trainer-token", "mountPath": "/var/run/secrets/kubeflow/trainer",
      "readOnly": true}])"));
  EXPECT_EQ(pod["spec"]["volumes"], Json::parse(R"([{"name": "kubeflow-trainer-token",
      "projected": {"sources": [
        {"serviceAccountToken": {
          "audience": "trainer.kubeflow.org/v1alpha1/namespaces/team/trainjobs/tj/status",
          "expirationSeconds": 3600, "path": "token"}},
        {"configMap": {"name": "tj-tls-config", "items": [{"key": "ca.crt", "path": "ca.crt"}]}}
      ]}}])"));
  ASSERT_EQ(built.config_maps.size(), 1u);
  EXPECT_EQ(built.config_maps[0]["metadata"]["name"], "tj-tls-config");
  EXPECT_EQ(built.config_maps[0]["data"]["ca.crt"], "PEM");
  EXPECT_EQ(built.config_maps[0]["metadata"]["ownerReferences"][0]["name"], "tj");

  options.status_server_url.clear();
  TrainJobObjects plain = BuildTrainJobObjects(job, TorchRuntime(), options);
  EXPECT_TRUE(plain.config_maps.empty());
  EXPECT_FALSE(
      plain.jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"].contains(
          "volumes"));
}

// Kubeflow's initializer image has its program inside: on one machine it
// becomes `trainyard initialize`; a container with a command of its own,
// or on a cluster, is left as it is.
TEST(TrainJobBuildTest, OnOneMachineKubeflowsInitializerImageRunsTrainyardInitialize) {
  RuntimeSource runtime = RuntimeFrom(api::testing::ValidObject(R"(
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: init}
spec:
  template:
    spec:
      replicatedJobs:
      - name: dataset-initializer
        template:
          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: dataset-initializer}}
          spec: {template: {spec: {containers: [
            {name: dataset-initializer, image: "ghcr.io/kubeflow/trainer/dataset-initializer:v2"}]}}}
      - name: model-initializer
        template:
          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: model-initializer}}
          spec: {template: {spec: {containers: [
            {name: model-initializer, image: mine, command: [fetch]}]}}}
)"));
  TrainJobSource job = JobOf(R"(
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: tj}
spec:
  runtimeRef: {name: init}
  initializer: {dataset: {storageUri: "file:///data"}}
)");
  auto command = [](const TrainJobObjects& built, int rjob) {
    return built
        .jobset["spec"]["replicatedJobs"][rjob]["template"]["spec"]["template"]["spec"]
               ["containers"][0]
        .value("command", Json());
  };
  TrainJobObjects local = BuildTrainJobObjects(
      job, runtime, {.rendezvous_host = "127.0.0.1", .initializer_program = "/bin/trainyard"});
  EXPECT_EQ(command(local, 0),
            Json::parse(R"(["/bin/trainyard", "initialize", "dataset", "/workspace/dataset"])"));
  EXPECT_EQ(command(local, 1), Json::parse(R"(["fetch"])"));
  // trainyard's own program runs on this machine's files, not in the image.
  EXPECT_EQ(local
                .jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["metadata"]
                       ["annotations"]
                .value("trainyard.dev/root", ""),
            "host");
  TrainJobObjects cluster =
      BuildTrainJobObjects(job, runtime, {.rendezvous_host = "tj-node-0-0.tj"});
  EXPECT_EQ(command(cluster, 0), Json());
  EXPECT_THAT(LocalInitializerProblems(cluster.jobset, "/bin/trainyard"), IsEmpty());
  // This runtime mounts nothing at /workspace: here it would write to the
  // machine's own, so it is refused; a mount there (or above) is enough.
  EXPECT_THAT(LocalInitializerProblems(local.jobset, "/bin/trainyard"),
              ElementsAre(::testing::HasSubstr(
                  "replicated job dataset-initializer, container dataset-initializer: no volume "
                  "is mounted at /workspace/dataset (or above it)")));
  Json& container = local.jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
                                ["spec"]["containers"][0];
  container["volumeMounts"] =
      Json::parse(R"([{"name": "initializer", "mountPath": "/workspace/"}])");
  EXPECT_THAT(LocalInitializerProblems(local.jobset, "/bin/trainyard"), IsEmpty());
  container["volumeMounts"][0]["mountPath"] = "/workspace/data";
  EXPECT_THAT(LocalInitializerProblems(local.jobset, "/bin/trainyard"), ::testing::SizeIs(1));
  container["volumeMounts"][0]["mountPath"] = "/workspace/dataset";
  container["args"] = Json::array({"--verbose"});
  EXPECT_THAT(LocalInitializerProblems(local.jobset, "/bin/trainyard"),
              ElementsAre(::testing::HasSubstr("has args")));
  // Someone else's image of that name runs as written.
  container.erase("command");
  container["image"] = "example.com/team/dataset-initializer:v1";
  runtime.spec.template_.spec.replicated_jobs[0].template_.spec.template_.spec.containers[0].image =
      "example.com/team/dataset-initializer:v1";
  TrainJobObjects theirs = BuildTrainJobObjects(
      job, runtime, {.rendezvous_host = "127.0.0.1", .initializer_program = "/bin/trainyard"});
  EXPECT_EQ(command(theirs, 0), Json());
}

TEST(TrainJobBuildTest, WhatTheRuntimeCannotGiveIsRefusedWithUpstreamsMessages) {
  TrainJobSource job = JobOf(R"(
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: tj}
spec:
  runtimeRef: {name: torch}
  initializer: {model: {storageUri: "hf://org/model"}}
  trainer:
    env: [{name: PET_NNODES, value: "9"}, {name: PET_MASTER_PORT, value: "1"}]
  runtimePatches:
  - manager: me
    trainingRuntimeSpec:
      template:
        spec:
          replicatedJobs:
          - name: workers
          - name: node
            template:
              spec:
                template:
                  spec:
                    containers: [{name: node, env: [{name: X, value: "1"}]}, {name: helper}]
)");
  EXPECT_THAT(
      api::testing::ErrorStrings(CheckAgainstRuntime(job, TorchRuntime())),
      ElementsAre(
          "spec.runtimeRef: Invalid value: must have model-initializer job when trainJob is "
          "configured with input modelConfig",
          "spec.runtimePatches[0].trainingRuntimeSpec.template.spec.replicatedJobs[0].name: "
          "Invalid value: \"workers\": must not have replicated job that doesn't exist in the "
          "runtime job template",
          "spec.runtimePatches[0].trainingRuntimeSpec.template.spec.replicatedJobs[1].template."
          "spec.template.spec.containers[0].env: Invalid value: must not have envs for the "
          "dataset-initializer, model-initializer, node containers",
          "spec.runtimePatches[0].trainingRuntimeSpec.template.spec.replicatedJobs[1].template."
          "spec.template.spec.containers[1].name: Invalid value: \"helper\": must not have "
          "container that doesn't exist in the runtime job node",
          "spec.trainer.env: Invalid value: must not have reserved envs, invalid envs "
          "configured: [PET_MASTER_PORT PET_NNODES]"));
}

}  // namespace
}  // namespace trainyard::controller
