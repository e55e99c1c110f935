// `trainyard run` of Deployments against an API server (`trainyard server
// --api-only` over HTTPS) given with --kubeconfig: the pods reach it as
// their service account, as on Kubernetes; and the operator's own image,
// from `trainyard manifests operator`, runs under `trainyard run` and
// reconciles the jobs applied to that server. Stopping the run stops them.
#include <gmock/gmock.h>
#include <signal.h>
#include <unistd.h>

#include "cli/tests/operator_fixture.h"
#include "cli/tests/test_registry.h"

namespace trainyard::cli::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

class RunDeploymentE2eTest : public OperatorE2eTest {
 protected:
  void TearDown() override {
    if (run_) run_->Stop(std::chrono::seconds(20));
    OperatorE2eTest::TearDown();
  }
  fs::path RunHome() const { return dir_ / "run-home"; }
  // `trainyard run --kubeconfig <the server's> FLAGS... FILE` in the
  // background; its output in run.log.
  void StartRun(const std::string& file, std::vector<std::string> flags,
                std::vector<std::pair<std::string, std::string>> env = {}) {
    std::vector<std::string> argv = {TRAINYARD_BINARY,   "run",          "--home",
                                     RunHome().string(), "--kubeconfig", Kubeconfig().string()};
    argv.insert(argv.end(), flags.begin(), flags.end());
    argv.push_back(file);
    env.insert(env.begin(), {{"PATH", kPath}, {"HOME", dir_.string()}});
    Result<runtime::Process> p = runtime::Process::Start({.argv = argv,
                                                          .env = env,
                                                          .working_dir = dir_.string(),
                                                          .log_path = RunLogPath().string()});
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    run_.emplace(*std::move(p));
  }
  fs::path RunLogPath() const { return dir_ / "run.log"; }
  std::string RunLog() const { return ReadFile(RunLogPath()); }
  // SIGTERM, as a service manager stops it: the run's exit code.
  int StopRun() {
    run_->Signal(SIGTERM);
    std::optional<runtime::ExitStatus> status = run_->WaitFor(std::chrono::seconds(30));
    run_.reset();
    return status ? status->exit_code : -1;
  }
  // Processes whose command line names the run's home (its replicas' shims).
  int ProcessesOfTheRun() {
    int n = 0;
    std::error_code ec;
    for (auto it = fs::directory_iterator("/proc", ec); !ec && it != fs::directory_iterator();
         it.increment(ec)) {
      std::string cmdline = ReadFile(it->path() / "cmdline");
      n += cmdline.find(RunHome().string() + "/") != std::string::npos &&
           ReadFile(it->path() / "stat").find(") Z") == std::string::npos;
    }
    return n;
  }

  std::optional<runtime::Process> run_;
};

// A Deployment's pod that names a service account writes to the API
// server with the token it was given at the service account's path, and
// sees its namespace there; a pod that names none has the server's address
// in its environment, as every pod has, but no token.
TEST_F(RunDeploymentE2eTest, ItsPodsReachTheApiServerAsTheirServiceAccount) {
  TRAINYARD_NEEDS(HaveBwrap(), "bubblewrap (the token is mounted at its path in a sandbox)");
  StartCluster();
  ASSERT_EQ(Kubectl({"create", "namespace", "tools"}).exit_code, 0);
  std::string manifest = Write("tools.yaml", R"yaml(apiVersion: v1
kind: Namespace
metadata: {name: tools}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: writer, namespace: tools}
spec:
  selector: {matchLabels: {app: writer}}
  template:
    metadata: {labels: {app: writer}}
    spec:
      serviceAccountName: writer
      containers:
      - name: main
        image: unused
        command:
        - sh
        - -c
        - |
          d=/var/run/secrets/kubernetes.io/serviceaccount
          curl -sS --fail --cacert $d/ca.crt -H "Authorization: Bearer $(cat $d/token)" \
            -H 'Content-Type: application/json' -X POST \
            https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT/api/v1/namespaces/$(cat $d/namespace)/configmaps \
            -d "{\"metadata\":{\"name\":\"from-the-pod\"},\"data\":{\"host\":\"$HOSTNAME\"}}" >/dev/null
          echo wrote
          exec sleep 600
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: quiet, namespace: tools}
spec:
  selector: {matchLabels: {app: quiet}}
  template:
    metadata: {labels: {app: quiet}}
    spec:
      containers:
      - name: main
        image: unused
        command: [sh, -c, 'ls /var/run/secrets/kubernetes.io/serviceaccount/token 2>/dev/null || echo "no token, host ${KUBERNETES_SERVICE_HOST:-unset}"; exec sleep 600']
)yaml");
  StartRun(manifest, {"--root", "host"});
  ASSERT_TRUE(Eventually([&] {
    return Kubectl({"get", "configmap", "from-the-pod", "-n", "tools"}).exit_code == 0;
  })) << RunLog();
  EXPECT_THAT(
      Kubectl({"get", "configmap", "from-the-pod", "-n", "tools", "-o", "jsonpath={.data.host}"})
          .output,
      StartsWith("writer-"));
  ASSERT_TRUE(Eventually([&] { return RunLog().find("no token") != std::string::npos; }))
      << RunLog();
  EXPECT_THAT(RunLog(), HasSubstr("no token, host 127.0.0.1"));
  EXPECT_THAT(RunLog(), HasSubstr("deployments run until stopped"));

  // Stopping is how such a run ends: no failure, and nothing left.
  EXPECT_EQ(StopRun(), 0) << RunLog();
  EXPECT_THAT(RunLog(), HasSubstr("Deployment tools/writer: stopped with the run (1/1 ready)"));
  EXPECT_EQ(ProcessesOfTheRun(), 0);
}

