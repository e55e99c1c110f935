#include "engine/engine.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <optional>

#include "api/defaults.h"
#include "api/json.h"
#include "common/strings.h"
#include "controller/optimization_job_reconciler.h"
#include "engine/claim_reconciler.h"
#include "engine/inventory.h"
#include "store/sqlite_store.h"

namespace trainyard::engine {
namespace {

// The trial controller must see every metric printed so far: the metrics
// collector reads them into the observation log first.
class CollectingTrialReconciler final : public controller::Reconciler {
 public:
  CollectingTrialReconciler(MetricsCollector* collector,
                            std::unique_ptr<controller::TrialReconciler> trials)
      : collector_(collector), trials_(std::move(trials)) {}
  std::vector<std::string> Kinds() const override { return trials_->Kinds(); }
  Result<controller::ReconcileResult> Reconcile(const store::ObjectKey& key) override {
    RETURN_IF_ERROR(collector_->Collect(key));
    return trials_->Reconcile(key);
  }

 private:
  MetricsCollector* collector_;
  std::unique_ptr<controller::TrialReconciler> trials_;
};

// A job's own metrics are read while it runs (its main replica's output,
// or files in its output folder: MetricsCollector::CollectJob): before
// each reconcile, and at least every second until it ends.
class CollectingJobReconciler final : public controller::Reconciler {
 public:
  CollectingJobReconciler(std::function<Result<bool>(const store::ObjectKey&)> collect,
                          std::unique_ptr<controller::Reconciler> jobs, Logger* log)
      : collect_(std::move(collect)), jobs_(std::move(jobs)), log_(log) {}
  std::vector<std::string> Kinds() const override { return jobs_->Kinds(); }
  Result<controller::ReconcileResult> Reconcile(const store::ObjectKey& key) override {
    // Metrics that cannot be read now do not hold the job back.
    Result<bool> more = collect_(key);
    if (!more.ok()) {
      log_->Warning("trainyard: {}: its metrics: {}", key.ToString(), more.status().message());
    }
    ASSIGN_OR_RETURN(controller::ReconcileResult result, jobs_->Reconcile(key));
    if (more.ok() && *more && (!result.requeue_after || *result.requeue_after > kMetricsPoll)) {
      result.requeue_after = kMetricsPoll;
    }
    return result;
  }

 private:
  static constexpr Duration kMetricsPoll = std::chrono::seconds(1);

  std::function<Result<bool>(const store::ObjectKey&)> collect_;
  std::unique_ptr<controller::Reconciler> jobs_;
  Logger* log_;
};

// The name pods are bound to: this machine's, as a kubelet's node name.
std::string NodeName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') return "localhost";
  return AsciiLower(name);
}

// The state directory's contents are the engine's alone (the database
// 0600, logs 0700), as etcd keeps its data directory: they hold every
// namespace's objects and the trials' push tokens. The directory itself is
// 0711: replicas that run as users of their own pass through it to the
// folders they are given (node/run_as.h), and can list nothing. What an
// earlier version made under a laxer umask is closed too.
void MakePrivate(const std::string& state_dir) {
  namespace fs = std::filesystem;
  std::error_code ignored;  // best effort: the files are ours
  fs::permissions(state_dir, fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec,
                  ignored);
  for (const char* db : {"/state.db", "/state.db-wal", "/state.db-shm"}) {
    if (fs::exists(state_dir + db, ignored)) {
      fs::permissions(state_dir + db, fs::perms::owner_read | fs::perms::owner_write, ignored);
    }
  }
  if (fs::exists(state_dir + "/logs", ignored)) {
    fs::permissions(state_dir + "/logs", fs::perms::owner_all, ignored);
  }
}

// How long the loop waits at most before it tries again after its work
// could not be stored (a full disk): soon enough to notice that there is
// room again, seldom enough to cost nothing meanwhile.
constexpr Duration kMaxFailedStepBackoff = std::chrono::seconds(5);

}  // namespace

