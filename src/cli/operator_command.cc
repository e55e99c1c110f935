#include "cli/operator_command.h"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <optional>
#include <random>
#include <thread>

#include "api/kinds.h"
#include "api/registry.h"
#include "cli/install_manifests.h"
#include "cli/operator_endpoints.h"
#include "cli/operator_trainer_status.h"
#include "cluster/cluster_controller.h"
#include "cluster/cluster_scheduler.h"
#include "common/memory_trimmer.h"
#include "common/mutex.h"
#include "common/strings.h"
#include "controller/pod_groups.h"
#include "kube/kube_store.h"
#include "kube/leader_election.h"
#include "kube/rest_path.h"
#include "kube/webhook_server.h"
#include "kube/webhook_setup.h"
#include "store/sqlite_store.h"

namespace trainyard::cli {
namespace {

// --gang-scheduler-name trainyard: trainyard's own scheduler places pods.
constexpr char kOwnScheduler[] = "trainyard";

// Upstream's scheme names ("pytorchjob", also as kinds) to job kinds; every
// kind when none is named.
Result<std::vector<std::string>> JobKinds(const std::vector<std::string>& schemes) {
  std::vector<std::string> all;
  for (const api::KindInfo& info : api::AllKinds()) all.emplace_back(info.name);
  if (schemes.empty()) return all;
  std::vector<std::string> kinds;
  for (const std::string& scheme : schemes) {
    auto it = std::find_if(all.begin(), all.end(), [&](const std::string& k) {
      return AsciiLower(k) == AsciiLower(scheme);
    });
    if (it == all.end()) {
      std::vector<std::string> names;
      for (const std::string& k : all) names.push_back(AsciiLower(k));
      return InvalidArgumentError(
          fmt::format("--enable-scheme {:?}: not one of {}", scheme, Join(names, ", ")));
    }
    if (std::find(kinds.begin(), kinds.end(), *it) == kinds.end()) kinds.push_back(*it);
  }
  return kinds;
}

// What the informers follow: the jobs, and what the job controller owns
// for them: an MPIJob's ConfigMap and launcher account, a gang's PodGroup
// (Volcano letting a group in wakes its job) and the PriorityClasses its
// minResources are ordered by; and for trainyard's own scheduler, the
// Nodes. Nothing else is cached.
std::vector<std::string> WatchedKinds(const std::vector<std::string>& job_kinds,
                                      const std::string& gang_scheduler, bool katib, bool trainer) {
  std::vector<std::string> kinds = job_kinds;
  if (trainer) {
    kinds.insert(kinds.end(), {"TrainJob", "TrainingRuntime", "ClusterTrainingRuntime", "JobSet",
                               "OptimizationJob"});
  }
  // Katib's kinds, and batch/v1 Jobs, which trials may run (the cluster's
  // job controller runs them; a trial follows its job).
  if (katib) kinds.insert(kinds.end(), {"Experiment", "Trial", "Suggestion", "Job"});
  for (const char* owned : {"Pod", "Service"}) kinds.emplace_back(owned);
  if (!gang_scheduler.empty()) {
    kinds.insert(kinds.end(), {controller::PodGroupKind(gang_scheduler), "PriorityClass"});
  }
  if (gang_scheduler == kOwnScheduler) kinds.emplace_back("Node");
  if (std::find(job_kinds.begin(), job_kinds.end(), "MPIJob") != job_kinds.end()) {
    kinds.insert(kinds.end(), {"ConfigMap", "ServiceAccount", "Role", "RoleBinding"});
  } else if (trainer) {
    kinds.emplace_back("ConfigMap");  // an MPI runtime's hostfile
  }
  return kinds;
}

// Says, before anything runs, what this operator does not do yet that a
// user of upstream's would count on.
Status CheckSupported(const OperatorOptions& options) {
  if (options.pytorch_init_container_max_tries < 1) {
    return InvalidArgumentError("--pytorch-init-container-max-tries must be at least 1");
  }
  if (options.controller_threads < 1) {
    return InvalidArgumentError("--controller-threads must be at least 1");
  }
  if (!options.katib && (!options.state_dir.empty() || !options.katib_push_url.empty())) {
    return InvalidArgumentError(
        "--state-dir and --katib-push-url are for Katib's trials: add --katib, or drop them");
  }
  if (options.katib && options.state_dir.empty()) {
    return InvalidArgumentError(
        "--katib keeps the trials' observation log in --state-dir: give it a directory on a "
        "volume, so that a restarted operator keeps what trials reported");
  }
  if (options.katib && options.metrics_bind_address == "0") {
    return InvalidArgumentError(
        "--katib: trials push their metrics to the metrics address: do not set "
        "--metrics-bind-address 0");
  }
  if (options.kube_api_burst < 1)
    return InvalidArgumentError("--kube-api-burst must be at least 1");
  return OkStatus();
}

// Upstream's election id: a trainyard operator and upstream's never both
// act on one cluster either.
constexpr const char* kLeaseName = "1ca428e5.training-operator.kubeflow.org";

// This candidate's name in the lease: its host and a random suffix, as
// client-go's.
std::string Identity() {
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  std::random_device random;
  return fmt::format("{}_{:08x}", host[0] != '\0' ? host : "trainyard", random());
}

Result<kube::LeaderElectionOptions> ElectionOptions(const OperatorOptions& options) {
  kube::LeaderElectionOptions out;
  struct Flag {
    const char* name;
    const std::string& text;
    Duration& value;
  };
  for (const Flag& f :
       {Flag{"--leader-elect-lease-duration", options.lease_duration, out.lease_duration},
        Flag{"--leader-elect-renew-deadline", options.renew_deadline, out.renew_deadline},
        Flag{"--leader-elect-retry-period", options.retry_period, out.retry_period}}) {
    std::optional<Duration> d = ParseGoDuration(f.text);
    if (!d || *d <= Duration::zero()) {
      return InvalidArgumentError(
          fmt::format("{} {:?}: want a duration such as 15s", f.name, f.text));
    }
    f.value = *d;
  }
  // As client-go requires: the holder stops before anyone may take over.
  if (out.lease_duration <= out.renew_deadline || out.renew_deadline <= out.retry_period) {
    return InvalidArgumentError(
        "the lease duration must exceed the renew deadline, and that the retry period");
  }
  out.name = kLeaseName;
  out.identity = Identity();
  return out;
}

// The candidate `--leader-elect` asks for, with a client of its own whose
// requests end within half the renew deadline (a renewal must fail in
// time, not hang past it).
Status MakeElector(const OperatorOptions& options, const kube::ClusterConfig& config,
                   std::unique_ptr<kube::KubeClient>& client,
                   std::unique_ptr<kube::LeaderElector>& elector) {
  ASSIGN_OR_RETURN(kube::LeaderElectionOptions election, ElectionOptions(options));
  ASSIGN_OR_RETURN(
      client, kube::KubeClient::Create(config, {.user_agent = "trainyard-operator/leader-election",
                                                .request_timeout = election.renew_deadline / 2}));
  election.client = client.get();
  election.namespace_ = config.namespace_;  // the operator's own: its pod's
  elector = std::make_unique<kube::LeaderElector>(std::move(election));
  return OkStatus();
}

// Blocks SIGINT and SIGTERM in every thread started after it, and calls
// `stop` from a thread of its own when one comes.
class SignalStopper {
 public:
  explicit SignalStopper(std::function<void()> stop) {
    sigemptyset(&set_);
    sigaddset(&set_, SIGINT);
    sigaddset(&set_, SIGTERM);
    sigaddset(&set_, SIGUSR1);  // our own: the operator ended by itself
    pthread_sigmask(SIG_BLOCK, &set_, nullptr);
    thread_ = std::thread([this, stop = std::move(stop)] {
      int sig = 0;
      sigwait(&set_, &sig);
      stop();
    });
  }
  ~SignalStopper() {
    pthread_kill(thread_.native_handle(), SIGUSR1);
    thread_.join();
  }

