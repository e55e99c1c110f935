// A real `trainyard server` tried as an attacker or an unlucky client
// would: requests that once crashed or stalled it are answered, and it
// keeps serving everyone else.
#include <arpa/inet.h>
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli/tests/server_fixture.h"

namespace trainyard::cli::testing {
namespace {

using ::testing::HasSubstr;

// One HTTP/1.1 connection over loopback, spoken by hand: a client that
// opens watches and walks away, as no library would let a test do.
class RawConnection {
 public:
  explicit RawConnection(int port) {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) Close();
  }
  ~RawConnection() { Close(); }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  void Close() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }
  int fd() const { return fd_; }
  bool Send(const std::string& method, const std::string& target, const std::string& body = "",
            const std::string& content_type = "application/json") {
    std::string request = fmt::format(
        "{} {} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: {}\r\nContent-Length: {}\r\n\r\n{}",
        method, target, content_type, body.size(), body);
    size_t sent = 0;
    while (fd_ >= 0 && sent < request.size()) {
      ssize_t n = send(fd_, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return false;
      sent += static_cast<size_t>(n);
    }
    return fd_ >= 0;
  }
  // What arrives until `done` holds of it, or `timeout` passes.
  std::string Receive(const std::function<bool(const std::string&)>& done,
                      std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (fd_ >= 0 && !done(received_)) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      pollfd p{.fd = fd_, .events = POLLIN, .revents = 0};
      if (left.count() <= 0 || poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
      char buf[65536];
      ssize_t n = recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) break;
      received_.append(buf, static_cast<size_t>(n));
    }
    return received_;
  }
  // The status code of the response, once its first line has come; -1 if none did.
  int StatusCode() {
    std::string head =
        Receive([](const std::string& s) { return s.find("\r\n") != std::string::npos; });
    return head.starts_with("HTTP/1.1 ") && head.size() >= 12 ? std::stoi(head.substr(9, 3)) : -1;
  }
  // A whole response with a Content-Length: its status and body.
  std::pair<int, std::string> Response() {
    auto whole = [](const std::string& s) {
      size_t end = s.find("\r\n\r\n");
      if (end == std::string::npos) return false;
      std::smatch m;
      std::string head = s.substr(0, end);
      if (!std::regex_search(head, m, std::regex("Content-Length: ([0-9]+)", std::regex::icase))) {
        return true;
      }
      return s.size() >= end + 4 + std::stoul(m[1].str());
    };
    std::string text = Receive(whole);
    size_t end = text.find("\r\n\r\n");
    int code = StatusCode();
    return {code, end == std::string::npos ? "" : text.substr(end + 4)};
  }
  // Sends FIN (as close() does) but keeps reading, to see the server's end.
  void HangUp() { shutdown(fd_, SHUT_WR); }
  // Whether the server closed the connection within `timeout`.
  bool ClosedByServer(std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (fd_ >= 0) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      pollfd p{.fd = fd_, .events = POLLIN, .revents = 0};
      if (left.count() <= 0 || poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
      char buf[4096];
      ssize_t n = recv(fd_, buf, sizeof buf, 0);
      if (n == 0) return true;
      if (n < 0) return errno == ECONNRESET;
    }
    return false;
  }

 private:
  int fd_ = -1;
  std::string received_;
};

class ServerHardeningE2eTest : public ServerFixture {
 protected:
  int Port() {
    std::smatch m;
    std::string config = ReadFile(Kubeconfig());
    if (!std::regex_search(config, m, std::regex("127\\.0\\.0\\.1:([0-9]+)"))) return -1;
    return std::stoi(m[1].str());
  }
  std::pair<int, std::string> Call(const std::string& method, const std::string& target,
                                   const std::string& body = "",
                                   const std::string& content_type = "application/json") {
    RawConnection c(Port());
    if (!c.Send(method, target, body, content_type)) return {-1, ""};
    return c.Response();
  }
  bool Healthy() { return Call("GET", "/healthz") == std::pair<int, std::string>(200, "ok"); }
  bool ServerAlive() { return server_ && server_->running(); }
};