Result<std::unique_ptr<Engine>> Engine::Create(EngineOptions options) {
  std::unique_ptr<Engine> engine(new Engine(std::move(options)));
  RETURN_IF_ERROR(engine->Init());
  return engine;
}

Status Engine::Init() {
  RETURN_IF_ERROR(OpenStore());
  if (options_.api_only) {
    options_.machine = runtime::MachineFacts{};
    node_name_ = NodeName();
    return OkStatus();
  }
  ScopeCgroups();
  std::unique_ptr<controller::TrialReconciler> trials = AddReconcilers();
  StartNode();
  reconcilers_.push_back(
      std::make_unique<CollectingTrialReconciler>(metrics_collector_.get(), std::move(trials)));
  for (const auto& reconciler : reconcilers_) queue_.Register(reconciler.get());
  Result<store::WatchId> watch =
      store_->Watch(0, [this](const store::WatchEvent& e) { OnEvent(e); });
  RETURN_IF_ERROR(watch.status());
  // Folders of jobs deleted just before a crash.
  artifact_dirs_.Sweep(*store_);
  return QueueEveryJob();
}

Status Engine::OpenStore() {
  std::error_code ec;
  std::filesystem::create_directories(options_.state_dir, ec);
  if (ec) {
    return UnavailableError(fmt::format("cannot create {}: {}", options_.state_dir, ec.message()));
  }
  if (options_.open_store) {
    ASSIGN_OR_RETURN(store_, options_.open_store(options_.state_dir));
  } else {
    ASSIGN_OR_RETURN(store_, store::SqliteStore::Open({.path = options_.state_dir + "/state.db",
                                                       .clock = options_.clock,
                                                       .on_create = api::SetDefaultsOnCreate,
                                                       .vfs = options_.store_vfs}));
  }
  MakePrivate(options_.state_dir);
  if (pipe2(wake_pipe_, O_CLOEXEC | O_NONBLOCK) != 0) return UnavailableError("pipe failed");
  return OkStatus();
}

// This engine's groups apart from any other's on the machine, under a
// name its state folder keeps across restarts.
void Engine::ScopeCgroups() {
  std::error_code ec;
  std::filesystem::path state = std::filesystem::weakly_canonical(options_.state_dir, ec);
  cgroups_ = cgroups_.Scoped(node::ScopeOf(ec ? options_.state_dir : state.string()));
}