 private:
  sigset_t set_;
  std::thread thread_;
};

// The trials' observation log, in `state_dir` (made if need be, the
// operator's alone).
Result<std::unique_ptr<store::SqliteStore>> OpenObservations(const std::string& state_dir) {
  std::error_code ec;
  std::filesystem::create_directories(state_dir, ec);
  if (ec) return UnavailableError(fmt::format("--state-dir {}: {}", state_dir, ec.message()));
  std::filesystem::permissions(state_dir, std::filesystem::perms::owner_all, ec);
  Result<std::unique_ptr<store::SqliteStore>> opened =
      store::SqliteStore::Open({.path = state_dir + "/observations.db"});
  if (!opened.ok()) {
    return Status(opened.status().code(),
                  fmt::format("--state-dir {}: {}", state_dir, opened.status().message()));
  }
  return opened;
}

// Webhook configurations that send every job to a server this operator
// does not run (--webhook-server-port 0) make the API server refuse every
// job, as their failurePolicy is Fail: said at start, with the way out.
void WarnOfUnservedWebhooks(const OperatorOptions& options, kube::KubeClient& client) {
  for (const char* kind : {"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"}) {
    Result<api::Json> configuration = client.Get(kind, "", options.webhook_service_name);
    if (!configuration.ok()) continue;
    for (const api::Json& hook : api::ArrayRefAt(*configuration, {"webhooks"})) {
      if (api::StringAt(hook, "failurePolicy", "Fail") != "Fail") continue;
      fmt::print(stderr,
                 "trainyard operator: warning: the {} {} sends jobs to webhooks this operator does "
                 "not serve (--webhook-server-port 0), and fails them when none answers: the API "
                 "server will refuse every job. Serve them (leave --webhook-server-port out), or "
                 "delete it: kubectl delete {} {}\n",
                 kind, options.webhook_service_name, AsciiLower(kind),
                 options.webhook_service_name);
      break;
    }
  }
}

// A quiet trial prints nothing for a while: a read of its log that hears
// nothing for this long is begun again from where it was.
constexpr Duration kQuietLog = std::chrono::minutes(5);

// What the controller needs for Katib, if it is on: the log, where trials
// push (the webhook Service's DNS name at its metrics port, unless
// --katib-push-url says otherwise), and the pod logs StdOut trials print to.
std::optional<cluster::ClusterControllerOptions::Katib> KatibOf(const OperatorOptions& options,
                                                                store::ObservationLog* log,
                                                                const std::string& home_namespace,
                                                                kube::KubeClient& client) {
  if (!options.katib) return std::nullopt;
  std::string url = options.katib_push_url;
  if (url.empty()) {
    // The Service's port, which sends on to the container's metrics port
    // whatever --metrics-bind-address binds it to.
    url = fmt::format("http://{}.{}.svc:{}", options.webhook_service_name, home_namespace,
                      kMetricsServicePort);
  }
  return cluster::ClusterControllerOptions::Katib{
      .observations = log,
      .push_url = url,
      .pod_logs = [&client](const cluster::PodLogRequest& request,
                            const std::function<bool(std::string_view)>& on_data,
                            kube::WatchHandle& handle) {
        return client.Stream(cluster::PodLogPath(request), kQuietLog, on_data, handle);
      }};
}

// trainyard's own scheduler, on a thread beside the controller's while this
// operator acts; it binds through `client`.
class SchedulerThread {
  // Binds through pods/binding, as kube-scheduler does.
  static auto Binder(kube::KubeClient& client) {
    return [&client](const std::string& ns, const std::string& pod,
                     const std::string& node) -> Status {
      ASSIGN_OR_RETURN(std::string path, kube::ObjectPath("Pod", ns, pod, "binding"));
      api::Json binding = {{"apiVersion", "v1"},
                           {"kind", "Binding"},
                           {"metadata", {{"name", pod}, {"namespace", ns}}},
                           {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", node}}}};
      return client.Call("POST", path, binding).status();
    };
  }

 public:
  SchedulerThread(store::ObjectStore& store, kube::KubeClient& client)
      : scheduler_({.store = &store, .scheduler_name = kOwnScheduler, .bind = Binder(client)}),
        thread_([this] {
          if (Status ran = scheduler_.Run(); !ran.ok()) {
            std::cerr << "trainyard operator: the scheduler stopped: " << ran.message() << '\n';
          }
        }) {}
  ~SchedulerThread() {
    scheduler_.RequestStop();
    thread_.join();
  }

 private:
  cluster::ClusterScheduler scheduler_;
  std::thread thread_;
};

int Fail(int code, const std::string& why) {
  std::cerr << "trainyard operator: " << why << '\n';
  return code;
}

// The cluster the flags name, and what of it to reconcile.
struct Connection {
  std::vector<std::string> job_kinds;
  kube::ClusterConfig config;
  std::unique_ptr<kube::KubeClient> client;
  std::string namespace_;  // empty: every one
};

Result<Connection> Connect(const OperatorOptions& options) {
  Connection c;
  ASSIGN_OR_RETURN(c.job_kinds, JobKinds(options.enable_schemes));
  ASSIGN_OR_RETURN(c.config,
                   kube::LoadClusterConfig(options.kubeconfig, options.context, kube::ProcessEnv));
  ASSIGN_OR_RETURN(c.client,
                   kube::KubeClient::Create(c.config, {.qps = options.kube_api_qps,
                                                       .burst = options.kube_api_burst,
                                                       .user_agent = "trainyard-operator"}));
  c.namespace_ = options.namespace_;
  if (c.namespace_.empty()) c.namespace_ = kube::ProcessEnv("KUBEFLOW_NAMESPACE").value_or("");
  if (options.gang_scheduler_name == kOwnScheduler && !c.namespace_.empty()) {
    return InvalidArgumentError(fmt::format(
        "--gang-scheduler-name trainyard places pods by what every pod on a node uses, so it "
        "must see every namespace: drop --namespace {} (and KUBEFLOW_NAMESPACE)",
        c.namespace_));
  }
  if (options.controller_threads > 1) {
    std::cerr << "trainyard operator: note: --controller-threads " << options.controller_threads
              << ": reconciles run on one thread; the flag is taken for compatibility\n";
  }
  return c;
}

// What serves HTTPS with the operator's certificate, every replica alike
// (leader or not): the admission webhooks and, with --trainer, the
// TrainJob status server, with a client of its own (trainers' reports
// never wait on the reconciler's request budget).
struct TlsEndpoints {
  kube::WebhookServer webhooks;
  std::unique_ptr<kube::KubeClient> status_client;
  std::unique_ptr<TrainerStatusServer> status;
  // Where trainer pods reach the status server, and its CA; empty: none.
  std::string status_url;
  std::string status_ca;
};

bool ServesTrainerStatus(const OperatorOptions& options) {
  return options.trainer && options.trainer_status_port != 0;
}

Status StartTrainerStatus(const OperatorOptions& options, const Connection& c,
                          const kube::ServingCertificate& certificate, TlsEndpoints& tls);

// The certificate kept in the operator's namespace, trusted by the webhook
// configurations; the servers that use it started.
Status StartTls(const OperatorOptions& options, const Connection& c, TlsEndpoints& tls) {
  kube::WebhookSetupOptions setup{.client = c.client.get(),
                                  .namespace_ = c.config.namespace_,
                                  .service_name = options.webhook_service_name,
                                  .secret_name = options.webhook_secret_name};
  ASSIGN_OR_RETURN(kube::ServingCertificate certificate, kube::EnsureWebhookCertificate(setup));
  if (options.webhook_server_port != 0) {
    if (Status trusted = kube::TrustCertificate(setup, certificate.ca_pem); !trusted.ok()) {
      if (trusted.code() != StatusCode::kNotFound) return trusted;
      std::cerr << "trainyard operator: note: " << trusted.message() << '\n';
    }
    ASSIGN_OR_RETURN(int port,
                     tls.webhooks.Start(certificate, "0.0.0.0", options.webhook_server_port));
    fmt::print(stderr, "trainyard operator: serving admission webhooks on :{}\n", port);
  }
  if (ServesTrainerStatus(options))
    RETURN_IF_ERROR(StartTrainerStatus(options, c, certificate, tls));
  return OkStatus();
}

Status StartTrainerStatus(const OperatorOptions& options, const Connection& c,
                          const kube::ServingCertificate& certificate, TlsEndpoints& tls) {
  ASSIGN_OR_RETURN(
      tls.status_client,
      kube::KubeClient::Create(
          c.config, {.qps = 50, .burst = 100, .user_agent = "trainyard-operator/status"}));
  tls.status = std::make_unique<TrainerStatusServer>(*tls.status_client);
  ASSIGN_OR_RETURN(int port,
                   tls.status->Start(certificate, "0.0.0.0", options.trainer_status_port));
  // The Service's port, which sends on to the container's.
  tls.status_url = fmt::format("https://{}.{}.svc:{}", options.webhook_service_name,
                               c.config.namespace_, kTrainerStatusServicePort);
  tls.status_ca = certificate.ca_pem;
  fmt::print(stderr, "trainyard operator: serving TrainJob status reports on :{} (as {})\n", port,
             tls.status_url);
  return OkStatus();
}

// The controller, once it leads, until a signal (or a lost lease) stops it.
struct StopState {
  Mutex mu;
  bool stopped TRAINYARD_GUARDED_BY(mu) = false;
  cluster::ClusterController* running TRAINYARD_GUARDED_BY(mu) = nullptr;
};

// /metrics, the probes, the admission webhooks and the TrainJob status
// server: every replica serves them, leader or not.
Status ServeEndpoints(const OperatorOptions& options, Connection& c, server::Metrics& metrics,
                      kube::KubeStore& store, std::atomic<bool>& ready,
                      const TrialObservations* observed, OperatorEndpoints& endpoints,
                      TlsEndpoints& tls) {
  RETURN_IF_ERROR(endpoints.Start(
      options.metrics_bind_address, options.health_probe_bind_address, metrics, store,
      [&ready] { return ready.load(); }, observed));
  if (options.webhook_server_port == 0) WarnOfUnservedWebhooks(options, *c.client);
  if (options.webhook_server_port == 0 && !ServesTrainerStatus(options)) return OkStatus();
  if (Status served = StartTls(options, c, tls); !served.ok()) {
    return UnavailableError(
        fmt::format("admission webhooks and TrainJob status: {}", served.message()));
  }
  return OkStatus();
}

int Act(const OperatorOptions& options, Connection& c, kube::KubeStore& store,
        store::SqliteStore* observations, const TlsEndpoints& tls, kube::LeaderElector* elector,
        StopState& stop, std::atomic<bool>& acting) {
  cluster::ClusterController controller(
      {.store = &store,
       .job_kinds = c.job_kinds,
       .cluster = {.domain = kube::ProcessEnv("CUSTOM_CLUSTER_DOMAIN").value_or(""),
                   .pytorch_init_image = options.pytorch_init_container_image,
                   .pytorch_init_max_tries = options.pytorch_init_container_max_tries,
                   .gang_scheduler = options.gang_scheduler_name,
                   .mpi_kubectl_delivery_image = options.mpi_kubectl_delivery_image,
                   .trainer_status_url = tls.status_url,
                   .trainer_status_ca = tls.status_ca},
       .katib = KatibOf(options, observations, c.config.namespace_, *c.client),
       .trainer = options.trainer});
  acting = true;
  {
    MutexLock lock(stop.mu);
    if (stop.stopped) return 0;
    stop.running = &controller;
  }
  // A leader that cannot renew stops acting before its lease runs out.
  std::atomic<bool> lost = false;
  std::thread renewing;
  if (elector != nullptr) {
    renewing = std::thread([&] {
      if (!elector->RenewUntilLost()) return;
      lost = true;
      controller.RequestStop();
    });
  }
  std::vector<std::string> reconciled = c.job_kinds;
  if (options.trainer) {
    reconciled.insert(reconciled.end(), {"TrainJob", "OptimizationJob"});  // JobSets are JobSet's
  }
  if (options.katib) reconciled.insert(reconciled.end(), {"Experiment", "Trial", "Suggestion"});
  fmt::print(stderr, "trainyard operator: reconciling {} in {} on {}\n", Join(reconciled, ", "),
             c.namespace_.empty() ? "every namespace" : "namespace " + c.namespace_,
             c.config.server);
  std::optional<SchedulerThread> scheduling;
  if (options.gang_scheduler_name == kOwnScheduler) scheduling.emplace(store, *c.client);
  Status status = controller.Run();
  scheduling.reset();
  {
    MutexLock lock(stop.mu);
    stop.running = nullptr;
  }
  if (elector != nullptr) {
    elector->Stop();
    renewing.join();
  }
  store.Stop();
  if (lost) return Fail(1, "stopped acting: the lease was lost (another replica may lead now)");
  if (elector != nullptr) elector->Release();
  if (!status.ok()) return Fail(1, status.message());
  fmt::print(stderr, "trainyard operator: stopped\n");
  return 0;
}

}  // namespace

int RunOperator(const OperatorOptions& options) {
  if (Status supported = CheckSupported(options); !supported.ok()) {
    return Fail(2, supported.message());
  }
  // A connection the server closed (or a watch stopped mid-read) is that
  // request's error, never the operator's end.
  signal(SIGPIPE, SIG_IGN);
  Result<Connection> connected = Connect(options);
  if (!connected.ok()) return Fail(2, connected.status().message());
  Connection& c = *connected;
  std::unique_ptr<kube::KubeClient> lease_client;
  std::unique_ptr<kube::LeaderElector> elector;
  if (options.leader_elect) {
    Status made = MakeElector(options, c.config, lease_client, elector);
    if (!made.ok()) return Fail(2, made.message());
  }
  kube::KubeStore store({.client = c.client.get(),
                         .kinds = WatchedKinds(c.job_kinds, options.gang_scheduler_name,
                                               options.katib, options.trainer),
                         .optional_kinds = {"OptimizationJob"},
                         .namespace_ = c.namespace_});
  // Signals are taken by one thread; every other starts with them blocked.
  StopState stop;
  SignalStopper stopper([&] {
    MutexLock lock(stop.mu);
    stop.stopped = true;
    if (elector) elector->Stop();
    if (stop.running != nullptr) stop.running->RequestStop();
  });
  // Upstream's job counters, from every change the informers see.
  server::Metrics metrics(c.job_kinds);  // the kinds not enabled are not read
  if (Result<store::WatchId> counted =
          store.Watch(0, [&metrics](const store::WatchEvent& e) { metrics.ObserveChange(e); });
      !counted.ok()) {
    return Fail(1, counted.status().message());
  }
  // With Katib, the trials' observation log: this operator's own store.
  std::unique_ptr<store::SqliteStore> observations;
  std::atomic<bool> acting = false;
  TrialObservations observed{.trials = &store, .acting = &acting};
  if (options.katib) {
    Result<std::unique_ptr<store::SqliteStore>> opened = OpenObservations(options.state_dir);
    if (!opened.ok()) return Fail(1, opened.status().message());
    observations = std::move(*opened);
    observed.log = observations.get();
  }
  // Ready once the webhooks serve.
  std::atomic<bool> ready = false;
  OperatorEndpoints endpoints;
  TlsEndpoints tls;
  if (Status served = ServeEndpoints(options, c, metrics, store, ready,
                                     options.katib ? &observed : nullptr, endpoints, tls);
      !served.ok()) {
    return Fail(1, served.message());
  }
  ready = true;
  if (elector) {
    fmt::print(stderr, "trainyard operator: waiting to lead (lease {})\n", kLeaseName);
    if (!elector->Acquire()) return 0;  // stopped while waiting
    fmt::print(stderr, "trainyard operator: leading\n");
  }
  if (Status started = store.Start(); !started.ok()) {
    return Fail(1, fmt::format("cannot read the cluster at {} ({}): {}", c.config.server,
                               c.config.source, started.message()));
  }
  metrics.Seed(store);                   // jobs finished before it started are not counted again
  std::optional<MemoryTrimmer> trimmer;  // gives back what a burst of events left free
  if (MemoryTrimmer::Wanted()) trimmer.emplace();
  return Act(options, c, store, observations.get(), tls, elector.get(), stop, acting);
}

}  // namespace trainyard::cli