constexpr const char* kWatch = "/api/v1/namespaces/default/configmaps?watch=true";

// Opens `n` watches from one client; how many were answered 200.
int OpenWatches(int port, int n, std::vector<std::unique_ptr<RawConnection>>& watches) {
  int ok = 0;
  for (int i = 0; i < n; ++i) {
    watches.push_back(std::make_unique<RawConnection>(port));
    if (watches.back()->Send("GET", kWatch) && watches.back()->StatusCode() == 200) ++ok;
  }
  return ok;
}

TEST_F(ServerHardeningE2eTest, AbandonedWatchesEndPromptlyAndNeverStarveTheApi) {
  StartServer();
  std::vector<std::unique_ptr<RawConnection>> watches;
  // One client may hold 128 open; the next is told to wait (429), and the
  // API still answers everyone.
  ASSERT_EQ(OpenWatches(Port(), 128, watches), 128);
  RawConnection extra(Port());
  ASSERT_TRUE(extra.Send("GET", kWatch));
  EXPECT_EQ(extra.StatusCode(), 429);
  EXPECT_TRUE(Healthy());
  EXPECT_EQ(Kubectl({"get", "configmaps"}).exit_code, 0);
  // Walked away from (the client's FIN, as a close sends), each ends
  // within moments, not when a watch would time out (30 to 60 minutes):
  // the server closes its end, and the same client may open as many again.
  for (auto& w : watches) w->HangUp();
  for (auto& w : watches) EXPECT_TRUE(w->ClosedByServer(std::chrono::seconds(10)));
  watches.clear();
  std::vector<std::unique_ptr<RawConnection>> again;
  EXPECT_EQ(OpenWatches(Port(), 128, again), 128);
  EXPECT_TRUE(ServerAlive());
}

// Clients that send a request's head a byte at a time, or never finish
// it (no token needed), hold no thread: with more of them than the server
// has threads, everyone else is still served at once, and a head not
// whole in time is closed.
TEST_F(ServerHardeningE2eTest, SlowClientsHoldNoThreadAndNeverStarveTheApi) {
  rlimit files{};
  getrlimit(RLIMIT_NOFILE, &files);
  TRAINYARD_NEEDS(files.rlim_max >= 4096, "a descriptor limit of 4096 or more (ulimit -Hn)");
  files.rlim_cur = files.rlim_max;
  setrlimit(RLIMIT_NOFILE, &files);
  StartServer();
  // More than the server's 1,024 threads.
  std::vector<std::unique_ptr<RawConnection>> slow;
  for (int i = 0; i < 1500; ++i) {
    slow.push_back(std::make_unique<RawConnection>(Port()));
    std::string part = "GET /healthz HTTP/1.1\r\nX-Slow: ";
    (void)send(slow.back()->fd(), part.data(), part.size(), MSG_NOSIGNAL);
  }
  // A byte each, more often than any read times out, all along.
  std::atomic<bool> done{false};
  std::thread trickle([&] {
    while (!done) {
      for (auto& c : slow) (void)send(c->fd(), "a", 1, MSG_NOSIGNAL);
      std::this_thread::sleep_for(std::chrono::milliseconds(500));  // the attacker's pace
    }
  });
  EXPECT_TRUE(Healthy());
  EXPECT_EQ(Kubectl({"get", "configmaps"}).exit_code, 0);
  // However it trickles, a head is whole within its time or closed.
  EXPECT_TRUE(slow.front()->ClosedByServer(std::chrono::seconds(30)));
  done = true;
  trickle.join();
  EXPECT_TRUE(ServerAlive());
}

constexpr const char* kSuspended = R"(
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: held}
spec:
  runPolicy: {suspend: true}
  pytorchReplicaSpecs:
    Master:
      template:
        spec:
          containers: [{name: pytorch, image: none, command: [sleep, "300"]}]
)";