// The reconcilers of claims, jobs and experiments; the trial reconciler,
// which collects metrics once the node agent is there, is returned.
std::unique_ptr<controller::TrialReconciler> Engine::AddReconcilers() {
  controller::ReplicaOptions replicas{.ports = &ports_};
  std::string trainyard_program;
  if (!options_.exec_program.empty()) {
    // Absolute: the agent runs in a replica's working directory, not ours.
    std::error_code ec;
    std::filesystem::path state = std::filesystem::weakly_canonical(options_.state_dir, ec);
    if (ec) state = std::filesystem::absolute(options_.state_dir);
    replicas.exec_command = fmt::format("{} exec --state {}", ShellQuote(options_.exec_program),
                                        ShellQuote(state.string()));
    trainyard_program = options_.exec_program;
  }
  if (options_.claims_dir.empty()) options_.claims_dir = options_.state_dir + "/claims";
  reconcilers_.push_back(std::make_unique<ClaimReconciler>(ClaimReconcilerOptions{
      .store = store_.get(), .clock = options_.clock, .claims_dir = options_.claims_dir}));
  auto collect = [this](const store::ObjectKey& key) {
    return metrics_collector_->CollectJob(key);
  };
  auto collecting = [&](std::unique_ptr<controller::Reconciler> jobs) {
    reconcilers_.push_back(
        std::make_unique<CollectingJobReconciler>(collect, std::move(jobs), options_.log));
  };
  // A Deployment never finishes: it has no metrics or output of a job.
  reconcilers_.push_back(std::make_unique<controller::DeploymentReconciler>(
      controller::DeploymentReconcilerOptions{.store = store_.get(), .clock = options_.clock}));
  collecting(std::make_unique<controller::BatchJobReconciler>(
      controller::BatchJobReconcilerOptions{.store = store_.get(), .clock = options_.clock}));
  collecting(std::make_unique<controller::JobSetReconciler>(
      controller::JobSetReconcilerOptions{.store = store_.get(), .clock = options_.clock}));
  collecting(std::make_unique<controller::TrainJobReconciler>(
      controller::TrainJobReconcilerOptions{.store = store_.get(),
                                            .clock = options_.clock,
                                            .replicas = replicas,
                                            .trainyard_program = trainyard_program}));
  collecting(std::make_unique<controller::JobReconciler>(controller::JobReconcilerOptions{
      .store = store_.get(), .clock = options_.clock, .replicas = std::move(replicas)}));
  std::string metrics_dir = options_.state_dir + "/metrics";
  std::string trial_dirs = options_.state_dir + "/trials";
  reconcilers_.push_back(std::make_unique<controller::ExperimentReconciler>(
      controller::ExperimentReconcilerOptions{.store = store_.get(),
                                              .observations = store_.get(),
                                              .clock = options_.clock,
                                              .trial_dirs = trial_dirs}));
  reconcilers_.push_back(std::make_unique<controller::OptimizationJobReconciler>(
      controller::OptimizationJobReconcilerOptions{
          .store = store_.get(), .observations = store_.get(), .clock = options_.clock}));
  auto trial_reconciler = std::make_unique<controller::TrialReconciler>(
      controller::TrialReconcilerOptions{.store = store_.get(),
                                         .observations = store_.get(),
                                         .clock = options_.clock,
                                         .metrics_dir = metrics_dir,
                                         .trial_dirs = trial_dirs});
  trial_reconciler_ = trial_reconciler.get();
  return trial_reconciler;
}

// The machine, the scheduler placing pods on it (or on the inventory
// given), the node agent running them and the metrics collector reading
// their output.
void Engine::StartNode() {
  std::string metrics_dir = options_.state_dir + "/metrics";
  std::string trial_dirs = options_.state_dir + "/trials";
  if (!options_.machine) {
    std::string path;
    for (const auto& [name, value] : options_.base_env) {
      if (name == "PATH") path = value;
    }
    options_.machine = runtime::DiscoverMachine(path);
  }
  node_name_ = NodeName();
  // A declared inventory stands for a cluster whose pods all run here.
  bool simulated = !options_.nodes.empty();
  if (!simulated) options_.nodes = {MachineNode(node_name_, *options_.machine)};
  scheduler_ = std::make_unique<SchedulerStep>(SchedulerStepOptions{.store = store_.get(),
                                                                    .clock = options_.clock,
                                                                    .nodes = options_.nodes,
                                                                    .policy = options_.policy});
  // Sandboxes need a shim (runtime::ProcessSpec::sandbox); without one
  // (tests, or a missing shim, said when found missing) there are none.
  if (!options_.shim.empty()) {
    sandboxes_ = std::make_unique<node::Sandboxes>(options_.bwrap, options_.no_sandbox);
  }
  if (!options_.images_dir.empty()) {
    images_ = std::make_unique<image::ImageStore>(
        options_.images_dir, image::UnpackOptions{.privileged = geteuid() == 0});
    image_puller_ = std::make_unique<node::ImagePuller>(
        *images_,
        node::ImagePuller::Collection{
            .policy = options_.image_gc,
            // What the API serves, safe off the loop's thread: a pod the
            // loop has not committed yet is one the minimum age covers.
            .in_use = [committed = &store_->committed()] { return node::ImagesInUse(*committed); },
            .report = [log = options_.log](
                          const std::string& what) { log->Info("trainyard: {}", what); }});
  }
  node_ = std::make_unique<node::NodeAgent>(node::NodeAgentOptions{
      .store = store_.get(),
      .clock = options_.clock,
      .log = options_.log,
      .facts = {.cpus = options_.machine->cpus, .memory_bytes = options_.machine->memory_bytes},
      .node_name = node_name_,
      .any_node = simulated,
      // A declared inventory shows each replica the GPU ids it was given.
      .pin_gpus = simulated || !options_.machine->gpus.empty(),
      .logs_dir = options_.state_dir + "/logs",
      .pods_dir = options_.state_dir + "/pods",
      .claims_dir = options_.claims_dir,
      .artifacts_dir = artifact_dirs_.root(),
      .default_working_dir = options_.working_dir,
      .base_env = options_.base_env,
      .shim = options_.shim,
      .detach = options_.detach_replicas,
      .keep_logs = options_.keep_logs,
      .wait_for_config = options_.wait_for_config,
      .run_as = options_.run_as,
      .host_access = {.baseline_namespaces = options_.baseline_namespaces,
                      .own_dirs = {metrics_dir, trial_dirs}},
      .cgroups = &cgroups_,
      .pod_max_pids = options_.pod_max_pids,
      .sandboxes = sandboxes_.get(),
      .images = images_.get(),
      .host_root_allowed = options_.host_root_allowed,
      .cdi_spec_dirs = options_.cdi_spec_dirs,
      .machine_gpus = !simulated && !options_.machine->gpus.empty(),
      .image_puller = image_puller_.get(),
      .api_access = options_.api_access});
  metrics_collector_ = std::make_unique<MetricsCollector>(MetricsCollectorOptions{
      .store = store_.get(),
      .log_path = [node = node_.get()](
                      const std::string& ns, const std::string& pod,
                      const std::string& container) { return node->LogPath(ns, pod, container); },
      .clock = options_.clock,
      .metrics_dir = options_.state_dir + "/metrics",
      .artifacts_dir = artifact_dirs_.root()});
}

