// What a user does to objects with the real kubectl every day: apply a
// changed manifest again, diff it first, edit in place, find a Job's own
// pods. kubectl patches built-in kinds strategically, which trainyard must
// merge as kube-apiserver does.
#include <gmock/gmock.h>

#include "cli/tests/server_fixture.h"

namespace trainyard::cli::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kObjects = R"(
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  clusterIP: None
  ports: [{name: a, port: 80}, {name: b, port: 81}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {rate: "0.1"}
---
apiVersion: batch/v1
kind: Job
metadata: {name: first}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: debian, command: [sh, -c, 'echo this is first']}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: second}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: debian, command: [sh, -c, 'echo this is second']}]
)";

std::string Changed(std::string text) {
  for (auto [from, to] : {std::pair{"port: 81", "port: 8081"}, std::pair{"\"0.1\"", "\"0.2\""}}) {
    text.replace(text.find(from), std::string(from).size(), to);
  }
  return text;
}

class KubectlEverydayE2eTest : public ServerFixture {};

TEST_F(KubectlEverydayE2eTest, AChangedManifestAppliesAgainDiffsAndEditsAsOnACluster) {
  StartServer();
  std::string first = Write("objects.yaml", kObjects);
  ASSERT_EQ(Kubectl({"apply", "-f", first}).exit_code, 0);
  std::string changed = Write("changed.yaml", Changed(kObjects));

  // kubectl diff: a server-side dry run of each patch, nothing written.
  CommandResult diff = Kubectl({"diff", "-f", changed});
  EXPECT_EQ(diff.exit_code, 1) << diff.output;  // 1: differences found
  EXPECT_THAT(diff.output, HasSubstr("+    port: 8081"));
  EXPECT_THAT(diff.output, HasSubstr("+  rate: \"0.2\""));
  EXPECT_EQ(Field("svc/web", ".spec.ports[1].port"), "81");

  CommandResult applied = Kubectl({"apply", "-f", changed});
  EXPECT_EQ(applied.exit_code, 0) << applied.output;
  EXPECT_THAT(applied.output, HasSubstr("service/web configured"));
  EXPECT_THAT(applied.output, HasSubstr("configmap/settings configured"));
  EXPECT_EQ(Field("svc/web", ".spec.ports[*].port"), "80 8081");
  EXPECT_EQ(Field("cm/settings", ".data.rate"), "0.2");
  CommandResult again = Kubectl({"apply", "-f", changed});
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_THAT(again.output, HasSubstr("service/web unchanged"));

  // A Job's pod template cannot change under its pods: refused, unchanged.
  std::string rerun = Changed(kObjects);
  rerun.replace(rerun.find("this is first"), 13, "this is third");
  CommandResult refused = Kubectl({"apply", "-f", Write("rerun.yaml", rerun)});
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_THAT(refused.output, HasSubstr("The Job \"first\" is invalid: spec.template"));
  EXPECT_THAT(refused.output, HasSubstr("field is immutable"));
  EXPECT_THAT(Field("job/first", ".spec.template.spec.containers[0].command[2]"),
              HasSubstr("this is first"));

  // kubectl edit sends a two-way strategic merge patch.
  kubectl_editor_ = "sed -i s/8081/9090/g";
  CommandResult edited = Kubectl({"edit", "svc", "web"});
  EXPECT_EQ(edited.exit_code, 0) << edited.output;
  EXPECT_EQ(Field("svc/web", ".spec.ports[*].port"), "80 9090");

  // Each Job selects its own pods, so kubectl finds the right log.
  EXPECT_THAT(Field("job/first", ".spec.selector.matchLabels"),
              HasSubstr("batch.kubernetes.io/controller-uid"));
  ASSERT_TRUE(Eventually([&] {
    return Kubectl({"logs", "job/second"}).output.find("this is second") != std::string::npos;
  }));
  CommandResult logs = Kubectl({"logs", "job/first"});
  EXPECT_THAT(logs.output, HasSubstr("this is first"));
  EXPECT_THAT(logs.output, Not(HasSubstr("Found 2 pods")));

  // The "all" category, as Kubernetes' kinds declare it.
  CommandResult all = Kubectl({"get", "all"});
  EXPECT_EQ(all.exit_code, 0) << all.output;
  EXPECT_THAT(all.output, HasSubstr("pod/first-"));
  EXPECT_THAT(all.output, HasSubstr("service/web"));
  EXPECT_THAT(all.output, HasSubstr("job.batch/second"));
}

