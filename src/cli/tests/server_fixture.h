// A real `trainyard server` process in a fresh home, and the real kubectl
// pointed at it through the kubeconfig the server writes: what a user does.
// Every wait polls with a deadline.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/tests/needs.h"
#include "common/tests/test_dir.h"
#include "runtime/local/process.h"

namespace trainyard::cli::testing {

namespace fs = std::filesystem;

// Debian's python3 (with torch) and kubectl come first.
constexpr const char* kPath = "/usr/bin:/bin:/usr/local/bin";

inline std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A PyTorchJob with two Masters: refused at
// spec.pytorchReplicaSpecs[Master].replicas, as upstream's webhook does.
constexpr const char* kTwoMasters = R"(
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: bad}
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 2
      template: {spec: {containers: [{name: pytorch, image: none, command: ["true"]}]}}
)";

inline bool HaveKubectl() { return runtime::ResolveProgram("kubectl", kPath).ok(); }

// bubblewrap, which gives replicas sandboxes (node/sandbox.h).
inline bool HaveBwrap() { return runtime::ResolveProgram("bwrap", kPath).ok(); }

// Whom a run's or a server's replicas run as: nobody when trainyard is
// root, else trainyard's own user.
inline uid_t ReplicaUid() { return geteuid() == 0 ? 65534 : geteuid(); }

inline bool PythonHas(const std::string& modules) {
  return system(("/usr/bin/python3 -c 'import " + modules + "' 2>/dev/null").c_str()) == 0;
}

// Polls `done` every 50 ms until it holds or `timeout` passes.
inline bool Eventually(const std::function<bool()>& done,
                       std::chrono::seconds timeout = std::chrono::seconds(60)) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return true;
}

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

class ServerFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    TRAINYARD_NEEDS(HaveKubectl(), "kubectl (Debian's kubernetes-client)");
    dir_ = FreshTestDir("trainyard-server-e2e");
    // Replicas of a server run as root are nobody's: like /tmp, the test's
    // folder lets them leave files (their marks) in it.
    fs::permissions(dir_, fs::perms::all | fs::perms::sticky_bit);
    home_ = dir_ / "home";
  }
  void TearDown() override {
    if (server_) server_->Stop(std::chrono::seconds(20));
    server_.reset();
    fs::remove_all(dir_);
  }

  fs::path Kubeconfig() const { return home_ / "kubeconfig"; }

  // Starts the server and waits until it serves (it writes the kubeconfig).
  void StartServer(const std::vector<std::string>& flags = {},
                   const std::vector<std::pair<std::string, std::string>>& env = {}) {
    fs::remove(Kubeconfig());
    std::vector<std::string> argv = {TRAINYARD_BINARY, "server",      "--port", "0",
                                     "--home",         home_.string()};
    argv.insert(argv.end(), flags.begin(), flags.end());
    // The suites' pods run programs of this machine (images are the images
    // suites'): said, as a user says it.
    if (std::find(flags.begin(), flags.end(), "--root") == flags.end()) {
      argv.insert(argv.end(), {"--root", "host"});
    }
    std::vector<std::pair<std::string, std::string>> server_env = {{"PATH", kPath},
                                                                   {"HOME", dir_.string()}};
    server_env.insert(server_env.end(), env.begin(), env.end());
    Result<runtime::Process> p =
        runtime::Process::Start({.argv = argv,
                                 .env = server_env,
                                 .working_dir = TRAINYARD_SOURCE_DIR,
                                 .log_path = (dir_ / "server.log").string()});
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    server_ = std::move(*p);
    ASSERT_TRUE(Eventually([&] { return fs::exists(Kubeconfig()); }, std::chrono::seconds(30)))
        << ReadFile(dir_ / "server.log");
  }
  // As a crash: SIGKILL, nothing cleaned up.
  void KillServer() {
    server_->Signal(SIGKILL);
    server_->WaitFor(std::chrono::seconds(10));
    server_.reset();
  }

  CommandResult Kubectl(std::vector<std::string> args,
                        std::chrono::seconds timeout = std::chrono::seconds(60)) {
    fs::path out = dir_ / ("kubectl-" + std::to_string(++commands_) + ".out");
    Result<runtime::Process> p = StartKubectl(std::move(args), out);
    if (!p.ok()) return {-1, p.status().ToString()};
    std::optional<runtime::ExitStatus> status = p->WaitFor(timeout);
    return {status ? status->exit_code : -1, ReadFile(out)};
  }
  Result<runtime::Process> StartKubectl(std::vector<std::string> args, const fs::path& out) {
    std::vector<std::string> argv = {"kubectl", "--kubeconfig", Kubeconfig().string()};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<std::pair<std::string, std::string>> env = {{"PATH", kPath},
                                                            {"HOME", dir_.string()}};
    if (!kubectl_editor_.empty()) env.emplace_back("KUBE_EDITOR", kubectl_editor_);
    return runtime::Process::Start(
        {.argv = argv, .env = env, .working_dir = TRAINYARD_SOURCE_DIR, .log_path = out.string()});
  }
  // `trainyard VERB ARGS... --home <home>`: the CLI's own client verbs.
  CommandResult Trainyard(std::vector<std::string> args) {
    fs::path out = dir_ / ("trainyard-" + std::to_string(++commands_) + ".out");
    std::vector<std::string> argv = {TRAINYARD_BINARY};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"--home", home_.string()});
    Result<runtime::Process> p = runtime::Process::Start({.argv = argv,
                                                          .env = {{"PATH", kPath}},
                                                          .working_dir = dir_.string(),
                                                          .log_path = out.string()});
    if (!p.ok()) return {-1, p.status().ToString()};
    std::optional<runtime::ExitStatus> status = p->WaitFor(std::chrono::seconds(60));
    return {status ? status->exit_code : -1, ReadFile(out)};
  }
  // Debian's Python running tests/python/SCRIPT with this server's
  // kubeconfig and `args`: its exit code and output.
  CommandResult PythonCheck(const std::string& script, std::vector<std::string> args = {}) {
    std::vector<std::string> argv = {"/usr/bin/python3", "tests/python/" + script,
                                     Kubeconfig().string()};
    argv.insert(argv.end(), args.begin(), args.end());
    fs::path out = dir_ / ("python-" + std::to_string(++commands_) + ".out");
    Result<runtime::Process> p =
        runtime::Process::Start({.argv = argv,
                                 .env = {{"PATH", kPath}, {"HOME", dir_.string()}},
                                 .working_dir = TRAINYARD_SOURCE_DIR,
                                 .log_path = out.string()});
    if (!p.ok()) return {-1, p.status().ToString()};
    std::optional<runtime::ExitStatus> status = p->WaitFor(std::chrono::seconds(120));
    return {status ? status->exit_code : -1, ReadFile(out)};
  }
  // A self-signed certificate for 127.0.0.1 and its key, made with openssl
  // (for --tls-cert and --tls-key); false if openssl is missing or fails.
  bool MakeCertificate(std::string& cert, std::string& key) {
    cert = (dir_ / "cert.pem").string();
    key = (dir_ / "key.pem").string();
    return system("command -v openssl >/dev/null") == 0 &&
           system(("openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=trainyard "
                   "-addext subjectAltName=IP:127.0.0.1 -keyout " +
                   key + " -out " + cert + " 2>/dev/null")
                      .c_str()) == 0;
  }
  // A field of an object, through kubectl's jsonpath.
  std::string Field(const std::string& object, const std::string& jsonpath) {
    return Kubectl({"get", object, "-o", "jsonpath={" + jsonpath + "}"}).output;
  }
  std::string Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }
  // Processes whose command line names this test's home: shims and
  // replicas (the replicas' log and exit paths are under it).
  int ProcessesUnderHome() {
    int n = 0;
    std::error_code ec;  // processes come and go while this looks
    for (auto it = fs::directory_iterator("/proc", ec); !ec && it != fs::directory_iterator();
         it.increment(ec)) {
      std::string cmdline = ReadFile(it->path() / "cmdline");
      if (cmdline.find(home_.string() + "/server/") != std::string::npos &&
          ReadFile(it->path() / "stat").find(") Z") == std::string::npos) {
        ++n;
      }
    }
    return n;
  }

  fs::path dir_;
  fs::path home_;
  std::optional<runtime::Process> server_;
  int commands_ = 0;
  std::string kubectl_editor_;  // KUBE_EDITOR for `kubectl edit`, when set
};

}  // namespace trainyard::cli::testing