TEST_F(ServerHardeningE2eTest, DeepAndExplosivePatchesAreRefusedAndTheServerServesOn) {
  StartServer();
  ASSERT_EQ(Kubectl({"create", "-f", Write("held.yaml", kSuspended)}).exit_code, 0);
  const std::string job = "/apis/kubeflow.org/v1/namespaces/default/pytorchjobs/held";
  std::string deep = std::string(100'000, '[') + "0" + std::string(100'000, ']');
  auto [code, body] =
      Call("PATCH", job, R"([{"op": "add", "path": "/metadata/labels", "value": )" + deep + "}]",
           "application/json-patch+json");
  EXPECT_EQ(code, 400) << body.substr(0, 300);
  std::string bomb =
      R"([{"op": "add", "path": "/metadata/annotations", "value": {"a": "xxxxxxxx"}})";
  for (int i = 1; i <= 26; ++i) {
    bomb += fmt::format(R"(, {{"op": "copy", "from": "/metadata/annotations", "path": "/x"}})");
    bomb +=
        fmt::format(R"(, {{"op": "move", "from": "/x", "path": "/metadata/annotations/a{}"}})", i);
  }
  std::tie(code, body) = Call("PATCH", job, bomb + "]", "application/json-patch+json");
  EXPECT_EQ(code, 422) << body.substr(0, 300);
  EXPECT_THAT(body, HasSubstr("exceeding the limit 3145728"));
  EXPECT_TRUE(ServerAlive());
  EXPECT_TRUE(Healthy());
  CommandResult get =
      Kubectl({"get", "pytorchjob", "held", "-o", "jsonpath={.metadata.annotations}"});
  EXPECT_EQ(get.exit_code, 0) << get.output;
  EXPECT_EQ(get.output, "");  // nothing of either patch was applied
}

TEST_F(ServerHardeningE2eTest, ASelectorValueWithAnEqualsSignIsReadAsGoReadsIt) {
  StartServer();
  for (const char* value : {"a", "b"}) {
    auto [code, body] =
        Call("POST", "/api/v1/namespaces/default/configmaps",
             fmt::format(R"({{"metadata": {{"name": "cm-{}", "labels": {{"app": "{}"}}}}}})", value,
                         value));
    ASSERT_EQ(code, 201) << body;
  }
  // Unencoded, as curl sends it: the selector is `app=b`, not `b`.
  auto [code, body] = Call("GET", "/api/v1/namespaces/default/configmaps?labelSelector=app=b");
  ASSERT_EQ(code, 200) << body;
  nlohmann::json list = nlohmann::json::parse(body);
  ASSERT_EQ(list["items"].size(), 1u) << body;
  EXPECT_EQ(list["items"][0]["metadata"]["name"], "cm-b");
}

TEST_F(ServerHardeningE2eTest, AnAddressOtherHostsReachNeedsTokensOrAnExplicitFlag) {
  fs::path log = dir_ / "refused.log";
  Result<runtime::Process> refused =
      runtime::Process::Start({.argv = {TRAINYARD_BINARY, "server", "--port", "0", "--home",
                                        home_.string(), "--address", "0.0.0.0"},
                               .env = {{"PATH", kPath}},
                               .log_path = log.string()});
  ASSERT_TRUE(refused.ok());
  std::optional<runtime::ExitStatus> status = refused->WaitFor(std::chrono::seconds(30));
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->exit_code, 2);
  EXPECT_THAT(ReadFile(log), HasSubstr("--address 0.0.0.0 can be reached from other hosts"));
  EXPECT_FALSE(fs::exists(home_ / "server"));  // a refused start makes nothing
  StartServer({"--address", "0.0.0.0", "--allow-unauthenticated"});
  EXPECT_THAT(ReadFile(dir_ / "server.log"),
              HasSubstr("(every interface), with no authentication"));
  EXPECT_TRUE(Healthy());
}

// A second server on a port one listens on is refused, rather than
// sharing it (SO_REUSEPORT) and taking half its requests.
TEST_F(ServerHardeningE2eTest, ASecondServerOnTheSamePortIsRefused) {
  StartServer();
  fs::path log = dir_ / "second.log";
  Result<runtime::Process> second = runtime::Process::Start(
      {.argv = {TRAINYARD_BINARY, "server", "--port", std::to_string(Port()), "--home",
                (dir_ / "other-home").string()},
       .env = {{"PATH", kPath}, {"HOME", dir_.string()}},
       .log_path = log.string()});
  ASSERT_TRUE(second.ok());
  std::optional<runtime::ExitStatus> status = second->WaitFor(std::chrono::seconds(30));
  ASSERT_TRUE(status.has_value()) << "a second server started on the same port";
  EXPECT_NE(status->exit_code, 0);
  EXPECT_THAT(ReadFile(log), HasSubstr("Address already in use"));
  EXPECT_TRUE(Healthy());
}

