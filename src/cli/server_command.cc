#include "cli/server_command.h"

#include <fmt/format.h>
#include <malloc.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <thread>

#include "api/json.h"
#include "cli/control_plane.h"
#include "cli/engine_backend.h"
#include "cli/home_lock.h"
#include "cli/run_command.h"
#include "cli/stop_on_signals.h"
#include "common/loopback.h"
#include "common/memory_trimmer.h"
#include "engine/engine.h"
#include "engine/inventory.h"
#include "runtime/local/namespace_users.h"
#include "server/auth.h"
#include "server/handler.h"
#include "server/http_server.h"
#include "server/metrics.h"

namespace trainyard::cli {
namespace {

namespace fs = std::filesystem;

// A kubeconfig naming this server, written whole or not at all, readable
// only by its owner when it holds a token.
Status WriteKubeconfig(const std::string& path, const std::string& url, const std::string& ca_file,
                       const std::string& token) {
  // Every value double-quoted (a JSON string is a YAML one): a token or
  // path holding ':', '#', '{' or a quote must read back as written.
  auto quoted = [](const std::string& v) { return api::Json(v).dump(); };
  std::string cluster = fmt::format("    server: {}\n", quoted(url));
  if (!ca_file.empty()) cluster += fmt::format("    certificate-authority: {}\n", quoted(ca_file));
  // Without credentials kubectl asks for a password over HTTPS; a server
  // without --token-file takes any token, so one that says so will do.
  std::string user = !token.empty()     ? fmt::format("{{token: {}}}", quoted(token))
                     : !ca_file.empty() ? "{token: no-auth-configured}"
                                        : "{}";
  std::string text = fmt::format(
      "apiVersion: v1\n"
      "kind: Config\n"
      "clusters:\n"
      "- name: trainyard\n"
      "  cluster:\n{}"
      "contexts:\n"
      "- name: trainyard\n"
      "  context:\n"
      "    cluster: trainyard\n"
      "    user: trainyard\n"
      "    namespace: default\n"
      "current-context: trainyard\n"
      "users:\n"
      "- name: trainyard\n"
      "  user: {}\n",
      cluster, user);
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    std::error_code ignored;  // a token in it: the owner only
    fs::permissions(tmp, fs::perms::owner_read | fs::perms::owner_write, ignored);
    out << text;
    if (!out.flush()) return UnavailableError(fmt::format("cannot write {}", tmp));
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) return UnavailableError(fmt::format("cannot write {}: {}", path, ec.message()));
  return OkStatus();
}

// An address as a URL writes it: IPv6 in brackets.
std::string UrlHost(const std::string& address) {
  return address.find(':') != std::string::npos ? "[" + address + "]" : address;
}

// Who may do what, from --token-file; nobody checked without one.
Result<std::optional<server::Authorizer>> LoadAuth(const ServerOptions& options) {
  if (options.token_file.empty() && !IsLoopbackHost(options.address) &&
      !options.allow_unauthenticated) {
    return InvalidArgumentError(fmt::format(
        "--address {} can be reached from other hosts, and without --token-file anyone who "
        "reaches it may run any command on this machine: give --token-file (with --tls-cert "
        "and --tls-key), or --allow-unauthenticated if that is really meant",
        options.address));
  }
  if (options.token_file.empty()) return std::optional<server::Authorizer>();
  if (options.tls_cert.empty()) {
    return InvalidArgumentError(
        "--token-file needs --tls-cert and --tls-key: kubectl and client libraries send tokens "
        "only over HTTPS");
  }
  ASSIGN_OR_RETURN(server::Authorizer auth, server::Authorizer::Load(options.token_file));
  return std::optional<server::Authorizer>(std::move(auth));
}

// Every connection, idle or slow, holds a descriptor: the soft limit (often
// 1,024) is raised to the hard one, as Go's runtime does for its servers.
void RaiseDescriptorLimit() {
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) != 0 || files.rlim_cur >= files.rlim_max) return;
  files.rlim_cur = files.rlim_max;
  setrlimit(RLIMIT_NOFILE, &files);
}

// An answer of many megabytes (a long log, a large list) is freed once
// sent, and its memory should go back to the machine then: glibc raises
// its threshold for mapping large blocks as they are freed, so that later
// ones come from heaps it keeps for good. A fixed threshold keeps every
// block past it mapped on its own, unmapped when freed.
void GiveLargeBlocksBack() { mallopt(M_MMAP_THRESHOLD, 1 << 20); }

