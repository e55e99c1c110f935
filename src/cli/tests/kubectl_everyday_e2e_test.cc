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

}  // namespace
}  // namespace trainyard::cli::testing
