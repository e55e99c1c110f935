// The embedded control plane: one object store, the job controller and the
// node agent, driven by one loop. Store changes, timers the controller asks
// for (deadlines, TTLs), and process exits all wake the loop; nothing
// sleeps. Threads: the loop's own; Execute() may be called from any
// thread, and RequestStop() from a signal handler too.
#pragma once

#include <atomic>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "api/object.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/mutex.h"
#include "controller/batch_job_reconciler.h"
#include "controller/deployment_reconciler.h"
#include "controller/experiment_reconciler.h"
#include "controller/job_reconciler.h"
#include "controller/jobset_reconciler.h"
#include "controller/owned.h"
#include "controller/ports.h"
#include "controller/trainjob_reconciler.h"
#include "controller/trial_reconciler.h"
#include "engine/artifact_dirs.h"
#include "engine/metrics_collector.h"
#include "engine/reconcile_queue.h"
#include "engine/scheduler_step.h"
#include "image/image_gc.h"
#include "node/cgroups.h"
#include "node/node_agent.h"
#include "runtime/local/credentials.h"
#include "runtime/local/machine.h"
#include "store/control_store.h"

namespace trainyard::engine {

struct EngineOptions {
  // Where what is neither a status nor an event is said.
  Logger* log = &StderrLog();
  std::string state_dir;  // holds state.db and logs/
  // Where PersistentVolumeClaims keep their data, beyond any run
  // (engine/claim_reconciler.h); empty: <state_dir>/claims.
  std::string claims_dir;
  std::string working_dir;
  std::vector<std::pair<std::string, std::string>> base_env;
  // The trainyard binary, for `trainyard exec` (MPI's rsh agent); empty:
  // MPIJobs get upstream's `kubectl exec`.
  std::string exec_program;
  // trainyard-shim: everything a replica starts ends with it
  // (node::NodeAgentOptions::shim).
  std::string shim;
  // With a shim: replicas outlive a crash of the engine and are adopted
  // when it starts again (`trainyard server`); otherwise they die with it.
  bool detach_replicas = false;
  // bubblewrap's path, with a shim: replicas run in sandboxes of their own
  // (node/sandbox.h). Empty: they reach their volumes through path
  // rewriting, for the reason no_sandbox gives.
  std::string bwrap;
  std::string no_sandbox = "no sandboxes were asked for";
  // Set: containers run in their images' roots, which this store folder
  // (<home>/images, image/image_store.h) holds; empty: on the machine's
  // own files (node::NodeAgentOptions::images).
  std::string images_dir;
  // With images_dir: whether a pod may ask for the machine's files instead
  // (node::NodeAgentOptions::host_root_allowed).
  bool host_root_allowed = true;
  // With images_dir: when images no pod uses are removed (the kubelet's
  // image GC thresholds).
  image::ImageGcPolicy image_gc;
  // With images_dir: where CDI specs are (node::NodeAgentOptions).
  std::vector<std::string> cdi_spec_dirs = node::DefaultCdiSpecDirs();
  // Logs outlive their pods (node::NodeAgentOptions::keep_logs).
  bool keep_logs = false;
  // The API server pods reach as their service account would
  // (node::NodeAgentOptions::api_access); unset: none.
  std::optional<node::ApiAccess> api_access;
  // How long a job's artifacts outlive it (engine/artifact_dirs.h).
  Duration artifacts_retention = std::chrono::hours(24 * 7);
  // Containers wait for a ConfigMap, Secret or claim that is not there yet
  // (node::NodeAgentOptions::wait_for_config): a server's may come later.
  bool wait_for_config = false;
  // Who each namespace's replicas run as (runtime/local/credentials.h).
  runtime::RunAsPolicy run_as;
  // The tasks a pod may have at once (--pod-max-pids); 0 or less: none.
  int64_t pod_max_pids = 0;
  // Namespaces are Pod Security baseline unless labelled privileged: their
  // pods start with no hostPath volume but trainyard's own (a server with
  // tokens, where namespaces are users').
  bool baseline_namespaces = false;
  // What replicas may use; discovered (nvidia-smi through base_env's PATH)
  // when not given.
  std::optional<runtime::MachineFacts> machine;
  // The nodes pods are placed on (--nodes): empty, this machine alone.
  // Whatever node a pod is bound to, it runs here.
  std::vector<scheduler::Node> nodes;
  scheduler::Policy policy = scheduler::Policy::kBinPack;
  const Clock* clock = &RealClock::Get();
  // Opens the store the engine owns, given the state folder: any
  // store::GroupCommitStore. Unset: the SQLite store in `state.db`.
  using OpenStore =
      std::function<Result<std::unique_ptr<store::GroupCommitStore>>(const std::string& state_dir)>;
  OpenStore open_store;
  // The SQLite VFS of that store (store::SqliteStoreOptions::vfs); empty:
  // the default. Tests fill the disk through their own.
  std::string store_vfs;
  // The store and the API only, as kube-apiserver is (upstream's envtest):
  // no controller, scheduler, node agent or garbage collector runs, so an
  // operator (`trainyard operator`) and a test playing the kubelet do
  // their work. Nodes are only those declared.
  bool api_only = false;
  // Told how long each reconcile took (for /metrics).
  std::function<void(std::chrono::steady_clock::duration)> on_reconcile;
};

class Engine {
 public:
  static Result<std::unique_ptr<Engine>> Create(EngineOptions options);
  ~Engine();

  // Stores a validated object (namespace "default" unless it has one),
  // durably: an error when it could not be written.
  Result<store::ObjectKey> Submit(const api::Object& object);