// With tokens, namespaces are different teams': a root server gives each
// one no --run-as-namespace names a user of its own, unless --run-as
// chose one user for all; where namespaces share a user, it says so.
Status SeparateNamespaces(const ServerOptions& options, bool tokens, const std::string& home,
                          runtime::RunAsPolicy& run_as) {
  if (!tokens) return OkStatus();
  if (geteuid() != 0) {
    std::cerr << "trainyard server: warning: every namespace's replicas run as this server's own "
                 "user (only root can give each its own): a replica of one namespace can read "
                 "another's Secrets and job tokens through /proc, and its files. Run the server "
                 "as root for a user per namespace (docs/server.md, Security)\n";
    return OkStatus();
  }
  if (!options.run_as.empty()) {
    std::cerr << "trainyard server: warning: --run-as " << options.run_as
              << ": the replicas of every namespace --run-as-namespace does not name run as that "
                 "one user, and can read each other's Secrets and job tokens through /proc; "
                 "leave --run-as out for a user per namespace (docs/server.md, Security)\n";
    return OkStatus();
  }
  ASSIGN_OR_RETURN(run_as.own_users,
                   runtime::NamespaceUsers::Open(home + "/server/namespace-users"));
  return OkStatus();
}

// Where the server is, and how to reach it, once it serves.
void SayServing(const ServerOptions& options, const std::string& home, const std::string& url,
                int port, bool auth) {
  bool everywhere = options.address == "0.0.0.0" || options.address == "::";
  std::string pod_logs = home + "/server/pod-logs";
  std::string kubeconfig = home + "/kubeconfig";
  fmt::print(stderr, "trainyard server: serving the API on {}{}\n", url,
             options.api_only ? " (API only: nothing runs what it stores)" : "");
  if (!IsLoopbackHost(options.address)) {
    fmt::print(stderr, "  listening on {}:{}{}{}\n", UrlHost(options.address), port,
               everywhere ? " (every interface)" : "",
               auth ? "" : ", with no authentication (--allow-unauthenticated)");
  }
  if (!options.api_only) fmt::print(stderr, "  dashboard: {}/\n", url);
  fmt::print(stderr, "  state and logs: {}/server\n", home);
  if (options.api_only) {
    fmt::print(stderr,
               "  pod logs: {}/<namespace>_<pod>_<uid>/<container>/<restart>.log, in the "
               "kubelet's CRI format, written by whoever plays the kubelets\n",
               pod_logs);
  }
  fmt::print(stderr, "  export KUBECONFIG={}   # for kubectl and client libraries\n", kubeconfig);
}

// Serves the API over `engine` until a signal stops it; writes the
// kubeconfig once the default namespace is there.
int Serve(const ServerOptions& options, const std::string& home, engine::Engine& engine,
          const std::optional<server::Authorizer>& auth, server::Metrics& metrics) {
  const Clock& clock = RealClock::Get();
  // API-only, pods' logs are read where whoever plays the kubelets writes
  // them, as kube-apiserver reads them from the kubelets.
  std::string pod_logs = options.api_only ? home + "/server/pod-logs" : "";
  EngineBackend backend(engine, FormatRfc3339(clock.Now()), pod_logs);
  server::ApiHandler handler(backend, clock, auth ? &*auth : nullptr, &metrics, options.api_only);
  metrics.Seed(engine.store().committed());
  Result<store::WatchId> counted = engine.store().committed().WatchCommitted(
      0, [&metrics](std::span<const store::SharedWatchEvent> batch) {
        for (const store::SharedWatchEvent& e : batch) metrics.ObserveChange(*e);
      });
  if (!counted.ok()) {
    std::cerr << "trainyard server: " << counted.status().message() << '\n';
    return 1;
  }
  server::HttpServer http(handler, {.address = options.address,
                                    .port = options.port,
                                    .tls_cert = options.tls_cert,
                                    .tls_key = options.tls_key});
  Result<int> port = http.Bind();
  if (!port.ok()) {
    std::cerr << "trainyard server: " << port.status().message() << '\n';
    return 1;
  }
  // The URL this machine's clients use; the server may listen wider.
  bool everywhere = options.address == "0.0.0.0" || options.address == "::";
  std::string url = fmt::format("{}://{}:{}", options.tls_cert.empty() ? "http" : "https",
                                everywhere ? "127.0.0.1" : UrlHost(options.address), *port);
  // Replicas run in folders of their own: the certificate's path must not
  // be relative to this one.
  engine.SetApi(
      url, options.tls_cert.empty() ? "" : std::filesystem::absolute(options.tls_cert).string());
  StopOnSignals stop_on_signals(engine, {SIGINT, SIGTERM});
  signal(SIGPIPE, SIG_IGN);  // a client gone mid-response is the write's error, not ours

  // A long-lived server gives back what a burst of load left free.
  std::optional<MemoryTrimmer> trimmer;
  if (MemoryTrimmer::Wanted()) trimmer.emplace();
  std::thread serving([&] { http.Serve(); });
  // The loop must run for the default namespace to be written: from
  // another thread, which waits for it.
  std::thread setup([&] {
    Status made = handler.EnsureDefaultNamespace();
    std::string kubeconfig = home + "/kubeconfig";
    std::string token = auth ? auth->AdminToken().value_or("") : "";
    // kubectl reads a relative path against the kubeconfig's folder.
    std::string ca = options.tls_cert.empty()
                         ? ""
                         : fs::weakly_canonical(fs::absolute(options.tls_cert)).string();
    if (made.ok()) made = WriteKubeconfig(kubeconfig, url, ca, token);
    if (!made.ok()) {
      std::cerr << "trainyard server: " << made.message() << '\n';
      engine.RequestStop();
      return;
    }
    SayServing(options, home, url, *port, auth.has_value());
  });
  Status status = engine.Run([] { return false; }, [] {});
  setup.join();
  http.Stop();
  serving.join();
  if (!options.api_only) {
    fmt::print(stderr, "trainyard server: stopping every replica\n");
    engine.StopAll();
  }
  if (!status.ok() && status.code() != StatusCode::kAborted) {
    std::cerr << "trainyard server: " << status.message() << '\n';
    return 1;
  }
  return 0;
}