// kubectl apply --server-side, as upstream's install docs use it: twice
// with a change, diffed first; a field another manager set is a conflict
// until forced.
TEST_F(KubectlEverydayE2eTest, ServerSideApplyTracksManagersAndConflicts) {
  StartServer();
  std::string first = Write("objects.yaml", kObjects);
  CommandResult applied = Kubectl({"apply", "--server-side", "-f", first});
  ASSERT_EQ(applied.exit_code, 0) << applied.output;
  EXPECT_THAT(applied.output, HasSubstr("service/web serverside-applied"));
  std::string changed = Write("changed.yaml", Changed(kObjects));
  CommandResult diff = Kubectl({"diff", "--server-side", "-f", changed});
  EXPECT_EQ(diff.exit_code, 1) << diff.output;
  EXPECT_THAT(diff.output, HasSubstr("+    port: 8081"));
  CommandResult again = Kubectl({"apply", "--server-side", "-f", changed});
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_EQ(Field("svc/web", ".spec.ports[*].port"), "80 8081");  // 81, dropped, is gone
  EXPECT_EQ(Field("cm/settings", ".data.rate"), "0.2");
  EXPECT_EQ(Field("cm/settings", ".metadata.managedFields[0].manager"), "kubectl");

  ASSERT_EQ(
      Kubectl({"patch", "cm", "settings", "--type", "merge", "-p", R"({"data":{"rate":"0.5"}})"})
          .exit_code,
      0);
  CommandResult conflict = Kubectl({"apply", "--server-side", "-f", changed});
  EXPECT_NE(conflict.exit_code, 0);
  EXPECT_THAT(conflict.output, HasSubstr("Apply failed with 1 conflict: conflict with "
                                         "\"kubectl-patch\" using v1: .data.rate"));
  CommandResult forced = Kubectl({"apply", "--server-side", "--force-conflicts", "-f", changed});
  EXPECT_EQ(forced.exit_code, 0) << forced.output;
  EXPECT_EQ(Field("cm/settings", ".data.rate"), "0.2");

  // A Kubeflow job applied client-side, then server-side unchanged: the
  // server's defaults (a replica's port, ...) are in both, no conflict.
  std::string job = Write("job.yaml", R"(
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: defaulted}
spec:
  runPolicy: {suspend: true}
  pytorchReplicaSpecs:
    Master:
      template:
        spec:
          containers: [{name: pytorch, image: none, command: [sleep, "1"]}]
)");
  ASSERT_EQ(Kubectl({"apply", "-f", job}).exit_code, 0);
  CommandResult moved = Kubectl({"apply", "--server-side", "-f", job});
  EXPECT_EQ(moved.exit_code, 0) << moved.output;
  EXPECT_THAT(moved.output, HasSubstr("pytorchjob.kubeflow.org/defaulted serverside-applied"));
}

// A job whose script is missing fails; under cleanPodPolicy None its pods
// stay, stopped, so `kubectl logs` shows why, and its Failed condition
// says which container failed, how, and what it printed last.
TEST_F(KubectlEverydayE2eTest, AFailedJobKeepsItsPodsAndLogsAndSaysWhy) {
  StartServer();
  ASSERT_EQ(Kubectl({"apply", "-f", Write("missing.yaml", R"(
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: pd-missing}
spec:
  runPolicy: {cleanPodPolicy: None, backoffLimit: 1}
  pytorchReplicaSpecs:
    Master:
      restartPolicy: OnFailure
      template:
        spec:
          containers:
          - {name: pytorch, image: none, command: [sh, -c, 'echo starting; cat /nonexistent/train.py']}
    Worker:
      replicas: 1
      restartPolicy: OnFailure
      template:
        spec:
          containers: [{name: pytorch, image: none, command: [sleep, "300"]}]
)")})
                .exit_code,
            0);
  ASSERT_TRUE(Eventually(
      [&] { return Field("pytorchjob/pd-missing", ".status.conditions[-1:].type") == "Failed"; },
      std::chrono::seconds(60)));
  EXPECT_THAT(Field("pytorchjob/pd-missing", ".status.conditions[-1:].message"),
              HasSubstr("backoff limit (last failure: pod pd-missing-master-0, container pytorch, "
                        "exit code 1, Error: starting | cat: /nonexistent/train.py: No such file"));
  CommandResult logs = Kubectl({"logs", "pd-missing-master-0"});
  EXPECT_EQ(logs.exit_code, 0) << logs.output;
  EXPECT_THAT(logs.output, HasSubstr("cat: /nonexistent/train.py: No such file or directory"));
  // The worker still ran: stopped where it runs, its pod kept.
  ASSERT_TRUE(Eventually([&] {
    return Field("pod/pd-missing-worker-0", ".status.reason") == "DeadlineExceeded";
  })) << Kubectl({"get", "pod", "pd-missing-worker-0", "-o", "yaml"}).output;
  EXPECT_EQ(Field("pod/pd-missing-worker-0", ".status.phase"), "Failed");
  EXPECT_TRUE(Eventually([&] { return ProcessesUnderHome() == 0; }));
}

// The server says `export KUBECONFIG=...`: the client verbs then find it
// as kubectl does, with no --home.
TEST_F(KubectlEverydayE2eTest, ClientVerbsFindTheServerThroughKubeconfig) {
  StartServer();
  auto get = [&](std::vector<std::pair<std::string, std::string>> env,
                 std::vector<std::string> flags) {
    std::vector<std::string> argv = {TRAINYARD_BINARY, "get", "namespaces"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    env.emplace_back("PATH", kPath);
    env.emplace_back("HOME", (dir_ / "elsewhere").string());
    env.emplace_back("TRAINYARD_HOME", (dir_ / "elsewhere").string());
    fs::path out = dir_ / "get.out";
    fs::remove(out);
    Result<runtime::Process> p = runtime::Process::Start(
        {.argv = argv, .env = env, .working_dir = dir_.string(), .log_path = out.string()});
    EXPECT_TRUE(p.ok());
    std::optional<runtime::ExitStatus> status = p->WaitFor(std::chrono::seconds(30));
    return CommandResult{status ? status->exit_code : -1, ReadFile(out)};
  };
  CommandResult by_env = get({{"KUBECONFIG", "/nonexistent:" + Kubeconfig().string()}}, {});
  EXPECT_EQ(by_env.exit_code, 0) << by_env.output;
  EXPECT_THAT(by_env.output, HasSubstr("default"));
  CommandResult by_flag = get({}, {"--kubeconfig", Kubeconfig().string()});
  EXPECT_EQ(by_flag.exit_code, 0) << by_flag.output;
  CommandResult none = get({}, {});
  EXPECT_NE(none.exit_code, 0);
  EXPECT_THAT(none.output, HasSubstr("--kubeconfig, $KUBECONFIG, --home"));
}

}  // namespace
}  // namespace trainyard::cli::testing