  // Runs `write` on the loop's thread, in its write group, while Run()
  // runs; returns once what it wrote is durable (the group is committed
  // before any caller hears back). Calls that arrive together share one
  // commit. For API servers: their threads never write the store directly.
  // A call made before Run() starts waits for it; UNAVAILABLE once Run()
  // has stopped (or the engine is destroyed) without running it.
  using Write = std::function<Result<api::Json>(store::ControlStore&)>;
  Result<api::Json> Execute(Write write);

  // Where Push trials push their metrics, and where replicas log with
  // MLflow (node/tracking_env.h): the API serving this engine
  // (controller::TrialReconcilerOptions::api_url). Call before Run().
  void SetApi(std::string url, std::string ca_file = "");

  // Runs until `done()` is true after a step, or RequestStop(). `on_step`
  // runs after every step (status lines, logs); it must not block.
  Status Run(const std::function<bool()>& done, const std::function<void()>& on_step);
  // Async-signal-safe: ends Run() at its next wake-up.
  void RequestStop();
  // Stops every replica process (SIGTERM, SIGKILL after its pod's
  // terminationGracePeriodSeconds, 30 s by default).
  void StopAll();

  store::GroupCommitStore& store() { return *store_; }
  // Null in an API-only engine.
  node::NodeAgent* node() { return node_.get(); }
  bool api_only() const { return options_.api_only; }
  const std::string& state_dir() const { return options_.state_dir; }
  // Where jobs' output folders are (api::ArtifactsDirOf); "" without a
  // state directory. How long they outlive their jobs.
  const std::string& artifacts_dir() const { return artifact_dirs_.root(); }
  Duration artifacts_retention() const { return artifact_dirs_.retention(); }
  const std::string& exec_program() const { return options_.exec_program; }
  const runtime::MachineFacts& machine() const { return *options_.machine; }
  // The node pods are bound to: this machine's host name.
  const std::string& node_name() const { return node_name_; }
  // The scheduler's inventory: this machine, or the declared nodes.
  const std::vector<scheduler::Node>& nodes() const { return options_.nodes; }

 private:
  explicit Engine(EngineOptions options) : options_(std::move(options)) {}
  Status Init();
  Status OpenStore();
  void ScopeCgroups();
  std::unique_ptr<controller::TrialReconciler> AddReconcilers();
  void StartNode();
  void OnEvent(const store::WatchEvent& event);
  Status ProcessQueue();
  // Queues every object a reconciler owns: at start, what an earlier run of
  // the engine left is reconciled from where it stands.
  Status QueueEveryJob();
  // Reconciles, schedules and syncs the node; returns when the node agent
  // next has work. Writes go to one open store group (one transaction, one
  // fsync): Run commits it before it reports or sleeps, and a step commits
  // it before the node agent may start processes, so that every replica
  // runs for a pod the store holds. A crash before a commit loses only
  // work that is redone: writes that started no process, and the node
  // agent's record of a start, which the next node agent recovers.
  Result<std::optional<Duration>> Step();
  Status Loop(const std::function<bool()>& done, const std::function<void()>& on_step);
  Status OpenGroup();
  Status CommitOpenGroup();
  // Runs the calls Execute() handed over, commits, and answers them.
  Status RunCalls();
  // Answers every waiting call with `why` and takes no more.
  void CloseInbox(const Status& why);
  // How long the loop may sleep.
  Duration NextWake(std::optional<Duration> node_wake) const;
  // A step's work could not be stored (a full disk, most likely): the
  // store has taken it back, so every job is queued to be reconciled again
  // from what is on disk. Replicas run on and reads are served meanwhile.
  // Returns how long to wait before trying again.
  Duration AfterFailedStep(const Status& why);

  EngineOptions options_;
  std::unique_ptr<store::GroupCommitStore> store_;
  controller::LocalPortAllocator ports_;
  std::unique_ptr<MetricsCollector> metrics_collector_;
  std::vector<std::unique_ptr<controller::Reconciler>> reconcilers_;
  controller::TrialReconciler* trial_reconciler_ = nullptr;  // in reconcilers_, for SetApi
  std::unique_ptr<SchedulerStep> scheduler_;
  // Where containers' limits are enforced (before node_, which uses it).
  node::Cgroups cgroups_ = node::Cgroups::Detect();
  std::unique_ptr<node::Sandboxes> sandboxes_;
  std::unique_ptr<image::ImageStore> images_;
  std::unique_ptr<node::ImagePuller> image_puller_;
  std::unique_ptr<node::NodeAgent> node_;
  std::string node_name_;
  int wake_pipe_[2] = {-1, -1};
  std::atomic<bool> stop_requested_{false};

  struct Call {
    Write write;
    std::promise<Result<api::Json>> done;
  };
  Mutex inbox_mu_;
  std::vector<Call> inbox_ TRAINYARD_GUARDED_BY(inbox_mu_);
  bool accepting_ TRAINYARD_GUARDED_BY(inbox_mu_) = true;  // Run() has not stopped

  // Owned by the loop thread (the store calls OnEvent in the writing
  // thread, which is the loop thread too).
  ReconcileQueue queue_{options_.clock, options_.on_reconcile, options_.log};
  std::vector<std::string> collect_;  // uids of deleted owners, dependents to delete
  ArtifactDirs artifact_dirs_{options_.state_dir.empty() ? "" : options_.state_dir + "/artifacts",
                              options_.clock, options_.artifacts_retention, options_.log};
  bool group_open_ = false;
  int failed_steps_ = 0;      // in a row
  std::string last_failure_;  // the last failed step's error
};

}  // namespace trainyard::engine