// What the flags say, checked before any state is made: bad ones change
// nothing.
struct ServerSetup {
  std::optional<server::Authorizer> auth;
  runtime::RunAsPolicy run_as;
  std::string home;
  std::vector<scheduler::Node> nodes;
  Duration keep_artifacts{};
  image::ImageGcPolicy image_gc;
};

Result<ServerSetup> CheckFlags(const ServerOptions& options) {
  ServerSetup setup;
  ASSIGN_OR_RETURN(setup.auth, LoadAuth(options));
  ASSIGN_OR_RETURN(setup.run_as,
                   runtime::MakeRunAsPolicy(options.run_as, options.run_as_namespace));
  setup.home = options.home.empty() ? DefaultHome() : options.home;
  RETURN_IF_ERROR(SeparateNamespaces(options, setup.auth.has_value(), setup.home, setup.run_as));
  RETURN_IF_ERROR(CheckHomeReachable(setup.home, setup.run_as));
  if (!options.nodes_file.empty()) {
    Result<std::vector<scheduler::Node>> read = engine::ReadNodesFile(options.nodes_file);
    if (!read.ok()) return InvalidArgumentError("--nodes: " + read.status().message());
    setup.nodes = std::move(*read);
  }
  std::optional<Duration> keep = ParseGoDuration(options.keep_artifacts);
  if (!keep || *keep < Duration::zero()) {
    return InvalidArgumentError(
        "--keep-artifacts " + options.keep_artifacts +
        ": want a duration from 0s (removed with the job) to 2555000h (292 years), such as "
        "168h or 30m");
  }
  setup.keep_artifacts = *keep;
  ASSIGN_OR_RETURN(setup.image_gc, options.images.Policy());
  return setup;
}

}  // namespace

int RunServer(const ServerOptions& options) {
  RaiseDescriptorLimit();
  GiveLargeBlocksBack();
  Result<ServerSetup> checked = CheckFlags(options);
  if (!checked.ok()) {
    std::cerr << "trainyard server: " << checked.status().message() << '\n';
    return 2;
  }
  ServerSetup& setup = *checked;
  const std::string& home = setup.home;
  Result<HomeLock> lock = HomeLock::Take(home + "/server");
  if (!lock.ok()) {
    std::cerr << "trainyard server: " << lock.status().message() << '\n';
    return 1;
  }
  server::Metrics metrics;
  Result<std::unique_ptr<engine::Engine>> created = BuildControlPlane(
      {.home = home,
       .state_dir = home + "/server",
       .run_as = setup.run_as,
       .no_sandbox = options.no_sandbox,
       .root = options.root,
       .image_gc = setup.image_gc,
       .cdi_spec_dirs = options.images.cdi_spec_dirs,
       .pod_max_pids = options.pod_max_pids,
       .nodes = std::move(setup.nodes),
       .without_shim = "replicas will die with the server instead of being adopted, daemons "
                       "they start may outlive them, and they run without sandboxes",
       .passable = {home}},
      [&](engine::EngineOptions& o) {
        // Replicas outlive a crash of the server and are adopted when it
        // restarts.
        o.detach_replicas = true;
        o.artifacts_retention = setup.keep_artifacts;
        // What a pod needs may be applied after it.
        o.wait_for_config = true;
        // With tokens, namespaces are their users': none reaches the
        // machine's files unless an administrator allows it.
        o.baseline_namespaces = setup.auth.has_value();
        o.api_only = options.api_only;
        o.on_reconcile = [&metrics](std::chrono::steady_clock::duration d) {
          metrics.ObserveReconcile(std::chrono::duration<double>(d).count());
        };
      });
  if (!created.ok()) {
    std::cerr << "trainyard server: " << created.status().message() << '\n';
    return 1;
  }
  return Serve(options, home, **created, setup.auth, metrics);
}

}  // namespace trainyard::cli