// A second server on the same home would rewrite the first one's
// kubeconfig and, stopped, end its replicas: refused, naming the first.
TEST_F(ServerHardeningE2eTest, ASecondServerOnTheSameHomeIsRefusedNamingTheFirst) {
  StartServer();
  std::string kubeconfig = ReadFile(Kubeconfig());
  fs::path log = dir_ / "second.log";
  Result<runtime::Process> second = runtime::Process::Start(
      {.argv = {TRAINYARD_BINARY, "server", "--port", "0", "--home", home_.string()},
       .env = {{"PATH", kPath}, {"HOME", dir_.string()}},
       .log_path = log.string()});
  ASSERT_TRUE(second.ok());
  std::optional<runtime::ExitStatus> status = second->WaitFor(std::chrono::seconds(30));
  ASSERT_TRUE(status.has_value()) << "a second server started on the same home";
  EXPECT_EQ(status->exit_code, 1);
  EXPECT_THAT(ReadFile(log), HasSubstr(fmt::format("is in use by another trainyard server (pid {}",
                                                   server_->pid())));
  EXPECT_EQ(ReadFile(Kubeconfig()), kubeconfig);
  EXPECT_TRUE(Healthy());
}

TEST_F(ServerHardeningE2eTest, ATokenOfYamlSpecialCharactersGoesIntoAKubeconfigKubectlReads) {
  std::string cert, key;
  TRAINYARD_NEEDS(MakeCertificate(cert, key), "openssl");
  std::string tokens = Write("tokens", "{a:b}#c,'d\"e ops *\n");
  // Relative to the server's folder: the kubeconfig, which kubectl reads
  // against its own folder, must name the certificate whole.
  std::string relative = fs::relative(cert, TRAINYARD_SOURCE_DIR).string();
  ASSERT_FALSE(relative.starts_with("/"));
  StartServer({"--tls-cert", relative, "--tls-key", key, "--token-file", tokens});
  EXPECT_THAT(ReadFile(Kubeconfig()),
              HasSubstr(fmt::format("certificate-authority: \"{}\"", cert)));
  CommandResult get = Kubectl({"get", "namespaces"});
  EXPECT_EQ(get.exit_code, 0) << get.output;
  EXPECT_THAT(get.output, HasSubstr("default"));
}

constexpr const char* kWhoAmI = R"(
apiVersion: batch/v1
kind: Job
metadata: {name: whoami}
spec:
  template:
    spec:
      restartPolicy: Never
      volumes: [{name: scratch, emptyDir: {}}]
      containers:
        - name: c
          image: none
          volumeMounts: [{name: scratch, mountPath: /scratch}]
          command: [sh, -c, 'id -u; head -c 6 STATE/state.db || echo no-db; ls STATE/logs || echo no-logs; ls STATE/artifacts/default || echo no-list; echo out > $TRAINYARD_OUTPUT_DIR/o; echo mine > /scratch/x && cat /scratch/x']
)";