Status Engine::QueueEveryJob() {
  // Owners deleted before their dependents were (a crash in between, or a
  // failed step): their dependents are collected now.
  ASSIGN_OR_RETURN(std::set<std::string> missing, controller::MissingOwners(*store_));
  collect_.insert(collect_.end(), missing.begin(), missing.end());
  for (const std::string& kind : queue_.Kinds()) {
    RETURN_IF_ERROR(store_->Scan(kind, "", [&](const api::Json& job) {
      OnEvent({store::EventType::kModified, 0, job});
    }));
  }
  return OkStatus();
}

Engine::~Engine() {
  CloseInbox(UnavailableError("the engine is gone"));
  (void)CommitOpenGroup();
  node_.reset();           // kills what still runs
  cgroups_.RemoveScope();  // what is still in use stays (a server's adopted replicas)
  for (int fd : wake_pipe_) {
    if (fd >= 0) close(fd);
  }
}

void Engine::OnEvent(const store::WatchEvent& event) {
  queue_.OnChange(event.object);
  // What a deleted object owned goes with it (Kubernetes' garbage
  // collector, by uid).
  if (event.type == store::EventType::kDeleted) {
    std::string uid = api::StringAt(event.object, {"metadata", "uid"});
    if (!uid.empty()) collect_.push_back(std::move(uid));
    artifact_dirs_.OnDeleted(event.object);
  }
}

Result<store::ObjectKey> Engine::Submit(const api::Object& object) {
  api::Json doc = api::EncodeObject(object);
  if (api::IsNamespacedKind(api::KindName(object)) &&
      api::StringAt(doc, {"metadata", "namespace"}).empty()) {
    doc["metadata"]["namespace"] = "default";
  }
  RETURN_IF_ERROR(OpenGroup());
  ASSIGN_OR_RETURN(api::Json created, store_->Create(doc));
  // Durable before the caller hears: a commit that fails (a full disk)
  // takes the object back, and the caller must know.
  RETURN_IF_ERROR(CommitOpenGroup());
  return store::KeyOf(created);
}