// kube-apiserver's rules, and nothing run: a Deployment whose selector
// does not match its template is refused before anything starts.
TEST_F(RunDeploymentE2eTest, ADeploymentThatCouldNotSelectItsPodsIsRefused) {
  StartCluster();
  std::string manifest = Write("bad.yaml", R"(apiVersion: apps/v1
kind: Deployment
metadata: {name: bad}
spec:
  selector: {matchLabels: {app: a}}
  template:
    metadata: {labels: {app: b}}
    spec: {containers: [{name: main, image: unused, command: ["true"]}]}
)");
  StartRun(manifest, {"--root", "host"});
  std::optional<runtime::ExitStatus> status = run_->WaitFor(std::chrono::seconds(30));
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->exit_code, 1);
  EXPECT_THAT(RunLog(), HasSubstr("spec.template.metadata.labels: Invalid value: "
                                  "map[string]string{\"app\":\"b\"}: `selector` does not match "
                                  "template `labels`"));
  run_.reset();
}

// The operator's image (scripts/operator-image.sh, from this build's
// trainyard), pushed to a registry, runs from `trainyard manifests
// operator` under `trainyard run`: in its image, as nobody, it takes the
// lease and makes a PyTorchJob's pods on the API server it was given.
TEST_F(RunDeploymentE2eTest, TheOperatorsImageRunsFromItsManifestAndReconcilesJobs) {
  std::string missing = TestRegistry::Missing();
  TRAINYARD_NEEDS(missing.empty(), missing);
  TRAINYARD_NEEDS(geteuid() == 0, "root (an image's root is an overlay mount)");
  TestRegistry* registry = TestRegistry::Get();
  ASSERT_NE(registry, nullptr) << "the test registry did not start";
  StartCluster();
  fs::path crds = dir_ / "crds.yaml";
  registry_internal::MustRun(
      {"sh", "-c", fmt::format("'{}' manifests crds > '{}'", TRAINYARD_BINARY, crds.string())});
  CommandResult applied = Kubectl({"apply", "-f", crds.string()});
  ASSERT_EQ(applied.exit_code, 0) << applied.output;

  fs::path image_dir = dir_ / "operator-image";
  registry_internal::MustRun({fs::path(TRAINYARD_SOURCE_DIR) / "scripts/operator-image.sh",
                              TRAINYARD_BINARY, image_dir.string()});
  std::string version(Trim(registry_internal::MustRun({TRAINYARD_BINARY, "--version"})));
  std::string image = fmt::format("127.0.0.1:{}/kubeflow/trainyard:{}", registry->port(), version);
  registry_internal::MustRun(
      {"skopeo", "copy", "--dest-tls-verify=false", "--dest-creds", "alice:s3cret",
       "oci-archive:" + (image_dir / "trainyard-operator.tar").string() + ":" + version,
       "docker://" + image});
  std::string manifest =
      registry_internal::MustRun({TRAINYARD_BINARY, "manifests", "operator", "--image", image});
  // Its ports as the manifest has them would be the machine's 8080, 8081
  // and 9443, which other programs here may hold: free ones instead.
  int probes = FreePort();
  std::string flags = fmt::format(
      "        - --leader-elect\n        - --metrics-bind-address=0\n"
      "        - --health-probe-bind-address=127.0.0.1:{}\n        - --webhook-server-port=0\n",
      probes);
  size_t at = manifest.find("        - --leader-elect\n");
  ASSERT_NE(at, std::string::npos) << manifest;
  manifest.replace(at, std::string_view("        - --leader-elect\n").size(), flags);
  StartRun(Write("operator.yaml", manifest), {},
           {{"REGISTRY_AUTH_FILE", registry->Auth()},
            {"CONTAINERS_REGISTRIES_CONF", registry->RegistriesConf()}});

  ASSERT_TRUE(Eventually([&] {
    return FieldIn("lease/1ca428e5.training-operator.kubeflow.org", ".spec.holderIdentity")
        .starts_with("trainyard-operator-");
  })) << RunLog();
  EXPECT_THAT(RunLog(), HasSubstr("Successfully pulled image \"" + image + "\""));
  EXPECT_EQ(Curl(fmt::format("http://127.0.0.1:{}/healthz", probes)), "ok");
  ApplyIn("job.yaml", SmallJob("wide", "PyTorchJob", "pytorchReplicaSpecs", "pytorch",
                               "    Master:\n      replicas: 1"));
  ASSERT_TRUE(Eventually([&] { return !FieldIn("pod/wide-master-0", ".metadata.name").empty(); }))
      << RunLog();
  EXPECT_EQ(EnvOf("wide-master-0", "MASTER_ADDR"), "wide-master-0");
  EXPECT_EQ(EnvOf("wide-master-0", "RANK"), "0");
  EXPECT_THAT(RunLog(), Not(HasSubstr("cannot reach the API server")));

  EXPECT_EQ(StopRun(), 0) << RunLog();
  EXPECT_THAT(RunLog(), HasSubstr("trainyard operator: stopped"));
  EXPECT_EQ(ProcessesOfTheRun(), 0);
}

}  // namespace
}  // namespace trainyard::cli::testing