TEST_F(ServerHardeningE2eTest, AReplicaOfARootServerIsNobodyAndReachesOnlyItsOwnFiles) {
  if (geteuid() != 0) GTEST_SKIP() << "a server run as root only";
  StartServer();
  std::string job = kWhoAmI;
  std::string state = (home_ / "server").string();
  for (size_t at; (at = job.find("STATE")) != std::string::npos;) job.replace(at, 5, state);
  ASSERT_EQ(Kubectl({"apply", "-f", Write("whoami.yaml", job)}).exit_code, 0);
  ASSERT_TRUE(Eventually(
      [&] { return Field("job/whoami", ".status.conditions[-1:].type") == "Complete"; }));
  CommandResult log = Kubectl({"logs", "job/whoami"});
  EXPECT_THAT(log.output, ::testing::StartsWith("65534\n")) << log.output;
  EXPECT_THAT(log.output, HasSubstr("no-db"));
  EXPECT_THAT(log.output, HasSubstr("no-logs"));
  EXPECT_THAT(log.output, ::testing::EndsWith("mine\n"));
  // Its output folder is its own to write; the folder of every job's is
  // not for it to list.
  EXPECT_THAT(log.output, HasSubstr("no-list"));
  EXPECT_EQ(
      Kubectl({"get", "--raw", "/apis/batch/v1/namespaces/default/jobs/whoami/artifacts?path=o"})
          .output,
      "out\n");
  // MPI's ranks start inside the workers through `trainyard exec`, which a
  // launcher that is nobody's runs without reading the store.
  TRAINYARD_NEEDS(runtime::ResolveProgram("mpirun", kPath).ok() && PythonHas("mpi4py"),
                  "openmpi-bin and python3-mpi4py");
  ASSERT_EQ(
      Kubectl({"apply", "-f", std::string(TRAINYARD_SOURCE_DIR) + "/examples/mpi.yaml"}).exit_code,
      0);
  ASSERT_TRUE(Eventually([&] {
    std::string state = Field("mpijob/mpi-allreduce", ".status.conditions[-1:].type");
    return state == "Succeeded" || state == "Failed";
  }));
  EXPECT_EQ(Field("mpijob/mpi-allreduce", ".status.conditions[-1:].type"), "Succeeded")
      << Kubectl({"logs", "mpi-allreduce-launcher"}).output;
}