Status Engine::OpenGroup() {
  if (group_open_) return OkStatus();
  RETURN_IF_ERROR(store_->BeginGroup());
  group_open_ = true;
  return OkStatus();
}

Status Engine::CommitOpenGroup() {
  if (!group_open_) return OkStatus();
  group_open_ = false;
  Status committed = store_->CommitGroup();
  if (committed.ok()) {
    artifact_dirs_.Committed();
  } else {
    artifact_dirs_.Abandon();
  }
  return committed;
}

void Engine::SetApi(std::string url, std::string ca_file) {
  if (node_ != nullptr) node_->SetTrackingApi(url, ca_file);
  if (trial_reconciler_ == nullptr) return;  // API-only: no trials run here
  trial_reconciler_->SetApi(std::move(url), std::move(ca_file));
}

Result<api::Json> Engine::Execute(Write write) {
  std::future<Result<api::Json>> answer;
  {
    MutexLock lock(inbox_mu_);
    if (!accepting_) return UnavailableError("the control loop is not running");
    inbox_.push_back({std::move(write), {}});
    answer = inbox_.back().done.get_future();
  }
  char c = 1;
  [[maybe_unused]] ssize_t n = ::write(wake_pipe_[1], &c, 1);
  return answer.get();
}

Status Engine::RunCalls() {
  std::vector<Call> calls;
  {
    MutexLock lock(inbox_mu_);
    calls.swap(inbox_);
  }
  if (calls.empty()) return OkStatus();
  if (Status opened = OpenGroup(); !opened.ok()) {
    for (Call& call : calls) call.done.set_value(opened);  // every caller hears
    return opened;
  }
  std::vector<Result<api::Json>> results;
  results.reserve(calls.size());
  for (Call& call : calls) {
    // A client's object can surprise a JSON accessor: that is its
    // request's error, never the control loop's end.
    try {
      results.push_back(call.write(*store_));
    } catch (const std::exception& e) {
      results.push_back(InvalidArgumentError(fmt::format("cannot apply the write: {}", e.what())));
    }
  }
  // Nobody hears of a write before it is on disk.
  Status committed = CommitOpenGroup();
  for (size_t i = 0; i < calls.size(); ++i) {
    calls[i].done.set_value(committed.ok() ? std::move(results[i]) : Result<api::Json>(committed));
  }
  return committed;
}

void Engine::CloseInbox(const Status& why) {
  MutexLock lock(inbox_mu_);
  accepting_ = false;
  for (Call& call : inbox_) call.done.set_value(why);
  inbox_.clear();
}

Status Engine::ProcessQueue() {
  queue_.TakeDueTimers();
  // Reconciling writes to the store, which can queue more work: drain it,
  // unless asked to stop (a long queue must not hold a SIGTERM up).
  while ((!queue_.empty() || !collect_.empty()) && !stop_requested_) {
    if (!collect_.empty()) {
      // Deleting dependents may delete more owners: collect_ grows as it goes.
      std::string uid = std::move(collect_.back());
      collect_.pop_back();
      RETURN_IF_ERROR(controller::DeleteDependents(*store_, uid));
      continue;
    }
    queue_.ReconcileNext();
  }
  return OkStatus();
}

Duration Engine::NextWake(std::optional<Duration> node_wake) const {
  Duration wake = std::chrono::milliseconds(100);  // log tailing and status lines
  if (node_wake) wake = std::min(wake, *node_wake);
  if (std::optional<TimePoint> timer = queue_.NextTimer()) {
    wake = std::min(wake, std::max(Duration::zero(), *timer - options_.clock->Now()));
  }
  return wake;
}

