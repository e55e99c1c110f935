// The operator's end-to-end fixture: `trainyard operator` as a separate
// process against `trainyard server --api-only` over HTTPS, as upstream's
// envtest runs its controllers against a bare kube-apiserver. Nothing runs
// the pods: a test plays the kubelet, patching pod status with the real
// kubectl.
#pragma once

#include <gmock/gmock.h>

#include <algorithm>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "cli/tests/server_fixture.h"
#include "controller/ports.h"

namespace trainyard::cli::testing {

// A port nobody listens on now (the allocator the engine gives replicas).
inline int FreePort() { return *controller::LocalPortAllocator().Allocate("test"); }

// A small job of `kind` (its replica field and container name given) with
// `extra` spliced into its spec: the lifecycle scenarios' jobs.
inline std::string SmallJob(const std::string& name, const std::string& kind,
                            const std::string& field, const std::string& container,
                            const std::string& replicas, const std::string& extra = "") {
  return "apiVersion: kubeflow.org/v1\nkind: " + kind + "\nmetadata: {name: " + name +
         ", namespace: kubeflow}\nspec:\n" + extra + "  " + field + ":\n" + replicas +
         "\n      template: {spec: {containers: [{name: " + container +
         ", image: x, command: [\"true\"]}]}}\n";
}

class OperatorE2eTest : public ServerFixture {
 protected:
  void TearDown() override {
    for (auto& [n, p] : operators_) p.Stop(std::chrono::seconds(10));
    operators_.clear();
    ServerFixture::TearDown();
  }
  // An API-only server over HTTPS, and the kubeflow namespace: made, or
  // with `install` applied from `trainyard manifests all`.
  void StartCluster(bool install = false) {
    std::string cert, key;
    ASSERT_TRUE(MakeCertificate(cert, key)) << "openssl is needed for the server's certificate";
    StartServer({"--api-only", "--tls-cert", cert, "--tls-key", key});
    if (!install) {
      CommandResult ns = Kubectl({"create", "namespace", "kubeflow"});
      ASSERT_EQ(ns.exit_code, 0) << ns.output;
      return;
    }
    fs::path manifests = dir_ / "install.yaml";
    Result<runtime::Process> printed = runtime::Process::Start(
        {.argv = {TRAINYARD_BINARY, "manifests", "all"}, .log_path = manifests.string()});
    ASSERT_TRUE(printed.ok());
    std::optional<runtime::ExitStatus> status = printed->WaitFor(std::chrono::seconds(30));
    ASSERT_TRUE(status && status->exit_code == 0) << ReadFile(manifests);
    CommandResult applied = Kubectl({"apply", "-f", manifests.string()});
    ASSERT_EQ(applied.exit_code, 0) << applied.output;
    EXPECT_THAT(
        applied.output,
        ::testing::HasSubstr(
            "customresourcedefinition.apiextensions.k8s.io/pytorchjobs.kubeflow.org created"));
    // Applied again, nothing changes: nothing in it is what the API server
    // defaults or drops (kubectl would send it again, and say configured).
    CommandResult again = Kubectl({"apply", "-f", manifests.string()});
    EXPECT_EQ(again.exit_code, 0) << again.output;
    EXPECT_THAT(again.output, ::testing::Not(::testing::HasSubstr("configured"))) << again.output;
  }
  // Starts operator number `n` (its log: operator-<n>.log).
  void StartOperator(std::vector<std::string> flags = {}, int n = 1) {
    std::vector<std::string> argv = {TRAINYARD_BINARY, "operator", "--kubeconfig",
                                     Kubeconfig().string()};
    // No webhooks, metrics, probes or status server unless the test asks:
    // tests side by side would share their ports.
    for (const char* flag : {"--webhook-server-port", "--metrics-bind-address",
                             "--health-probe-bind-address", "--trainer-status-port"}) {
      if (std::find(flags.begin(), flags.end(), flag) == flags.end()) {
        argv.insert(argv.end(), {flag, "0"});
      }
    }
    argv.insert(argv.end(), flags.begin(), flags.end());
    fs::path log = dir_ / ("operator-" + std::to_string(n) + ".log");
    fs::remove(log);
    Result<runtime::Process> p =
        runtime::Process::Start({.argv = argv,
                                 .env = {{"PATH", kPath}, {"HOME", dir_.string()}},
                                 .working_dir = dir_.string(),
                                 .log_path = log.string()});
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    operators_.erase(n);
    operators_.emplace(n, std::move(*p));
  }
  runtime::Process& Operator(int n = 1) { return operators_.at(n); }
  // GET `url` with curl (`curl_flags` first); what it printed.
  std::string Curl(const std::string& url, std::vector<std::string> curl_flags = {}) {
    fs::path out = dir_ / ("curl-" + std::to_string(++curls_) + ".out");
    std::vector<std::string> argv = {"curl", "-sS"};
    argv.insert(argv.end(), curl_flags.begin(), curl_flags.end());
    argv.push_back(url);
    Result<runtime::Process> curl =
        runtime::Process::Start({.argv = argv, .env = {{"PATH", kPath}}, .log_path = out.string()});
    if (!curl.ok() || !curl->WaitFor(std::chrono::seconds(30))) return "curl failed";
    return ReadFile(out);
  }
  std::string OperatorLog(int n = 1) const {
    return ReadFile(dir_ / ("operator-" + std::to_string(n) + ".log"));
  }
  CommandResult InKubeflow(std::vector<std::string> args) {
    args.insert(args.begin(), {"-n", "kubeflow"});
    return Kubectl(std::move(args));
  }
  std::string FieldIn(const std::string& object, const std::string& jsonpath) {
    return InKubeflow({"get", object, "-o", "jsonpath={" + jsonpath + "}"}).output;
  }
  // Whether the object ("pytorchjob/wide") has the condition `type` True.
  bool HasCondition(const std::string& object, const std::string& type) {
    return FieldIn(object, ".status.conditions[?(@.type==\"" + type + "\")].status") == "True";
  }
  // The value of env `name` of a pod's first container.
  std::string EnvOf(const std::string& pod, const std::string& name) {
    return FieldIn("pod/" + pod, ".spec.containers[0].env[?(@.name==\"" + name + "\")].value");
  }
  // Applies `text` in the kubeflow namespace, written to `file`.
  void ApplyIn(const std::string& file, const std::string& text) {
    CommandResult applied = InKubeflow({"apply", "-f", Write(file, text)});
    ASSERT_EQ(applied.exit_code, 0) << applied.output;
  }
  // `kubectl patch --type=merge` of a kubeflow object ("pytorchjob/wide").
  int MergePatch(const std::string& object, const std::string& patch) {
    return InKubeflow({"patch", object, "--type=merge", "-p", patch}).exit_code;
  }
  // What a kubelet reports: a pod's phase and its container's state.
  void SetPodPhase(const std::string& pod, const std::string& phase, int exit_code = 0) {
    std::string state = phase == "Running"
                            ? R"({"running":{"startedAt":"2026-01-01T00:00:00Z"}})"
                            : R"({"terminated":{"exitCode":)" + std::to_string(exit_code) +
                                  R"(,"reason":")" + (exit_code == 0 ? "Completed" : "Error") +
                                  R"("}})";
    std::string container = FieldIn("pod/" + pod, ".spec.containers[0].name");
    std::string patch =
        R"({"status":{"phase":")" + phase + R"(","containerStatuses":[{"name":")" + container +
        R"(","ready":false,"restartCount":0,"image":"x","imageID":"","state":)" + state + "}]}}";
    CommandResult patched =
        InKubeflow({"patch", "pod", pod, "--subresource=status", "--type=merge", "-p", patch});
    ASSERT_EQ(patched.exit_code, 0) << patched.output;
  }
  // The kubelet's part in a pod's delete: once its containers have
  // stopped, it deletes the pod with a grace period of 0 (kube-apiserver
  // keeps a pod on a node marked until then).
  void FinishTerminatingPods() {
    std::string marked = InKubeflow({"get", "pods", "-o",
                                     "jsonpath={range .items[?(@.metadata.deletionTimestamp)]}"
                                     "{.metadata.name}{\"\\n\"}{end}"})
                             .output;
    std::istringstream names(marked);
    for (std::string pod; std::getline(names, pod);) {
      if (!pod.empty()) InKubeflow({"delete", "pod", pod, "--grace-period=0", "--force"});
    }
  }
  // The scheduler's part: `pod` bound to `node` (pods/binding), as a pod
  // must be for a kubelet to run it and serve its log.
  void BindPod(const std::string& pod, const std::string& node) {
    std::string binding = R"({"apiVersion":"v1","kind":"Binding","metadata":{"name":")" + pod +
                          R"("},"target":{"kind":"Node","name":")" + node + R"("}})";
    CommandResult bound =
        Kubectl({"create", "--raw", "/api/v1/namespaces/kubeflow/pods/" + pod + "/binding", "-f",
                 Write(pod + "-binding.json", binding)});
    ASSERT_EQ(bound.exit_code, 0) << bound.output;
  }
  // The node lifecycle controller's part: a Node registered ready loses
  // the not-ready taint kube-apiserver gives every new Node.
  void MarkNodeReady(const std::string& node) {
    CommandResult untainted =
        Kubectl({"taint", "nodes", node, "node.kubernetes.io/not-ready:NoSchedule-"});
    ASSERT_EQ(untainted.exit_code, 0) << untainted.output;
  }
  // The names of `kind` in kubeflow, of the jobs' replicas only for services
  // (the operator's own webhook Service is there too).
  std::string Names(const std::string& kind) {
    std::vector<std::string> args = {"get", kind, "-o", "jsonpath={.items[*].metadata.name}"};
    if (kind == "services") args.insert(args.end(), {"-l", "training.kubeflow.org/job-name"});
    return InKubeflow(args).output;
  }

  std::map<int, runtime::Process> operators_;
  int curls_ = 0;
};

}  // namespace trainyard::cli::testing