// A job that prints far more values than anyone could read: what is kept
// of it is bounded (its rows, the store's growth, every answer), and its
// count, minimum, maximum and latest stay exact.
TEST_F(ServerHardeningE2eTest, AFloodOfMetricsIsKeptBoundedAndItsSummaryExact) {
  StartServer();
  ASSERT_EQ(Kubectl({"apply", "-f", Write("flood.yaml", R"(
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: flood}
spec:
  pytorchReplicaSpecs:
    Master: {restartPolicy: Never, template: {spec: {containers: [{name: pytorch, image: none,
      command: [awk, 'BEGIN { for (i = 0; i < 200000; i++) print "loss=" (i == 777 ? -1 : i) " acc=" i " a=1 b=2" }']}]}}}
)")})
                .exit_code,
            0);
  ASSERT_TRUE(Eventually([&] {
    return Field("pytorchjob/flood", ".status.conditions[?(@.type==\"Succeeded\")].status") ==
           "True";
  }));
  const std::string path =
      "/apis/kubeflow.org/v1/namespaces/default/pytorchjobs/flood/observations";
  nlohmann::json log;
  ASSERT_TRUE(Eventually([&] {
    CommandResult got = Kubectl({"get", "--raw", path});
    log = nlohmann::json::parse(got.output, nullptr, false);
    if (!log.is_object() || !log.contains("thinned")) return false;
    for (const auto& t : log["thinned"]) {
      if (t["name"] == "loss" && t["values"] == 200000) return true;
    }
    return false;
  }));
  EXPECT_LE(log["metricLogs"].size(), 4u * 10'001u);
  for (const auto& t : log["thinned"]) {
    if (t["name"] == "loss") {
      EXPECT_EQ(t["min"], "-1");
      EXPECT_EQ(t["max"], "199999");
    }
  }
  // Paged as a list is.
  nlohmann::json page =
      nlohmann::json::parse(Kubectl({"get", "--raw", path + "?limit=100"}).output);
  EXPECT_EQ(page["metricLogs"].size(), 100u);
  EXPECT_FALSE(page["metadata"]["continue"].get<std::string>().empty());
  CommandResult shown = Trainyard({"metrics", "pytorchjob", "flood"});
  EXPECT_THAT(shown.output, ::testing::ContainsRegex("loss +200000  199999 +-1 +199999"));
  EXPECT_THAT(shown.output, HasSubstr("loss: 200000 values, 1 in 32 kept"));
  // 800,000 values; the store keeps a bounded share of them.
  EXPECT_LT(fs::file_size(home_ / "server" / "state.db") +
                fs::file_size(home_ / "server" / "state.db-wal"),
            uintmax_t{40} << 20);
}

// Prints its uid and what it can read of the other namespace's replica's
// environment, both running all the while (each waits for the other's
// files). ($$ is Kubernetes' escape of $.)
constexpr const char* kWhoAndWait = R"(
apiVersion: batch/v1
kind: Job
metadata: {name: who, namespace: NS}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: c
          image: none
          env: [{name: SECRET_VALUE, value: NS-secret}]
          command: [sh, -c, 'id -u; echo $$$$ > DIR/NS.pid; until [ -e DIR/OTHER.pid ]; do sleep 0.1; done; cat /proc/$$(cat DIR/OTHER.pid)/environ 2>/dev/null | tr "\0" "\n" | grep SECRET || echo cannot-read; touch DIR/NS.read; until [ -e DIR/OTHER.read ]; do sleep 0.1; done']
)";

// With tokens, a root server gives each namespace a user of its own: one
// team's replica can read nothing of another's, its environment (where
// Secret values and job tokens are) least of all.
TEST_F(ServerHardeningE2eTest, WithTokensEachNamespacesReplicasAreAUserOfItsOwn) {
  if (geteuid() != 0) GTEST_SKIP() << "a server run as root only";
  std::string cert, key;
  TRAINYARD_NEEDS(MakeCertificate(cert, key), "openssl");
  StartServer({"--tls-cert", cert, "--tls-key", key, "--token-file",
               Write("tokens", "ops-token-0001 ops *\n")});
  for (auto [ns, other] : {std::pair{"team-a", "team-b"}, std::pair{"team-b", "team-a"}}) {
    ASSERT_EQ(Kubectl({"create", "namespace", ns}).exit_code, 0);
    std::string job = kWhoAndWait;
    auto put = [&](const std::string& k, const std::string& v) {
      for (size_t at; (at = job.find(k)) != std::string::npos;) job.replace(at, k.size(), v);
    };
    put("OTHER", other);
    put("NS", ns);
    put("DIR", dir_.string());
    ASSERT_EQ(Kubectl({"apply", "-f", Write(std::string(ns) + ".yaml", job)}).exit_code, 0);
  }
  std::vector<std::string> uids;
  for (const char* ns : {"team-a", "team-b"}) {
    ASSERT_TRUE(Eventually([&] {
      return Kubectl({"get", "job/who", "-n", ns, "-o", "jsonpath={.status.conditions[-1:].type}"})
                 .output == "Complete";
    }));
    std::string log = Kubectl({"logs", "job/who", "-n", ns}).output;
    EXPECT_THAT(log, HasSubstr("cannot-read")) << log;
    EXPECT_THAT(log, ::testing::Not(HasSubstr("secret"))) << log;
    uids.push_back(log.substr(0, log.find('\n')));
  }
  EXPECT_NE(uids[0], uids[1]);
  EXPECT_NE(uids[0], "65534");  // not nobody, whom every namespace shared
}

// Tries to turn trainyard's writes on its pod (its hosts file at each
// start, its configMap's files) into writes elsewhere, planting links in
// place of them, then fails once so that it is started again.
constexpr const char* kPlanter = R"(
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg}
data: {key: value}
---
apiVersion: batch/v1
kind: Job
metadata: {name: planter}
spec:
  backoffLimit: 3
  template:
    spec:
      restartPolicy: OnFailure
      hostAliases: [{ip: 127.0.0.2, hostnames: [aliased.example]}]
      volumes: [{name: cfg, configMap: {name: cfg}}, {name: scratch, emptyDir: {}}]
      containers:
        - name: c
          image: none
          volumeMounts: [{name: cfg, mountPath: /cfg}, {name: scratch, mountPath: /scratch}]
          command: [sh, -c, 'for d in STATE/pods/default/*; do ln -sf TARGET "$d/etc-hosts" && echo planted; rm -rf "$d/volumes/cfg" && ln -s DIR "$d/volumes/cfg" && echo planted; done; ln -s DIR /scratch/link; [ -e /scratch/ran ] && exit 0; touch /scratch/ran; exit 1']
)";

