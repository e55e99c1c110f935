// `trainyard server` driven by the real kubectl, as a user would: the
// README's PyTorch job applied, watched, its logs followed, described,
// suspended, resumed and deleted; and the server killed with SIGKILL again
// and again while jobs run and restart, against a run without crashes.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <sys/mount.h>

#include <algorithm>

#include "cli/tests/server_fixture.h"
#include "cli/tests/server_jobs.h"

namespace trainyard::cli::testing {
namespace {

using ::testing::HasSubstr;

class ServerE2eTest : public ServerFixture {};

TEST_F(ServerE2eTest, KubectlAppliesWatchesFollowsDescribesSuspendsAndDeletes) {
  TRAINYARD_NEEDS(PythonHas("torch, sklearn"), "python3-torch and python3-sklearn");
  StartServer();
  CommandResult applied = Kubectl({"apply", "-f", "examples/pytorch-digits.yaml"});
  ASSERT_EQ(applied.exit_code, 0) << applied.output;
  EXPECT_THAT(applied.output, HasSubstr("pytorchjob.kubeflow.org/pytorch-digits created"));
  fs::path watched = dir_ / "watch.out";
  Result<runtime::Process> watch = StartKubectl({"get", "pytorchjobs", "-w"}, watched);
  ASSERT_TRUE(watch.ok());
  ASSERT_TRUE(Eventually(
      [&] { return Field("pod/pytorch-digits-master-0", ".status.phase") == "Running"; }));
  // Followed to the end of the run, while it trains.
  CommandResult logs = Kubectl({"logs", "-f", "pytorch-digits-master-0"});
  EXPECT_EQ(logs.exit_code, 0);
  EXPECT_THAT(logs.output, HasSubstr("all ranks agree"));
  ASSERT_TRUE(Eventually([&] { return ReadFile(watched).find("Succeeded") != std::string::npos; }))
      << ReadFile(watched);
  EXPECT_THAT(ReadFile(watched), ::testing::ContainsRegex("NAME +STATE +AGE\npytorch-digits +"));
  CommandResult described = Kubectl({"describe", "pytorchjob", "pytorch-digits"});
  EXPECT_EQ(described.exit_code, 0) << described.output;
  EXPECT_THAT(described.output, HasSubstr("Succeeded"));
  // The job's story, as upstream's operator records it.
  EXPECT_THAT(described.output,
              ::testing::ContainsRegex(
                  "Normal +SuccessfulCreatePod .* Created pod: pytorch-digits-master-0"));
  EXPECT_THAT(described.output, ::testing::ContainsRegex("Normal +PyTorchJobSucceeded "));
  CommandResult pods = Kubectl({"get", "pods"});
  EXPECT_THAT(pods.output, ::testing::ContainsRegex("pytorch-digits-master-0 +0/1 +Completed +0"));
  // What the master printed as name=value, kept: loss every fifth epoch of
  // 30 (docs/tracking.md), and the accuracy once.
  CommandResult metrics = Trainyard({"metrics", "pytorchjob", "pytorch-digits"});
  EXPECT_THAT(metrics.output, ::testing::ContainsRegex("\naccuracy +1  0\\.9[0-9]+ "));
  EXPECT_THAT(metrics.output, ::testing::ContainsRegex("\nloss +6  0\\.[0-9]+ "));

  // Suspend and resume, as upstream documents it: a merge patch of runPolicy.suspend.
  ASSERT_EQ(Kubectl({"apply", "-f", Write("sleeper.yaml", kSleeper)}).exit_code, 0);
  ASSERT_TRUE(
      Eventually([&] { return Field("pod/sleeper-master-0", ".status.phase") == "Running"; }));
  CommandResult suspended = Kubectl({"patch", "pytorchjob", "sleeper", "--type", "merge", "-p",
                                     R"({"spec":{"runPolicy":{"suspend":true}}})"});
  ASSERT_EQ(suspended.exit_code, 0) << suspended.output;
  ASSERT_TRUE(Eventually([&] {
    return Kubectl({"get", "pods", "-o", "name"}).output.find("sleeper") == std::string::npos;
  }));
  EXPECT_EQ(Field("pytorchjob/sleeper", ".status.conditions[-1:].type"), "Suspended");
  ASSERT_EQ(Kubectl({"patch", "pytorchjob", "sleeper", "--type", "merge", "-p",
                     R"({"spec":{"runPolicy":{"suspend":false}}})"})
                .exit_code,
            0);
  ASSERT_TRUE(
      Eventually([&] { return Field("pod/sleeper-master-0", ".status.phase") == "Running"; }));

  // A bad manifest is refused with the field at fault, and nothing is made.
  CommandResult bad = Kubectl({"apply", "-f", Write("bad.yaml", kTwoMasters)});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_THAT(bad.output, HasSubstr("spec.pytorchReplicaSpecs[Master].replicas"));
  EXPECT_NE(Kubectl({"get", "pytorchjob", "bad"}).exit_code, 0);

  CommandResult deleted = Kubectl({"delete", "pytorchjob", "sleeper", "pytorch-digits"});
  EXPECT_EQ(deleted.exit_code, 0) << deleted.output;
  EXPECT_THAT(deleted.output, HasSubstr("pytorchjob.kubeflow.org \"sleeper\" deleted"));
  ASSERT_TRUE(Eventually([&] { return Kubectl({"get", "pods", "-o", "name"}).output.empty(); }));
  EXPECT_TRUE(Eventually([&] { return ProcessesUnderHome() == 0; }));
  watch->Stop(std::chrono::seconds(1));
}

// The kinds added through the registry alone, with the real kubectl: a
// Secret made by `kubectl create secret generic` reaches a replica's env
// through secretKeyRef, decoded; Services and claims are listed as kubectl
// lists them, with the warning of what trainyard does not do with them.
TEST_F(ServerE2eTest, KubectlCreatesSecretsServicesAndClaimsAndAJobReadsTheSecret) {
  StartServer();
  CommandResult secret =
      Kubectl({"create", "secret", "generic", "creds", "--from-literal=token=hunter2"});
  ASSERT_EQ(secret.exit_code, 0) << secret.output;
  EXPECT_THAT(Kubectl({"get", "secrets"}).output, HasSubstr("creds   Opaque   1"));
  ASSERT_EQ(Kubectl({"apply", "-f", Write("job.yaml", R"(
apiVersion: batch/v1
kind: Job
metadata: {name: reader}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: debian
        command: [sh, -c, 'echo "token is $TOKEN"']
        env:
        - name: TOKEN
          valueFrom: {secretKeyRef: {name: creds, key: token}}
)")})
                .exit_code,
            0);
  ASSERT_TRUE(Eventually([&] {
    return Kubectl({"logs", "job/reader"}).output.find("token is hunter2") != std::string::npos;
  }));

  CommandResult service = Kubectl({"apply", "-f", Write("svc.yaml", R"(
apiVersion: v1
kind: Service
metadata: {name: trainer}
spec: {clusterIP: None, ports: [{port: 23456}]}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: checkpoints}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
)")});
  ASSERT_EQ(service.exit_code, 0) << service.output;
  EXPECT_THAT(service.output, HasSubstr("does not route its traffic"));
  EXPECT_THAT(Kubectl({"get", "svc"}).output, HasSubstr("23456/TCP"));
  ASSERT_TRUE(Eventually([&] {
    return Kubectl({"get", "pvc", "checkpoints"}).output.find("Bound             1Gi        RWO") !=
           std::string::npos;
  })) << Kubectl({"get", "pvc", "checkpoints"}).output;
  CommandResult bad = Kubectl({"apply", "-f", Write("bad-svc.yaml", R"(
apiVersion: v1
kind: Service
metadata: {name: web}
spec: {ports: [{port: 70000}]}
)")});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_THAT(bad.output, HasSubstr("must be between 1 and 65535"));
}

// A claim a running pod uses is not deleted until the pod ends (the
// pvc-protection finalizer); its data stays after it. The pod also reads a
// Secret through a secret volume.
TEST_F(ServerE2eTest, AClaimInUseIsDeletedOnlyOnceItsPodEndsAndItsDataStays) {
  StartServer();
  ASSERT_EQ(
      Kubectl({"create", "secret", "generic", "creds", "--from-literal=token=hunter2"}).exit_code,
      0);
  CommandResult applied = Kubectl({"apply", "-f", Write("job.yaml", R"y(
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: checkpoints}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: trainer}
spec:
  template:
    spec:
      restartPolicy: Never
      volumes:
      - {name: ckpt, persistentVolumeClaim: {claimName: checkpoints}}
      - {name: creds, secret: {secretName: creds}}
      containers:
      - name: main
        image: debian
        command: [sh, -c, 'cp /etc/creds/token /ckpt/copied; until [ -e /ckpt/stop ]; do sleep 0.05; done']
        volumeMounts:
        - {name: ckpt, mountPath: /ckpt}
        - {name: creds, mountPath: /etc/creds}
)y")});
  ASSERT_EQ(applied.exit_code, 0) << applied.output;
  fs::path data = home_ / "claims" / "default" / "checkpoints";
  // cp makes the file before it writes it: waited for whole.
  ASSERT_TRUE(Eventually([&] { return !ReadFile(data / "copied").empty(); }));
  EXPECT_EQ(ReadFile(data / "copied"), "hunter2");
  CommandResult deleted = Kubectl({"delete", "pvc", "checkpoints", "--wait=false"});
  ASSERT_EQ(deleted.exit_code, 0) << deleted.output;
  EXPECT_THAT(Kubectl({"get", "pvc", "checkpoints"}).output, HasSubstr("Terminating"));
  std::ofstream(data / "stop") << "";
  ASSERT_TRUE(Eventually([&] {
    return Kubectl({"get", "pvc", "checkpoints"}).output.find("NotFound") != std::string::npos;
  })) << Kubectl({"get", "pvc", "checkpoints"}).output;
  EXPECT_TRUE(fs::exists(data / "copied")) << "the data outlives its claim";
}

// Debian's python3-kubernetes client: CustomObjectsApi create, list, watch
// and delete, CoreV1Api pods and logs (tests/python/kube_client_check.py).
TEST_F(ServerE2eTest, ThePythonKubernetesClientCreatesListsWatchesAndDeletes) {
  TRAINYARD_NEEDS(PythonHas("kubernetes"), "python3-kubernetes");
  StartServer();
  CommandResult check = PythonCheck("kube_client_check.py");
  EXPECT_EQ(check.exit_code, 0) << check.output;
  EXPECT_THAT(check.output, HasSubstr("every step as expected"));
}

// /metrics after a job ran: upstream's counters with their labels, and
// text that Prometheus' own checker accepts.
TEST_F(ServerE2eTest, MetricsCountTheJobAndPassPromtool) {
  StartServer();
  ASSERT_EQ(Kubectl({"apply", "-f", Write("sleeper.yaml", kSleeper)}).exit_code, 0);
  ASSERT_TRUE(
      Eventually([&] { return Field("pod/sleeper-master-0", ".status.phase") == "Running"; }));
  CommandResult metrics = Kubectl({"get", "--raw", "/metrics"});
  ASSERT_EQ(metrics.exit_code, 0) << metrics.output;
  EXPECT_THAT(metrics.output, HasSubstr("training_operator_jobs_created_total{framework="
                                        "\"pytorch\",job_namespace=\"default\"} 1\n"));
  EXPECT_THAT(metrics.output, HasSubstr("trainyard_running_replicas 1\n"));
  EXPECT_THAT(metrics.output, HasSubstr("trainyard_apiserver_request_total{code=\"201\",resource="
                                        "\"pytorchjobs\",verb=\"POST\"} 1\n"));
  TRAINYARD_NEEDS(system("command -v promtool >/dev/null") == 0, "promtool (Debian's prometheus)");
  std::string file = Write("metrics.txt", metrics.output);
  Result<runtime::Process> check =
      runtime::Process::Start({.argv = {"sh", "-c", "promtool check metrics < " + file},
                               .env = {{"PATH", kPath}},
                               .log_path = (dir_ / "promtool.out").string()});
  ASSERT_TRUE(check.ok());
  EXPECT_EQ(check->WaitFor(std::chrono::seconds(30))->exit_code, 0)
      << ReadFile(dir_ / "promtool.out");
}

// HTTPS and a token file: no token, no access; a namespace's token, only
// there. (kubectl sends tokens only over HTTPS.)
TEST_F(ServerE2eTest, WithATokenFileKubectlNeedsATokenForItsNamespace) {
  std::string cert, key;
  TRAINYARD_NEEDS(MakeCertificate(cert, key), "openssl");
  std::string tokens = Write("tokens", "ops-token-0001 ops *\nteam-token-01 alice team-a\n");
  StartServer({"--tls-cert", cert, "--tls-key", key, "--token-file", tokens});
  EXPECT_THAT(ReadFile(Kubeconfig()), HasSubstr("server: \"https://127.0.0.1:"));
  // The kubeconfig carries the token that may do anything.
  EXPECT_EQ(Kubectl({"create", "namespace", "team-a"}).exit_code, 0);
  CommandResult anonymous = Kubectl({"get", "pods", "--token", "wrong-token-00"});
  EXPECT_NE(anonymous.exit_code, 0);
  EXPECT_THAT(anonymous.output, HasSubstr("provide credentials"));
  EXPECT_EQ(Kubectl({"get", "pods", "-n", "team-a", "--token", "team-token-01"}).exit_code, 0);
  CommandResult elsewhere = Kubectl({"get", "pods", "-n", "default", "--token", "team-token-01"});
  EXPECT_NE(elsewhere.exit_code, 0);
  EXPECT_THAT(elsewhere.output, HasSubstr("User \"alice\" cannot list resource \"pods\""));
}

// A job's own metrics: every name=number its master prints is collected
// while it runs, kept after it ends, and shown by `trainyard metrics`.
TEST_F(ServerE2eTest, AJobsOwnMetricsAreCollectedFromItsMasterAndShown) {
  StartServer();
  CommandResult applied = Kubectl({"apply", "-f", Write("job.yaml", R"(
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: tracked}
spec:
  pytorchReplicaSpecs:
    Master: {restartPolicy: Never, template: {spec: {containers: [{name: pytorch, image: none,
      command: [sh, -c, 'for i in 1 2 3; do echo "epoch=$i loss=0.$((10 - 3 * i)) done"; done']}]}}}
    Worker: {replicas: 1, restartPolicy: Never, template: {spec: {containers: [{name: pytorch,
      image: none, command: [sh, -c, 'echo "loss=99"']}]}}}
)")});
  ASSERT_EQ(applied.exit_code, 0) << applied.output;
  ASSERT_TRUE(Eventually([&] {
    return Field("pytorchjob/tracked", ".status.conditions[?(@.type==\"Succeeded\")].status") ==
           "True";
  }));
  ASSERT_TRUE(Eventually([&] {
    return Trainyard({"metrics", "pytorchjob", "tracked"}).output.find("loss") != std::string::npos;
  }));
  CommandResult metrics = Trainyard({"metrics", "pytorchjob", "tracked"});
  EXPECT_EQ(metrics.exit_code, 0) << metrics.output;
  // The master's three values only: the worker's 99 is not the job's.
  EXPECT_THAT(metrics.output, ::testing::ContainsRegex("epoch +3  3 +1 +3 +"));
  EXPECT_THAT(metrics.output, ::testing::ContainsRegex("loss +3  0.1 +0.1 +0.7 +█▅▁"));
  CommandResult loss = Trainyard({"metrics", "pytorchjob", "tracked", "--metric", "loss"});
  EXPECT_THAT(loss.output, ::testing::ContainsRegex("STEP +VALUE +TIME\n +0  0.7 .*\n +1  0.4 "
                                                    ".*\n +2  0.1 "));
  // Gone with the job.
  ASSERT_EQ(Kubectl({"delete", "pytorchjob", "tracked"}).exit_code, 0);
  EXPECT_NE(Trainyard({"metrics", "pytorchjob", "tracked"}).exit_code, 0);
}

// Katib's collectors, chosen per job by annotation: a file in its output
// folder read with a filter of its own (what it prints is not read), its
// event files by TensorBoard's run/tag names and steps; and a batch Job's
// and a JobSet's output.
TEST_F(ServerE2eTest, AJobsCollectorIsChosenByItsAnnotation) {
  TRAINYARD_NEEDS(PythonHas("struct"), "python3");
  StartServer();
  CommandResult applied = Kubectl({"apply", "-f",
                                   Write("jobs.yaml", Format(R"(
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: filed
  annotations:
    trainyard.dev/metrics: File:logs/train.log
    trainyard.dev/metrics-filter: '([a-z]+):\s*([0-9.]+)'
spec:
  pytorchReplicaSpecs:
    Master: {restartPolicy: Never, template: {spec: {containers: [{name: pytorch, image: none,
      command: [sh, -c, 'mkdir -p $TRAINYARD_OUTPUT_DIR/logs; echo loss=99; for v in 0.5 0.25; do echo "loss: $v" >> $TRAINYARD_OUTPUT_DIR/logs/train.log; done']}]}}}
---
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: boarded
  annotations: {trainyard.dev/metrics: 'TensorFlowEvent:tb'}
spec:
  pytorchReplicaSpecs:
    Master: {restartPolicy: Never, template: {spec: {containers: [{name: pytorch, image: none,
      command: [sh, -c, '/usr/bin/python3 %s/tests/python/write_tfevents.py 0.3 $TRAINYARD_OUTPUT_DIR/tb']}]}}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: batched}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: none, command: [sh, -c, 'echo acc=0.75']}]
---
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: setted}
spec:
  replicatedJobs:
  - name: main
    replicas: 1
    template:
      spec:
        template:
          spec:
            restartPolicy: Never
            containers: [{name: c, image: none, command: [sh, -c, 'echo acc=0.5']}]
)",
                                                             TRAINYARD_SOURCE_DIR))});
  ASSERT_EQ(applied.exit_code, 0) << applied.output;
  auto metric = [&](const std::string& kind, const std::string& name, const std::string& m) {
    return Trainyard({"metrics", kind, name, "--metric", m}).output;
  };
  ASSERT_TRUE(Eventually([&] {
    return Field("pytorchjob/filed", ".status.conditions[-1:].type") == "Succeeded" &&
           Field("pytorchjob/boarded", ".status.conditions[-1:].type") == "Succeeded" &&
           Field("job/batched", ".status.conditions[-1:].type") == "Complete" &&
           Field("jobset/setted", ".status.conditions[-1:].type") == "Completed";
  }));
  EXPECT_THAT(metric("pytorchjob", "filed", "loss"),
              ::testing::ContainsRegex("STEP +VALUE +TIME\n +0  0.5 .*\n +1  0.25 [^\n]*\n$"));
  EXPECT_THAT(metric("pytorchjob", "boarded", "test/accuracy"),
              ::testing::ContainsRegex(" +1  0.9 .*\n +2  0.95 .*\n +3  0.96666664 "));
  EXPECT_THAT(Trainyard({"metrics", "pytorchjob", "boarded"}).output, HasSubstr("train/accuracy"));
  EXPECT_THAT(metric("job", "batched", "acc"), ::testing::ContainsRegex(" +0  0.75 "));
  EXPECT_THAT(metric("jobset", "setted", "acc"), ::testing::ContainsRegex(" +0  0.5 "));
  // A metric that is not there is an error, naming those that are.
  CommandResult none = Trainyard({"metrics", "job", "batched", "--metric", "nope"});
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_THAT(none.output, HasSubstr("No metric nope; there are: acc"));
}

// A replica that logs with MLflow, as MLflow's client does over REST
// (tests/python/mlflow_client_calls.py: the mlflow package is in no
// registry here), with the variables the replica is given: its values are
// the job's own metrics, beside what the server collects itself.
TEST_F(ServerE2eTest, AReplicaLoggingWithMlflowsClientCallsLogsToItsJob) {
  TRAINYARD_NEEDS(PythonHas("json"), "python3");
  StartServer();
  CommandResult applied = Kubectl({"apply", "-f", Write("job.yaml", R"(
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: mlflowed}
spec:
  pytorchReplicaSpecs:
    Master:
      restartPolicy: Never
      template:
        spec:
          containers:
          - name: pytorch
            image: none
            command: [/usr/bin/python3, tests/python/mlflow_client_calls.py, mlflow_loss,
                      "5:0.9", "10:0.5", "15:0.2"]
)")});
  ASSERT_EQ(applied.exit_code, 0) << applied.output;
  ASSERT_TRUE(Eventually([&] {
    return Field("pytorchjob/mlflowed", ".status.conditions[?(@.type==\"Succeeded\")].status") ==
           "True";
  })) << Kubectl({"logs", "mlflowed-master-0"}).output;
  EXPECT_THAT(Kubectl({"logs", "mlflowed-master-0"}).output,
              HasSubstr("logged to mlflowed as pytorchjob-mlflowed"));
  CommandResult loss = Trainyard({"metrics", "pytorchjob", "mlflowed", "--metric", "mlflow_loss"});
  EXPECT_EQ(loss.exit_code, 0) << loss.output;
  // At the steps it logged them at.
  EXPECT_THAT(loss.output, ::testing::ContainsRegex("STEP +VALUE +TIME\n +5  0.9 .*\n +10  0.5 "
                                                    ".*\n +15  0.2 "));
  // Its artifacts: what log_artifact copied and what it wrote to its
  // output folder, kept after its replica is gone.
  const std::string artifacts =
      "/apis/kubeflow.org/v1/namespaces/default/pytorchjobs/mlflowed/artifacts";
  CommandResult listed = Kubectl({"get", "--raw", artifacts});
  EXPECT_THAT(listed.output,
              ::testing::ContainsRegex(R"("path":"model.txt".*"path":"notes.txt","size":32)"));
  EXPECT_EQ(Kubectl({"get", "--raw", artifacts + "?path=model.txt"}).output, "weights\n");
  CommandResult got = Trainyard({"artifacts", "pytorchjob", "mlflowed"});
  EXPECT_THAT(got.output, ::testing::ContainsRegex("PATH +SIZE +MODIFIED\nmodel.txt +8 B"));
  fs::path copy = dir_ / "notes-copy.txt";
  EXPECT_EQ(Trainyard({"artifacts", "pytorchjob", "mlflowed", "notes.txt", "-o", copy.string()})
                .exit_code,
            0);
  EXPECT_EQ(ReadFile(copy), "what mlflow.log_artifact copied\n");
  // -o a folder puts it in there, as cp does; -o without a file is an error.
  fs::create_directories(dir_ / "got");
  EXPECT_EQ(
      Trainyard({"artifacts", "pytorchjob", "mlflowed", "model.txt", "-o", (dir_ / "got").string()})
          .exit_code,
      0);
  EXPECT_EQ(ReadFile(dir_ / "got" / "model.txt"), "weights\n");
  EXPECT_THAT(Trainyard({"artifacts", "pytorchjob", "mlflowed", "-o", "x"}).output,
              HasSubstr("-o names where one file goes"));
  // Kept after its job is deleted (for --keep-artifacts), and found by
  // its name.
  ASSERT_EQ(Kubectl({"delete", "pytorchjob", "mlflowed"}).exit_code, 0);
  CommandResult kept = Trainyard({"artifacts", "pytorchjob", "mlflowed"});
  EXPECT_EQ(kept.exit_code, 0) << kept.output;
  EXPECT_THAT(kept.output,
              ::testing::ContainsRegex(
                  "pytorchjob mlflowed was deleted at .*; its artifacts are kept until"));
  EXPECT_THAT(kept.output, HasSubstr("model.txt"));
}

// The dashboard's page and modules, as a browser fetches them (its pages
// are checked in Chromium by tests/browser/dashboard_test.py).
TEST_F(ServerE2eTest, TheDashboardIsServedAndABrowserGetsListsGzippedAtMost) {
  TRAINYARD_NEEDS(PythonHas("yaml"), "python3-yaml");
  StartServer();
  EXPECT_THAT(ReadFile(dir_ / "server.log"), ::testing::ContainsRegex("dashboard: http://"));
  CommandResult check = PythonCheck("dashboard_http_check.py");
  EXPECT_EQ(check.exit_code, 0) << check.output;
}

// Code that reports nothing but prints its epochs: its progress and the
// time left at its pace show with `kubectl get -o wide` (beyond upstream:
// status.trainerStatus, KEP-2779's field, read from its output).
TEST_F(ServerE2eTest, AJobThatPrintsItsEpochsShowsItsProgress) {
  StartServer();
  CommandResult applied = Kubectl({"apply", "-f", Write("epochs.yaml", R"(
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: epochs}
spec:
  pytorchReplicaSpecs:
    Master:
      template:
        spec:
          containers:
            - name: pytorch
              image: none
              command: [sh, -c, 'echo "Epoch 1/4 loss=0.9"; sleep 1; echo "Epoch 2/4 loss=0.5"; exec sleep 300']
)")});
  ASSERT_EQ(applied.exit_code, 0) << applied.output;
  ASSERT_TRUE(Eventually([&] {
    return Field("pytorchjob/epochs", ".status.trainerStatus.progressPercentage") == "50";
  })) << Kubectl({"get", "pytorchjob", "epochs", "-o", "yaml"}).output;
  // One epoch a second so far: two left, about 2 s.
  EXPECT_FALSE(
      Field("pytorchjob/epochs", ".status.trainerStatus.estimatedRemainingSeconds").empty());
  // What it printed of its metrics, as a trainer would report them (the
  // latest read, refreshed every 10 s at most).
  ASSERT_TRUE(Eventually([&] {
    return !Field("pytorchjob/epochs", ".status.trainerStatus.metrics[?(@.name==\"loss\")].value")
                .empty();
  }));
  EXPECT_THAT(
      Field("pytorchjob/epochs", ".status.trainerStatus.metrics[?(@.name==\"loss\")].value"),
      ::testing::AnyOf("0.9", "0.5"));
  EXPECT_THAT(Kubectl({"get", "pytorchjob", "epochs", "-o", "wide"}).output,
              ::testing::ContainsRegex(
                  "NAME +STATE +AGE +PROGRESS +ETA\nepochs +Running +[0-9]+s +50% +[0-9]+s"));
  // Upstream's columns stay as they are without -o wide.
  EXPECT_THAT(Kubectl({"get", "pytorchjob", "epochs"}).output,
              ::testing::ContainsRegex("NAME +STATE +AGE\nepochs +Running +[0-9]+s\n"));
}

// The same for Kubernetes' own job kinds, under trainyard's status field:
// a batch Job and a JobSet show theirs with -o wide.
TEST_F(ServerE2eTest, ABatchJobAndAJobSetThatPrintTheirStepsShowTheirProgress) {
  StartServer();
  constexpr const char* kSteps =
      R"(command: [sh, -c, 'echo "step 1 of 4"; sleep 1; echo "step 2 of 4"; exec sleep 300'])";
  CommandResult applied = Kubectl({"apply", "-f",
                                   Write("steps.yaml", fmt::format(R"(
apiVersion: batch/v1
kind: Job
metadata: {{name: steps}}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{{name: main, image: none, {0}}}]
---
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {{name: set}}
spec:
  replicatedJobs:
  - name: node
    template:
      spec:
        template:
          spec:
            restartPolicy: Never
            containers: [{{name: main, image: none, {0}}}]
)",
                                                                   kSteps))});
  ASSERT_EQ(applied.exit_code, 0) << applied.output;
  for (const char* job : {"job/steps", "jobset/set"}) {
    ASSERT_TRUE(Eventually([&] {
      return Field(job, ".status.trainerStatus.progressPercentage") == "50";
    })) << Kubectl({"get", job, "-o", "yaml"}).output;
  }
  EXPECT_THAT(Kubectl({"get", "job", "steps", "-o", "wide"}).output,
              ::testing::ContainsRegex("PROGRESS +ETA\nsteps .* 50% +[0-9]+s"));
  EXPECT_THAT(Kubectl({"get", "jobset", "set", "-o", "wide"}).output,
              ::testing::ContainsRegex("PROGRESS +ETA\nset .* 50% +[0-9]+s"));
  EXPECT_THAT(Kubectl({"get", "job", "steps"}).output, ::testing::Not(HasSubstr("PROGRESS")));
}

// A Katib trial's job: its output is read for the trial's metrics, and
// its counts give the job its progress, as a job of its own.
TEST_F(ServerE2eTest, ATrialsJobShowsTheProgressItsOutputDeclares) {
  StartServer();
  CommandResult applied = Kubectl({"apply", "-f", Write("tune.yaml", R"(
apiVersion: kubeflow.org/v1beta1
kind: Experiment
metadata: {name: counted}
spec:
  objective: {type: minimize, objectiveMetricName: loss}
  algorithm: {algorithmName: random}
  maxTrialCount: 1
  parallelTrialCount: 1
  parameters:
    - {name: lr, parameterType: double, feasibleSpace: {min: "0.01", max: "0.1"}}
  trialTemplate:
    primaryContainerName: training
    trialParameters: [{name: lr, reference: lr}]
    trialSpec:
      apiVersion: batch/v1
      kind: Job
      spec:
        template:
          spec:
            restartPolicy: Never
            containers:
              - name: training
                image: none
                command: [sh, -c, 'echo "Epoch 1/4"; echo loss=0.9; sleep 1; echo "Epoch 2/4"; exec sleep 300', '${trialParameters.lr}']
)")});
  ASSERT_EQ(applied.exit_code, 0) << applied.output;
  ASSERT_TRUE(Eventually([&] {
    return Field("jobs", ".items[0].status.trainerStatus.progressPercentage") == "50";
  })) << Kubectl({"get", "jobs", "-o", "yaml"}).output;
  // The trial still has its metric.
  ASSERT_TRUE(Eventually([&] {
    return Kubectl({"get", "--raw",
                    "/apis/kubeflow.org/v1beta1/namespaces/default/trials/" +
                        Field("trials", ".items[0].metadata.name") + "/observations"})
               .output.find("0.9") != std::string::npos;
  }));
}

// trainyard's own verbs against the server: what a user without kubectl
// does, with human output.
TEST_F(ServerE2eTest, TrainyardsOwnVerbsApplyGetDescribeLogsSuspendAndDelete) {
  StartServer();
  std::string sleeper = Write("sleeper.yaml", kSleeper);
  CommandResult applied = Trainyard({"apply", "-f", sleeper});
  EXPECT_EQ(applied.exit_code, 0) << applied.output;
  EXPECT_EQ(applied.output, "pytorchjob.kubeflow.org/sleeper created\n");
  EXPECT_EQ(Trainyard({"apply", "-f", sleeper}).output,
            "pytorchjob.kubeflow.org/sleeper unchanged\n");
  ASSERT_TRUE(
      Eventually([&] { return Field("pod/sleeper-master-0", ".status.phase") == "Running"; }));
  EXPECT_THAT(Trainyard({"get", "pytorchjobs"}).output,
              ::testing::ContainsRegex("NAME +STATE +AGE\nsleeper +Running +[0-9]+s\n"));
  EXPECT_THAT(Trainyard({"get", "po", "-o", "wide"}).output,
              ::testing::ContainsRegex("sleeper-master-0 +1/1 +Running +0 .* 127.0.0.1"));
  EXPECT_THAT(Trainyard({"get", "pytorchjob", "sleeper", "-o", "json"}).output,
              HasSubstr("\"kind\": \"PyTorchJob\""));
  CommandResult described = Trainyard({"describe", "pytorchjob", "sleeper"});
  EXPECT_THAT(described.output, HasSubstr("Conditions:\n  Created"));
  EXPECT_THAT(described.output, ::testing::ContainsRegex("Replicas:\n +NAME +READY"));
  EXPECT_THAT(described.output, HasSubstr("Created pod: sleeper-master-0"));
  EXPECT_THAT(Trainyard({"events", "--for", "pytorchjob/sleeper"}).output,
              HasSubstr("PyTorchJobRunning"));
  EXPECT_EQ(Trainyard({"suspend", "pytorchjob", "sleeper"}).output,
            "pytorchjob.kubeflow.org/sleeper suspended\n");
  ASSERT_TRUE(Eventually([&] { return Kubectl({"get", "pods", "-o", "name"}).output.empty(); }));
  EXPECT_EQ(Trainyard({"resume", "pytorchjob", "sleeper"}).exit_code, 0);
  ASSERT_TRUE(
      Eventually([&] { return Field("pod/sleeper-master-0", ".status.phase") == "Running"; }));
  // Logs, of a replica that says something.
  ASSERT_EQ(Trainyard({"apply", "-f",
                       Write("counter.yaml", Format(kRestartingJob, (dir_ / "mark").string()))})
                .exit_code,
            0);
  ASSERT_TRUE(Eventually(
      [&] { return Field("pytorchjob/counter", ".status.conditions[-1:].type") == "Succeeded"; }));
  EXPECT_EQ(Trainyard({"logs", "counter-master-0", "--tail", "2"}).output, "line 19\nline 20\n");
  EXPECT_EQ(Trainyard({"logs", "counter-master-0", "--previous"}).output, "first run\n");

  CommandResult deleted = Trainyard({"delete", "pytorchjob", "sleeper", "nope"});
  EXPECT_EQ(deleted.exit_code, 1);  // one of them was not there
  EXPECT_THAT(deleted.output, HasSubstr("pytorchjob.kubeflow.org \"sleeper\" deleted"));
  EXPECT_THAT(deleted.output,
              HasSubstr("error: NotFound: pytorchjobs.kubeflow.org \"nope\" not found"));
  EXPECT_THAT(Trainyard({"get", "widgets"}).output,
              HasSubstr("the server doesn't have a resource type \"widgets\""));
  KillServer();
  CommandResult unreachable = Trainyard({"get", "pods"});
  EXPECT_EQ(unreachable.exit_code, 1);
  EXPECT_THAT(unreachable.output, HasSubstr("cannot reach the server at http://127.0.0.1:"));
}

}  // namespace
}  // namespace trainyard::cli::testing