Result<std::optional<Duration>> Engine::Step() {
  Result<std::optional<Duration>> wake = [&]() -> Result<std::optional<Duration>> {
    // The scheduler and the node agent meet every object too: what throws
    // there fails the step, which is retried as a failed commit is.
    try {
      RETURN_IF_ERROR(RunCalls());
      if (options_.api_only) return std::optional<Duration>();
      RETURN_IF_ERROR(OpenGroup());
      RETURN_IF_ERROR(ProcessQueue());
      RETURN_IF_ERROR(scheduler_->Sync());
      // As a kubelet runs only what the API server has stored, no process
      // starts for a pod whose creation or binding a crash could take back:
      // it would run on unrecorded, and its job again. So the group is
      // committed first. (It also holds an earlier step's node writes, pods
      // Running and their pids, which a process started now may read from
      // another process, as an MPI launcher's `trainyard exec` does.)
      RETURN_IF_ERROR(CommitOpenGroup());
      RETURN_IF_ERROR(OpenGroup());
      return node_->Sync();
    } catch (const std::exception& e) {
      return InternalError(fmt::format("an unexpected object: {}", e.what()));
    }
  }();
  if (!wake.ok()) {
    (void)CommitOpenGroup();  // what was done stays done
    return wake.status();
  }
  return wake;
}

Status Engine::Run(const std::function<bool()>& done, const std::function<void()>& on_step) {
  {
    MutexLock lock(inbox_mu_);
    accepting_ = true;
  }
  Status status = Loop(done, on_step);
  CloseInbox(UnavailableError("the server is stopping"));
  return status;
}

Status Engine::Loop(const std::function<bool()>& done, const std::function<void()>& on_step) {
  while (true) {
    Result<std::optional<Duration>> stepped = Step();
    // A stop is taken between steps too, not only when idle: a busy loop
    // may not idle for a long while.
    if (stop_requested_.exchange(false)) {
      (void)CommitOpenGroup();  // what was done stays done
      return Status(StatusCode::kAborted, "stopped");
    }
    // The node agent's writes (pod status) may have queued reconciles: the
    // next step runs at once, in the same write group.
    if (stepped.ok() && !queue_.empty()) continue;
    // Before anything is shown or waited for, what was done is durable.
    Status committed = stepped.ok() ? CommitOpenGroup() : stepped.status();
    Duration wake = committed.ok() ? NextWake(*stepped) : AfterFailedStep(committed);
    if (committed.ok()) failed_steps_ = 0;
    on_step();
    if (done()) return OkStatus();
    std::vector<pollfd> fds = {{wake_pipe_[0], POLLIN, 0}};
    if (node_ != nullptr) {
      for (int fd : node_->PollFds()) fds.push_back({fd, POLLIN, 0});
    }
    auto timeout = std::chrono::ceil<std::chrono::milliseconds>(wake);
    poll(fds.data(), fds.size(), static_cast<int>(timeout.count()));
    if (fds[0].revents & POLLIN) {
      char buf[64];
      while (read(wake_pipe_[0], buf, sizeof(buf)) > 0) {
      }
    }
    if (stop_requested_.exchange(false)) return Status(StatusCode::kAborted, "stopped");
  }
}

Duration Engine::AfterFailedStep(const Status& why) {
  // Said once per kind of failure, not at every retry.
  if (failed_steps_++ == 0 || why.message() != last_failure_) {
    options_.log->Warning("trainyard: the control loop could not store its work, retrying: {}",
                          why.message());
  }
  last_failure_ = why.message();
  // The store took back what it could not write, so whatever a reconcile
  // did since the last commit must be done again, from what is on disk.
  if (!options_.api_only) {
    (void)QueueEveryJob();
    node_->Resync();
  }
  Duration backoff = RetryDelay(failed_steps_);
  return std::min<Duration>(backoff, kMaxFailedStepBackoff);
}

void Engine::RequestStop() {
  stop_requested_ = true;
  char c = 1;
  [[maybe_unused]] ssize_t n = write(wake_pipe_[1], &c, 1);
}

void Engine::StopAll() {
  if (node_ != nullptr) node_->StopAll();
}

}  // namespace trainyard::engine