TEST_F(ServerHardeningE2eTest, AReplicaCannotTurnTrainyardsWritesOnItsPodIntoWritesElsewhere) {
  if (geteuid() != 0) GTEST_SKIP() << "a server run as root only";
  StartServer();
  std::ofstream(dir_ / "target") << "root's";
  fs::create_directories(dir_ / "rootdir");
  std::string job = kPlanter;
  auto put = [&](const std::string& key, const std::string& value) {
    for (size_t at; (at = job.find(key)) != std::string::npos;) job.replace(at, key.size(), value);
  };
  put("STATE", (home_ / "server").string());
  put("TARGET", (dir_ / "target").string());
  put("DIR", (dir_ / "rootdir").string());
  ASSERT_EQ(Kubectl({"apply", "-f", Write("planter.yaml", job)}).exit_code, 0);
  ASSERT_TRUE(Eventually([&] {
    std::string state = Field("job/planter", ".status.conditions[-1:].type");
    return state == "Complete" || state == "Failed";
  }));
  EXPECT_EQ(Field("job/planter", ".status.conditions[-1:].type"), "Complete");
  EXPECT_EQ(ReadFile(dir_ / "target"), "root's");
  EXPECT_TRUE(fs::is_empty(dir_ / "rootdir"));
  EXPECT_THAT(Kubectl({"logs", "job/planter"}).output, ::testing::Not(HasSubstr("planted")));
  // Its emptyDir, where it planted a link, goes with the pod; not what the
  // link names.
  ASSERT_EQ(Kubectl({"delete", "job", "planter"}).exit_code, 0);
  EXPECT_TRUE(Eventually([&] { return Kubectl({"get", "pods", "-o", "name"}).output.empty(); }));
  EXPECT_TRUE(fs::is_directory(dir_ / "rootdir"));
}

// Ignores SIGTERM (an ignored signal stays ignored across exec), with ten
// minutes to stop unless its delete says otherwise. ($$ is Kubernetes'
// escape of $.)
constexpr const char* kDeaf = R"(
apiVersion: batch/v1
kind: Job
metadata: {name: deaf}
spec:
  template:
    spec:
      restartPolicy: Never
      terminationGracePeriodSeconds: 600
      containers:
        - {name: c, image: none, command: [sh, -c, 'trap "" TERM; echo $$$$ >> PIDS; exec sleep 1000']}
)";

// kubectl delete --grace-period gives the replica that long, not its pod's
// own ten minutes.
TEST_F(ServerHardeningE2eTest, KubectlDeletesGracePeriodIsTheReplicasToStop) {
  StartServer();
  std::string job = kDeaf;
  job.replace(job.find("PIDS"), 4, (dir_ / "pids").string());
  ASSERT_EQ(Kubectl({"apply", "-f", Write("deaf.yaml", job)}).exit_code, 0);
  pid_t pid = 0;
  ASSERT_TRUE(Eventually([&] {
    std::ifstream(dir_ / "pids") >> pid;
    return pid > 0;
  }));
  std::string pod = Kubectl({"get", "pods", "-o", "name"}).output;
  pod.erase(pod.find_last_not_of('\n') + 1);
  CommandResult deleted = Kubectl({"delete", pod, "--grace-period=1"});
  EXPECT_EQ(deleted.exit_code, 0) << deleted.output;
  EXPECT_TRUE(Eventually([&] { return kill(pid, 0) != 0; }, std::chrono::seconds(15)))
      << "still running: the pod's own grace period was used";
  // Its replacement, deaf too, goes with the job, and is killed here
  // rather than waited for.
  EXPECT_EQ(Kubectl({"delete", "job", "deaf"}).exit_code, 0);
  std::ifstream pids(dir_ / "pids");
  for (pid_t each; pids >> each;) kill(each, SIGKILL);
  EXPECT_TRUE(Eventually([&] { return ProcessesUnderHome() == 0; }, std::chrono::seconds(15)));
}

}  // namespace
}  // namespace trainyard::cli::testing
