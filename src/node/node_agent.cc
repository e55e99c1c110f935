#include "node/node_agent.h"

#include <fmt/format.h>
#include <limits.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <utility>

#include "api/json.h"
#include "api/reflect.h"
#include "node/container_env.h"
#include "node/host_torchrun.h"
#include "node/output_dir.h"
#include "node/tracking_env.h"
#include "runtime/local/expand.h"
#include "runtime/local/log_file.h"

namespace trainyard::node {
namespace {

namespace fs = std::filesystem;

std::string KeyOf(const api::Pod& pod) { return pod.metadata.namespace_ + "/" + pod.metadata.name; }

Duration Backoff(const NodeAgentOptions& options, int32_t restarts) {
  Duration d = options.restart_backoff;
  for (int32_t i = 0; i < restarts && d < options.max_restart_backoff; ++i) d *= 2;
  return std::min(d, options.max_restart_backoff);
}

// CUDA_VISIBLE_DEVICES as the scheduler gave the pod its GPUs, replacing
// any the pod set itself: the device plugin's word is final on Kubernetes.
void PinGpus(const api::Pod& pod, EnvList& env) {
  auto given = pod.metadata.annotations.find(std::string(api::kGpusAnnotation));
  std::string ids = given == pod.metadata.annotations.end() ? "" : given->second;
  std::erase_if(env, [](const auto& entry) { return entry.first == "CUDA_VISIBLE_DEVICES"; });
  env.emplace_back("CUDA_VISIBLE_DEVICES", ids);
}

// A pod that starts has been scheduled: PodScheduled True replaces any
// Unschedulable the scheduler wrote while it waited.
void MarkScheduled(api::Pod& pod, const std::string& now) {
  auto& conditions = pod.status.conditions;
  auto scheduled = [](const api::PodCondition& c) { return c.type == "PodScheduled"; };
  auto it = std::find_if(conditions.begin(), conditions.end(), scheduled);
  if (it != conditions.end() && it->status == "True") return;  // a restart: no transition
  std::erase_if(conditions, scheduled);
  conditions.push_back({.type = "PodScheduled", .status = "True", .last_transition_time = now});
}

constexpr std::string_view kExitSuffix = ".exit";

// "<exits>/<namespace>/<pod>_<container>.<uid>.": what every exit path of
// a container's runs starts with.
std::string ExitPrefix(const std::string& exits_dir, const api::Pod& pod,
                       const std::string& container) {
  return (fs::path(exits_dir) / pod.metadata.namespace_ /
          fmt::format("{}_{}.{}.", pod.metadata.name, container, pod.metadata.uid))
      .string();
}

}  // namespace

// Init containers, in order, then the containers.
std::vector<NodeAgent::Slot> NodeAgent::SlotsOf(const api::Pod& pod) {
  std::vector<Slot> slots;
  for (const api::Container& c : pod.spec.init_containers) {
    slots.push_back({.spec = &c, .init = true, .sidecar = c.restart_policy == "Always"});
  }
  for (const api::Container& c : pod.spec.containers) slots.push_back({.spec = &c});
  return slots;
}

api::ContainerStatus& NodeAgent::StatusOf(api::Pod& pod, const Slot& slot) {
  auto& list = slot.init ? pod.status.init_container_statuses : pod.status.container_statuses;
  for (api::ContainerStatus& status : list) {
    if (status.name == slot.spec->name) return status;
  }
  api::ContainerStatus status;
  status.name = slot.spec->name;
  status.image = slot.spec->image;
  list.push_back(std::move(status));
  return list.back();
}

// Every container has a status, in the pod's order, as the kubelet reports
// them: one not started yet waits (PodInitializing while init containers
// run, ContainerCreating otherwise).
void NodeAgent::EnsureStatuses(api::Pod& pod) {
  auto ensure = [&](const std::vector<api::Container>& specs,
                    std::vector<api::ContainerStatus>& list, const char* waiting) {
    std::vector<api::ContainerStatus> ordered;
    for (const api::Container& c : specs) {
      auto it = std::find_if(list.begin(), list.end(),
                             [&](const api::ContainerStatus& s) { return s.name == c.name; });
      if (it != list.end()) {
        ordered.push_back(std::move(*it));
        continue;
      }
      api::ContainerStatus status;
      status.name = c.name;
      status.image = c.image;
      status.ready = false;
      status.state.waiting = api::ContainerStateWaiting{.reason = waiting};
      ordered.push_back(std::move(status));
    }
    list = std::move(ordered);
  };
  ensure(pod.spec.init_containers, pod.status.init_container_statuses, "PodInitializing");
  ensure(pod.spec.containers, pod.status.container_statuses,
         pod.spec.init_containers.empty() ? "ContainerCreating" : "PodInitializing");
}

// Whether a container has run (or is about to run again) at all.
bool NodeAgent::Started(const api::ContainerStatus& status, const ContainerRun& run) {
  return run.process || run.restart_at || run.exit || status.state.running ||
         status.state.terminated || status.last_state.terminated || status.restart_count > 0;
}

bool NodeAgent::WaitingForConfig(const api::ContainerStatus& status) {
  return status.state.waiting && status.state.waiting->reason == api::kConfigWaitReason;
}

namespace {

// The control group of a container's run, in its pod's: named by the
// pod's uid, so that a later node agent finds it.
std::string GroupName(const std::string& pod_uid, const std::string& container, int32_t run) {
  return fmt::format("{}/{}_{}", pod_uid, container, run);
}

// A container's limits as the kubelet sets them (a CPU request defaults to
// its limit, as Kubernetes defaults it).
CgroupLimits LimitsOf(const api::Container& c) {
  CgroupLimits limits;
  const auto& l = c.resources.limits;
  const auto& r = c.resources.requests;
  if (auto it = l.find("memory"); it != l.end()) limits.memory_bytes = it->second.milli() / 1000;
  if (auto it = l.find("cpu"); it != l.end()) limits.cpu_limit_milli = it->second.milli();
  if (auto it = r.find("cpu"); it != r.end()) {
    limits.cpu_request_milli = it->second.milli();
  } else {
    limits.cpu_request_milli = limits.cpu_limit_milli;
  }
  return limits;
}

// The ExitPrefix of an exit path ("<prefix><run>.exit"), or "".
std::string ExitPrefixOf(const std::string& exit_path) {
  if (!exit_path.ends_with(kExitSuffix)) return "";
  size_t dot = exit_path.rfind('.', exit_path.size() - kExitSuffix.size() - 1);
  return dot == std::string::npos ? "" : exit_path.substr(0, dot + 1);
}

// Translates `text` within `budget` more bytes than it has (and the bound
// on any one string), taking what it grows by from the budget.
Status TranslateWithin(std::string& text, const Mounts& mounts, size_t& budget,
                       const std::string& what) {
  size_t bound = std::min(runtime::kMaxExpandedBytes, text.size() + budget);
  std::optional<std::string> out = TranslatePaths(text, mounts, bound);
  if (!out) {
    return InvalidArgumentError(fmt::format(
        "{}: with its mount paths translated to host paths it would pass {} KiB, or the "
        "environment and arguments {} MiB; mount the volumes at fewer places in it, or use "
        "shorter host paths",
        what, runtime::kMaxExpandedBytes / 1024, runtime::kMaxEnvAndArgvBytes / (1024 * 1024)));
  }
  budget = budget + text.size() - out->size();  // out is at most text + budget long
  text = std::move(*out);
  return OkStatus();
}

// What execve's strings of `env` and `argv` may still grow by.
size_t Room(const EnvList& env, const std::vector<std::string>& argv) {
  size_t used = 0;
  for (const auto& [name, value] : env) used += name.size() + value.size() + 2;
  for (const std::string& arg : argv) used += arg.size() + 1;
  return used >= runtime::kMaxEnvAndArgvBytes ? 0 : runtime::kMaxEnvAndArgvBytes - used;
}

// Mount paths translated in the env values the pod itself set, within the
// bounds expansion keeps.
Status TranslateEnv(const api::Container& container, const Mounts& mounts, EnvList& env) {
  size_t budget = Room(env, {});
  for (auto& [name, value] : env) {
    // Captured by name: clang 14 cannot capture a structured binding.
    bool from_pod = std::any_of(container.env.begin(), container.env.end(),
                                [&name = name](const api::EnvVar& v) { return v.name == name; });
    if (from_pod) RETURN_IF_ERROR(TranslateWithin(value, mounts, budget, "env " + name));
  }
  return OkStatus();
}

Status TranslateArgv(const Mounts& mounts, const EnvList& env, std::vector<std::string>& argv) {
  size_t budget = Room(env, argv);
  for (size_t i = 0; i < argv.size(); ++i) {
    RETURN_IF_ERROR(TranslateWithin(argv[i], mounts, budget, fmt::format("argv[{}]", i)));
  }
  return OkStatus();
}

}  // namespace

NodeAgent::NodeAgent(NodeAgentOptions options) : options_(std::move(options)) {
  std::error_code ec;
  exits_dir_ = fs::absolute(options_.logs_dir, ec).string();
  // Called in the writing thread, under the store's lock: it only notes.
  Result<store::WatchId> watch = options_.store->Watch(0, [this](const store::WatchEvent& e) {
    if (e.object.value("kind", "") != "Pod") return;
    const api::Json& meta = e.object["metadata"];
    std::string key = api::StringAt(meta, "namespace") + "/" + api::StringAt(meta, "name");
    std::lock_guard lock(changed_mu_);
    if (auto grace = meta.find("deletionGracePeriodSeconds");
        grace != meta.end() && grace->is_number_integer()) {
      deletion_grace_[key] = {api::StringAt(meta, "uid"),
                              std::chrono::seconds(std::max<int64_t>(0, grace->get<int64_t>()))};
    }
    changed_.insert(std::move(key));
  });
  if (watch.ok()) watch_ = *watch;
}

NodeAgent::~NodeAgent() {
  if (watch_ != 0) options_.store->StopWatch(watch_);
  for (auto& [key, replica] : replicas_) {
    for (auto& [name, run] : replica.runs) run.process.reset();  // kills and reaps
  }
  RemoveMemoryVolumes();
}

bool NodeAgent::Replica::Running() const {
  return std::any_of(runs.begin(), runs.end(), [](const auto& entry) {
    return entry.second.process && entry.second.process->running();
  });
}

bool NodeAgent::Replica::Active() const {
  return std::any_of(runs.begin(), runs.end(), [](const auto& entry) {
    return entry.second.process || entry.second.restart_at;
  });
}

PodVolumeDirs NodeAgent::VolumeDirsOf(const api::Pod& pod) const {
  fs::path pod_dir = fs::path(options_.pods_dir) / pod.metadata.namespace_ / pod.metadata.name;
  // Memory volumes count against RAM: never left behind (see StopAll).
  fs::path shm = fs::is_directory("/dev/shm") ? fs::path("/dev/shm") : pod_dir;
  return {.disk = (pod_dir / "volumes").string(),
          .memory = (shm / ("trainyard-" + pod.metadata.uid)).string(),
          .claims = options_.claims_dir,
          .hosts_file = (pod_dir / "etc-hosts").string()};
}

void NodeAgent::RemovePodFiles(const Replica& replica) {
  if (options_.cgroups != nullptr && !replica.uid.empty()) {
    for (const auto& [name, run] : replica.runs) {
      std::string group = GroupName(replica.uid, name, run.run);
      options_.cgroups->Kill(group);
      options_.cgroups->Remove(group);
    }
  }
  RemoveVolumes(replica.volumes);
  std::error_code ec;
  if (!replica.namespace_.empty()) {
    std::vector<std::string> containers;
    for (const auto& [name, log] : replica.log_paths) containers.push_back(name);
    Status deleted = DeletePodEvents(*options_.store, replica.namespace_, replica.uid, containers);
    if (!deleted.ok()) {
      fmt::print(stderr, "trainyard: the events of pod {}/{} stay: {}\n", replica.namespace_,
                 replica.name, deleted.message());
    }
  }
  if (!options_.keep_logs) {
    for (const auto& [name, log] : replica.log_paths) {
      fs::remove(log, ec);
      fs::remove(log + ".runs", ec);
    }
  }
  // Most runs had theirs removed as they went; not one that failed to
  // start, nor the last.
  for (const auto& [name, prefix] : replica.exit_prefixes) {
    auto run = replica.runs.find(name);
    int32_t last = run == replica.runs.end() ? 0 : run->second.run;
    for (int32_t n = 0; n <= last + 1; ++n) {
      fs::remove(prefix + std::to_string(n) + std::string(kExitSuffix), ec);
    }
  }
}

void NodeAgent::RemoveMemoryVolumes() {
  std::error_code ec;
  for (auto& [key, replica] : replicas_) {
    if (!replica.volumes.memory.empty()) (void)RemoveTree(replica.volumes.memory);
  }
}

void NodeAgent::Event(const Replica& replica, const std::string& container, const std::string& type,
                      const std::string& reason, const std::string& message) {
  if (replica.namespace_.empty()) return;  // a stray's: no pod to tell of
  auto run = replica.runs.find(container);
  std::string node = options_.node_name.empty() ? "trainyard" : options_.node_name;
  Status recorded = RecordContainerEvent(*options_.store, *options_.clock, node,
                                         {.namespace_ = replica.namespace_,
                                          .pod = replica.name,
                                          .uid = replica.uid,
                                          .container = container,
                                          .init = run != replica.runs.end() && run->second.init,
                                          .type = type,
                                          .reason = reason,
                                          .message = message});
  // An event is told, not kept: one that cannot be written is said, and
  // the pod goes on.
  if (!recorded.ok()) {
    fmt::print(stderr, "trainyard: event {} of pod {}/{}: {}\n", reason, replica.namespace_,
               replica.name, recorded.message());
  }
}

std::string NodeAgent::LogPath(const std::string& namespace_, const std::string& pod,
                               const std::string& container) const {
  // Flat, as the kubelet's /var/log/containers: one file and no folder per
  // container. Creating a file on ext4 costs an inode allocation, which
  // scans past every inode deleted in the last minutes; a folder per pod
  // doubled that on every launch. Names cannot collide: pod and container
  // names never hold '_'.
  return (fs::path(options_.logs_dir) / namespace_ / (pod + "_" + container + ".log")).string();
}

std::string NodeAgent::ExitPath(const api::Pod& pod, const std::string& container,
                                int32_t run) const {
  return ExitPrefix(exits_dir_, pod, container) + std::to_string(run) + std::string(kExitSuffix);
}

size_t NodeAgent::running() const {
  size_t n = 0;
  for (const auto& [key, replica] : replicas_) {
    for (const auto& [name, run] : replica.runs) n += run.process && run.process->running();
  }
  return n;
}

std::vector<int> NodeAgent::PollFds() const {
  std::vector<int> fds;
  for (const std::set<std::string>* keys : {&active_, &gone_}) {
    for (const std::string& key : *keys) {
      auto it = replicas_.find(key);
      if (it == replicas_.end()) continue;
      for (const auto& [name, run] : it->second.runs) {
        if (run.process && run.process->running()) fds.push_back(run.process->pidfd());
      }
    }
  }
  return fds;
}

Status NodeAgent::WriteStatus(const api::Pod& pod) {
  // Only the status: the store takes nothing else from a status update.
  // No resourceVersion: the agent owns pod status, and writes it as it is.
  api::Json doc = {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", {{"name", pod.metadata.name}, {"namespace", pod.metadata.namespace_}}}};
  api::Json status = api::EncodePodStatus(pod.status);
  if (!status.empty()) doc["status"] = std::move(status);
  Result<api::Json> written = options_.store->UpdateStatus(doc);
  if (!written.ok() && written.status().code() != StatusCode::kNotFound) return written.status();
  return OkStatus();
}

Result<runtime::ProcessSpec> NodeAgent::SpecOf(const api::Pod& pod, Replica& replica,
                                               const api::Container& container, int32_t run) {
  std::vector<std::string> skipped;
  ASSIGN_OR_RETURN(EnvList env, ContainerEnv(pod, container, options_.base_env, options_.facts,
                                             *options_.store, &skipped));
  for (const std::string& keys : skipped) {
    Event(replica, container.name, "Warning", "InvalidEnvironmentVariableNames",
          fmt::format("{} were skipped: they are not valid environment variable names", keys));
  }
  if (options_.pin_gpus) PinGpus(pod, env);
  std::optional<TrackedOwner> owner = TrackedOwnerOf(pod, *options_.store);
  if (owner && !tracking_url_.empty()) {
    AddTrackingEnv(pod, *owner, tracking_url_, tracking_ca_, env);
  }
  RETURN_IF_ERROR(CheckHostPaths(pod, options_.host_access, *options_.store));
  replica.volumes = VolumeDirsOf(pod);
  ASSIGN_OR_RETURN(std::optional<runtime::Credentials> user,
                   options_.run_as.For(pod.metadata.namespace_));
  ASSIGN_OR_RETURN(Mounts mounts, PrepareVolumes(pod, container, replica.volumes, FileOwnerOf(user),
                                                 *options_.store));
  if (owner && !options_.artifacts_dir.empty()) {
    ASSIGN_OR_RETURN(Mount output, PrepareOutputDir(options_.artifacts_dir, pod.metadata.namespace_,
                                                    *owner, user));
    AddOutputDirEnv(container, output.host_path, env);
    mounts.push_back(std::move(output));
  }
  std::string no_sandbox =
      options_.sandboxes == nullptr ? "no sandboxes are used here" : options_.sandboxes->Problem();
  std::vector<std::string> sandbox;
  if (no_sandbox.empty()) {
    ASSIGN_OR_RETURN(sandbox, SandboxFor(pod, replica, mounts));
  }
  if (user) {
    RETURN_IF_ERROR(
        GivePodFiles(pod, replica.volumes, options_.pods_dir, options_.host_access, *user));
    UseHomeOf(*user, container, env);
  }
  std::string working_dir = container.working_dir;
  if (!no_sandbox.empty()) {
    WarnPathRewriting(no_sandbox, pod, container, replica);
    RETURN_IF_ERROR(TranslateEnv(container, mounts, env));
  }
  ASSIGN_OR_RETURN(std::vector<std::string> argv, ContainerArgv(container, env));
  std::string adapted = AdaptTorchrunToHost(argv, env);
  if (!adapted.empty()) {
    Event(replica, container.name, "Normal", "TorchrunAdapted", adapted);
    if (!std::exchange(said_torchrun_adapted_, true))
      fmt::print(stderr, "trainyard: {}\n", adapted);
  }
  if (!no_sandbox.empty()) {
    RETURN_IF_ERROR(TranslateArgv(mounts, env, argv));
    size_t path_room = PATH_MAX;  // what chdir takes
    RETURN_IF_ERROR(TranslateWithin(working_dir, mounts, path_room, "workingDir"));
  }
  return runtime::ProcessSpec{
      .argv = std::move(argv),
      .env = std::move(env),
      .working_dir = working_dir.empty() ? options_.default_working_dir : std::move(working_dir),
      .log_path = replica.log_paths.at(container.name),
      .shim = options_.shim,
      .exit_path = ExitPath(pod, container.name, run),
      .detach = options_.detach,
      .user = user,
      .cgroups = CgroupsFor(pod, container, run),
      .sandbox = std::move(sandbox),
      .userns = no_sandbox.empty() ? options_.sandboxes->userns() : ""};
}

Result<std::vector<std::string>> NodeAgent::SandboxFor(const api::Pod& pod, const Replica& replica,
                                                       const Mounts& mounts) const {
  const std::string& hosts = replica.volumes.hosts_file;
  if (Status written = WriteHostsFile(replica.volumes, HostsFileOf(pod, options_.host));
      !written.ok()) {
    return UnavailableError(
        fmt::format("cannot write the pod's hosts file {}: {}", hosts, written.message()));
  }
  return SandboxArgs(options_.sandboxes->bwrap(),
                     {.hostname = PodHostname(pod), .mounts = mounts, .hosts_file = hosts});
}

void NodeAgent::WarnPathRewriting(const std::string& why, const api::Pod& pod,
                                  const api::Container& container, Replica& replica) {
  // Said where sandboxes were looked for: not by an agent given none.
  if (options_.sandboxes != nullptr && !std::exchange(said_path_rewriting_, true)) {
    fmt::print(stderr,
               "trainyard: warning: replicas run without mount namespaces ({}): they reach their "
               "volumes through path rewriting, not at their mountPath, see the machine's host "
               "name, and can write to readOnly mounts\n",
               why);
  }
  if (api::FindAt(pod.spec.extra, {"hostAliases"}) != nullptr) {
    Event(replica, container.name, "Warning", "HostAliasesNotApplied",
          fmt::format("hostAliases are written to /etc/hosts only in a sandbox ({})", why));
  }
  for (const api::VolumeMount& mount : container.volume_mounts) {
    auto volume = std::find_if(pod.spec.volumes.begin(), pod.spec.volumes.end(),
                               [&](const api::Volume& v) { return v.name == mount.name; });
    bool claim_read_only = volume != pod.spec.volumes.end() && volume->persistent_volume_claim &&
                           volume->persistent_volume_claim->read_only.value_or(false);
    if (!mount.read_only.value_or(false) && !claim_read_only) continue;
    Event(replica, container.name, "Warning", "ReadOnlyNotEnforced",
          fmt::format("volumeMount {} at {}: readOnly is not enforced without a mount namespace "
                      "({})",
                      mount.name, mount.mount_path, why));
  }
}

std::vector<std::string> NodeAgent::CgroupsFor(const api::Pod& pod, const api::Container& container,
                                               int32_t run) {
  CgroupLimits limits = LimitsOf(container);
  if (options_.pod_max_pids > 0) limits.pod_max_pids = options_.pod_max_pids;
  std::string problem =
      options_.cgroups == nullptr ? "no control groups are used here" : options_.cgroups->problem();
  // Every run has a group where groups can be made, limits or none: what
  // it leaves behind is ended with it, and its pod's tasks are bounded.
  Result<std::vector<std::string>> made = FailedPreconditionError(problem);
  if (problem.empty()) {
    made = options_.cgroups->Make(GroupName(pod.metadata.uid, container.name, run), limits);
  }
  if (made.ok()) return *made;
  if (!limits.any()) return {};
  if (!std::exchange(said_no_limits_, true)) {
    fmt::print(stderr,
               "trainyard: warning: containers' memory and CPU limits are not enforced on this "
               "machine ({}); their replicas run without them\n",
               made.status().message());
  }
  return {};
}

Status NodeAgent::Start(api::Pod& pod, Replica& replica, const Slot& slot) {
  ASSIGN_OR_RETURN(bool resumed, ResumeUnrecordedRun(pod, replica, slot));
  if (resumed) return OkStatus();
  const std::string& name = slot.spec->name;
  ContainerRun& run = replica.runs[name];
  run.run = StatusOf(pod, slot).restart_count;
  // As the kubelet reports a container that cannot start: exit code 128,
  // reason StartError; the restart policy applies as to any other exit.
  run.init = slot.init;
  auto fail_to_start = [&](const Status& why) {
    Event(replica, name, "Warning", "Failed", fmt::format("Error: {}", why.message()));
    OnExit(pod, replica, slot, runtime::ExitStatus{128, 0}, "StartError", why.message());
    return OkStatus();
  };
  Result<runtime::ProcessSpec> spec = SpecOf(pod, replica, *slot.spec, run.run);
  if (!spec.ok() && spec.status().code() == StatusCode::kNotFound && options_.wait_for_config) {
    WaitForConfig(pod, replica, slot, spec.status());
    return OkStatus();
  }
  if (!spec.ok()) return fail_to_start(spec.status());
  std::error_code ec;
  fs::create_directories(fs::path(spec->log_path).parent_path(), ec);
  if (run.run == 0) {
    // A new pod: what a pod of the same name left (deleted while no node
    // agent ran, so its files stayed) is not this one's log.
    fs::remove(spec->log_path, ec);
    fs::remove(spec->log_path + ".runs", ec);
  }
  // A restart appends to the same file.
  if (Status marked = runtime::MarkNewRun(spec->log_path); !marked.ok()) {
    return fail_to_start(marked);
  }
  Result<runtime::Process> process = runtime::Process::Start(*spec);
  if (!process.ok()) return fail_to_start(process.status());
  // The run before this one ended durably (the store's group is committed
  // before processes start): its exit file is read no more.
  if (run.run > 0) fs::remove(ExitPath(pod, name, run.run - 1), ec);
  run.process = std::move(*process);
  MarkRunning(pod, replica, slot);
  Event(replica, name, "Normal", "Started", fmt::format("Started container {}", name));
  return OkStatus();
}

void NodeAgent::WaitForConfig(api::Pod& pod, Replica& replica, const Slot& slot,
                              const Status& why) {
  ContainerRun& run = replica.runs[slot.spec->name];
  api::ContainerStatus& status = StatusOf(pod, slot);
  std::string message(why.message());
  // Said once for each thing it waits for, however often it is tried.
  bool new_reason = !WaitingForConfig(status) || status.state.waiting->message != message;
  status.state = api::ContainerState{};
  status.state.waiting =
      api::ContainerStateWaiting{.reason = std::string(api::kConfigWaitReason), .message = message};
  // Looked for again soon, and often (the back-off's first two steps):
  // nothing wakes the agent when the object is created, and a look costs
  // a few reads.
  run.restart_at = options_.clock->Now() + Backoff(options_, new_reason ? 0 : 1);
  if (new_reason) Event(replica, slot.spec->name, "Warning", "Failed", "Error: " + message);
}

Result<bool> NodeAgent::ResumeUnrecordedRun(api::Pod& pod, Replica& replica, const Slot& slot) {
  // Without a shim, replicas die with the node agent that started them.
  if (options_.shim.empty()) return false;
  ContainerRun& run = replica.runs[slot.spec->name];
  run.run = StatusOf(pod, slot).restart_count;
  std::string exit_path = ExitPath(pod, slot.spec->name, run.run);
  if (auto stray = strays_.extract(exit_path)) {
    const ShimProcess& shim = stray.mapped();
    Result<runtime::Process> adopted =
        runtime::Process::Adopt(shim.pid, shim.start_time, exit_path);
    if (adopted.ok()) {
      replica.volumes = VolumeDirsOf(pod);
      run.process = std::move(*adopted);
      MarkRunning(pod, replica, slot);
      return true;
    }
  }
  // It ended while no node agent watched: its shim wrote how. (A stale
  // file cannot be this run's: the path names the pod's uid and the run.)
  if (std::optional<runtime::ExitStatus> exit = runtime::ReadExitFile(exit_path)) {
    OnExit(pod, replica, slot, *exit);
    return true;
  }
  return false;
}

void NodeAgent::MarkRunning(api::Pod& pod, Replica& replica, const Slot& slot) {
  ContainerRun& run = replica.runs[slot.spec->name];
  api::ContainerStatus& status = StatusOf(pod, slot);
  std::string now = FormatRfc3339(options_.clock->Now());
  const runtime::Process& process = *run.process;
  // Under a shim, the pid and its start time identify it to a later node
  // agent ("trainyard://<pid>-<start time>").
  run.container_id = options_.shim.empty()
                         ? fmt::format("trainyard://{}", process.pid())
                         : fmt::format("trainyard://{}-{}", process.pid(), process.start_time());
  run.exit.reset();
  run.restart_at.reset();
  status.container_id = run.container_id;
  status.restart_count = run.run;
  status.state = api::ContainerState{};
  status.state.running = api::ContainerStateRunning{.started_at = now};
  status.ready = true;
  status.started = true;
  MarkScheduled(pod, now);
  pod.status.host_ip = options_.host;
  pod.status.pod_ip = options_.host;
  if (pod.status.start_time.empty()) pod.status.start_time = now;
}

// A failed container's termination message: the end of its output, as the
// kubelet's FallbackToLogsOnError keeps it (2 KiB, 80 lines), unless the
// container asks for its termination file alone (terminationMessagePolicy
// File, which trainyard leaves unset: the file is not read).
std::string NodeAgent::FailureOutput(const Replica& replica, const api::Container& container) {
  if (container.extra.is_object() &&
      container.extra.value("terminationMessagePolicy", "") == "File") {
    return "";
  }
  auto log = replica.log_paths.find(container.name);
  if (log == replica.log_paths.end()) return "";
  return runtime::CurrentRunTail(log->second, 2048, 80);
}

void NodeAgent::OnExit(api::Pod& pod, Replica& replica, const Slot& slot,
                       const runtime::ExitStatus& exit, const std::string& reason,
                       const std::string& message) {
  ContainerRun& run = replica.runs[slot.spec->name];
  api::ContainerStatus& status = StatusOf(pod, slot);
  std::string now = FormatRfc3339(options_.clock->Now());
  std::string why = reason;
  int32_t exit_code = exit.exit_code;
  if (options_.cgroups != nullptr && options_.cgroups->problem().empty()) {
    std::string group = GroupName(pod.metadata.uid, slot.spec->name, run.run);
    // As the kubelet reports a container the kernel killed at its limit.
    if (why.empty() && options_.cgroups->OomKilled(group)) {
      why = "OOMKilled";
      exit_code = 137;
      Event(replica, slot.spec->name, "Warning", "OOMKilling",
            fmt::format("Memory cgroup out of memory: the kernel killed a process of container "
                        "{} at its limit of {}",
                        slot.spec->name,
                        slot.spec->resources.limits.count("memory")
                            ? slot.spec->resources.limits.at("memory").text()
                            : std::string("?")));
    }
    // What the run left (a daemon, a command exec'd into it) ends with it,
    // as a container's processes end with its init.
    options_.cgroups->Kill(group);
    options_.cgroups->Remove(group);
  }
  api::ContainerStateTerminated terminated{
      .exit_code = exit_code,
      .signal = exit.signal != 0 ? std::optional<int32_t>(exit.signal) : std::nullopt,
      .reason = !why.empty() ? why
                : exit.ok()  ? "Completed"
                             : "Error",
      .message = message.empty() && !exit.ok() ? FailureOutput(replica, *slot.spec) : message,
      .started_at = status.state.running ? status.state.running->started_at : now,
      .finished_at = now};
  status.ready = false;
  const std::string& policy = pod.spec.restart_policy;
  // A sidecar always comes back; an init container that succeeded never
  // runs again, one that failed does unless the pod never restarts.
  bool restart =
      !replica.ending &&
      (slot.sidecar || (slot.init ? !exit.ok() && policy != "Never"
                                  : policy == "Always" || (policy == "OnFailure" && !exit.ok())));
  if (restart) {
    Duration wait = Backoff(options_, status.restart_count);
    status.last_state = api::ContainerState{};
    status.last_state.terminated = terminated;
    status.state = api::ContainerState{};
    status.state.waiting = api::ContainerStateWaiting{
        .reason = std::string(api::kRestartWaitReason),
        .message = fmt::format("back-off {}s restarting failed container",
                               std::chrono::duration_cast<std::chrono::seconds>(wait).count())};
    run.restart_at = options_.clock->Now() + wait;
    Event(replica, slot.spec->name, "Warning", "BackOff",
          fmt::format("Back-off restarting failed container {} in pod {}", slot.spec->name,
                      pod.metadata.name));
  } else {
    status.state = api::ContainerState{};
    status.state.terminated = terminated;
  }
  run.process.reset();
  run.exit = exit;
}

Status NodeAgent::SyncPod(const api::Pod& pod, std::optional<TimePoint>& wake) {
  if (pod.spec.containers.empty()) return OkStatus();
  if (options_.any_node ? pod.spec.node_name.empty()
                        : !options_.node_name.empty() && pod.spec.node_name != options_.node_name) {
    return OkStatus();
  }
  Replica& replica = replicas_[KeyOf(pod)];
  // Stored again (a failed commit took its delete back, or a new pod took
  // its name): looked at on every sync while it has work, as active_.
  gone_.erase(KeyOf(pod));
  if (replica.uid != pod.metadata.uid) {
    // A new pod under an old name: the old one's processes go first, given
    // its own grace period, or its delete's (on Kubernetes the name is free
    // only then).
    TakeDeletionGrace(KeyOf(pod), replica);
    if (Stopping(replica, wake)) return OkStatus();
    RemovePodFiles(replica);
    replica = Replica{
        .uid = pod.metadata.uid, .namespace_ = pod.metadata.namespace_, .name = pod.metadata.name};
    for (const Slot& slot : SlotsOf(pod)) {
      const std::string& name = slot.spec->name;
      replica.log_paths[name] = LogPath(pod.metadata.namespace_, pod.metadata.name, name);
      replica.exit_prefixes[name] = ExitPrefix(exits_dir_, pod, name);
    }
  }
  replica.grace = GraceOf(pod);
  if (api::HasFinished(pod) && !replica.Active()) return OkStatus();
  // Most syncs change nothing: the pod is written only when its status
  // moved.
  api::Pod edited = pod;
  RETURN_IF_ERROR(Advance(edited, replica, wake));
  if (edited.status == pod.status) return OkStatus();
  return WriteStatus(edited);
}

Status NodeAgent::Advance(api::Pod& pod, Replica& replica, std::optional<TimePoint>& wake) {
  EnsureStatuses(pod);
  TimePoint now = options_.clock->Now();
  std::vector<Slot> slots = SlotsOf(pod);
  for (const Slot& slot : slots) TakeExit(pod, replica, slot, now);
  // Whether the pod ends is known before anything restarts or starts: a
  // sidecar is not started again only to be stopped.
  replica.ending = replica.ending || Ends(pod, replica, slots);
  if (!replica.ending && PastDeadline(pod, now, wake)) {
    replica.ending = true;
    pod.status.reason = "DeadlineExceeded";
    pod.status.message = "Pod was active on the node longer than the specified deadline";
  }
  for (const Slot& slot : slots) {
    ContainerRun& run = replica.runs[slot.spec->name];
    if (!run.restart_at || replica.ending || now < *run.restart_at) continue;
    api::ContainerStatus& status = StatusOf(pod, slot);
    if (!WaitingForConfig(status)) status.restart_count += 1;
    RETURN_IF_ERROR(Start(pod, replica, slot));
  }
  if (!replica.ending) RETURN_IF_ERROR(StartNext(pod, replica, slots));
  UpdatePhase(pod, replica, slots, wake);
  // Every restart still to come wakes the loop (some were set just now,
  // by a start that failed).
  for (const auto& [name, run] : replica.runs) {
    if (run.restart_at) wake = wake ? std::min(*wake, *run.restart_at) : *run.restart_at;
  }
  return OkStatus();
}

bool NodeAgent::PastDeadline(const api::Pod& pod, TimePoint now,
                             std::optional<TimePoint>& wake) const {
  const api::Json* seconds =
      pod.spec.extra.is_object() ? api::FindAt(pod.spec.extra, {"activeDeadlineSeconds"}) : nullptr;
  if (seconds == nullptr || !seconds->is_number_integer()) return false;
  std::optional<TimePoint> start = ParseRfc3339(pod.status.start_time);
  if (!start) return false;  // not started: the deadline counts from the start
  TimePoint deadline = *start + std::chrono::seconds(seconds->get<int64_t>());
  if (now >= deadline) return true;
  wake = wake ? std::min(*wake, deadline) : deadline;
  return false;
}

void NodeAgent::TakeExit(api::Pod& pod, Replica& replica, const Slot& slot, TimePoint now) {
  ContainerRun& run = replica.runs[slot.spec->name];
  const api::ContainerStatus& status = StatusOf(pod, slot);
  bool backing_off =
      status.state.waiting && status.state.waiting->reason == api::kRestartWaitReason;

  if (run.process) {
    if (std::optional<runtime::ExitStatus> exit = run.process->TryWait()) {
      OnExit(pod, replica, slot, *exit);
    } else if (status.container_id != run.container_id) {
      MarkRunning(pod, replica, slot);  // the store took the record back
    }
  } else if (run.exit && run.run == status.restart_count && !status.state.terminated &&
             !backing_off) {
    // This node agent saw it end, but the store took the record back.
    OnExit(pod, replica, slot, *run.exit);
  } else if (run.restart_at) {
    return;
  } else if (status.state.running) {
    Recover(pod, replica, slot);  // it ran under an earlier trainyard
  } else if ((backing_off || WaitingForConfig(status)) && !replica.ending) {
    run.restart_at = now;  // waiting to (re)start when trainyard started: now
  }
}

bool NodeAgent::Ends(api::Pod& pod, Replica& replica, const std::vector<Slot>& slots) {
  bool all_ended = true;
  for (const Slot& slot : slots) {
    const ContainerRun& run = replica.runs[slot.spec->name];
    const auto& ended = StatusOf(pod, slot).state.terminated;
    if (slot.init && !slot.sidecar && ended && ended->exit_code != 0) return true;  // for good
    if (!slot.init) all_ended = all_ended && ended.has_value() && !run.restart_at;
  }
  return all_ended;
}

Status NodeAgent::StartNext(api::Pod& pod, Replica& replica, const std::vector<Slot>& slots) {
  for (const Slot& slot : slots) {
    ContainerRun& run = replica.runs[slot.spec->name];
    const api::ContainerStatus& status = StatusOf(pod, slot);
    if (slot.sidecar) {
      // Started in its turn, it runs on beside the rest.
      if (!Started(status, run)) RETURN_IF_ERROR(Start(pod, replica, slot));
      continue;
    }
    if (slot.init) {
      if (status.state.terminated && status.state.terminated->exit_code == 0) continue;
      // Running, restarting or failed for good: nothing after it starts.
      if (Started(status, run)) return OkStatus();
      return Start(pod, replica, slot);  // the next waits for this one's end
    }
    if (!Started(status, run)) RETURN_IF_ERROR(Start(pod, replica, slot));
  }
  return OkStatus();
}

void NodeAgent::UpdatePhase(api::Pod& pod, Replica& replica, const std::vector<Slot>& slots,
                            std::optional<TimePoint>& wake) {
  bool init_failed = false, all_succeeded = true, any_started = false;
  for (const Slot& slot : slots) {
    ContainerRun& run = replica.runs[slot.spec->name];
    api::ContainerStatus& status = StatusOf(pod, slot);
    const auto& ended = status.state.terminated;
    if (replica.ending && run.restart_at) {
      // Ending, nothing restarts: a sidecar waiting to is ended as it was.
      run.restart_at.reset();
      status.state = api::ContainerState{};
      status.state.terminated = status.last_state.terminated;
    }
    if (slot.init) {
      init_failed = init_failed || (!slot.sidecar && ended && ended->exit_code != 0);
      continue;
    }
    // One waiting for its ConfigMap, Secret or claim has not started.
    bool configuring = WaitingForConfig(status) && status.restart_count == 0;
    any_started = any_started || (Started(status, run) && !configuring);
    all_succeeded = all_succeeded && ended && ended->exit_code == 0;
  }
  if (!replica.ending) {
    pod.status.phase = any_started ? "Running" : "Pending";
    return;
  }
  // The pod ends: what still runs of it (its sidecars) is stopped first,
  // and each end recorded before the pod's.
  if (Stopping(replica, wake)) return;
  for (const Slot& slot : slots) {
    ContainerRun& run = replica.runs[slot.spec->name];
    if (!run.process) continue;
    if (std::optional<runtime::ExitStatus> exit = run.process->TryWait()) {
      OnExit(pod, replica, slot, *exit);
    }
  }
  pod.status.phase = !init_failed && all_succeeded ? "Succeeded" : "Failed";
}

void NodeAgent::Recover(api::Pod& pod, Replica& replica, const Slot& slot) {
  ContainerRun& run = replica.runs[slot.spec->name];
  const api::ContainerStatus& status = StatusOf(pod, slot);
  run.run = status.restart_count;
  std::string exit_path = ExitPath(pod, slot.spec->name, status.restart_count);
  strays_.erase(exit_path);  // recorded: no stray
  // "trainyard://<pid>-<start time>": a shim's, which may still run.
  std::string id = status.container_id.substr(
      std::min(status.container_id.size(), std::string_view("trainyard://").size()));
  size_t dash = id.find('-');
  if (dash != std::string::npos) {
    pid_t pid = static_cast<pid_t>(std::strtol(id.c_str(), nullptr, 10));
    uint64_t start = std::strtoull(id.c_str() + dash + 1, nullptr, 10);
    Result<runtime::Process> adopted = runtime::Process::Adopt(pid, start, exit_path);
    if (adopted.ok()) {
      run.process = std::move(*adopted);
      replica.volumes = VolumeDirsOf(pod);
      run.run = status.restart_count;
      run.container_id = status.container_id;
      return;  // still running: nothing to write
    }
    // It ended while no trainyard watched: its shim wrote how.
    if (std::optional<runtime::ExitStatus> exit = runtime::ReadExitFile(exit_path)) {
      OnExit(pod, replica, slot, *exit);
      return;
    }
  }
  // It died with an earlier trainyard (PDEATHSIG), or its shim was killed:
  // report that, and let the restart policy decide.
  OnExit(pod, replica, slot, runtime::ExitStatus{137, SIGKILL});
}

Duration NodeAgent::GraceOf(const api::Pod& pod) const {
  const std::optional<int64_t>& seconds = pod.spec.termination_grace_period_seconds;
  if (!seconds) return options_.default_grace;
  return std::chrono::seconds(std::max<int64_t>(0, *seconds));
}

void NodeAgent::TakeDeletionGrace(const std::string& key, Replica& replica) {
  std::optional<Duration> grace;
  {
    std::lock_guard lock(changed_mu_);
    auto it = deletion_grace_.find(key);
    if (it == deletion_grace_.end()) return;
    if (it->second.first == replica.uid) grace = it->second.second;
    deletion_grace_.erase(it);
  }
  if (!grace) return;
  replica.grace = *grace;
  if (replica.kill_at) replica.kill_at = std::min(*replica.kill_at, options_.clock->Now() + *grace);
}

bool NodeAgent::Stopping(Replica& replica, std::optional<TimePoint>& wake) {
  bool running = false;
  for (auto& [name, run] : replica.runs) {
    running = running || (run.process && !run.process->TryWait());
  }
  if (!running) return false;
  TimePoint now = options_.clock->Now();
  bool first = !replica.kill_at;
  if (first) replica.kill_at = now + replica.grace;
  for (auto& [name, run] : replica.runs) {
    if (!run.process || run.process->TryWait()) continue;
    if (first) {
      run.process->Signal(SIGTERM);
      Event(replica, name, "Normal", "Killing", fmt::format("Stopping container {}", name));
    }
    if (now >= *replica.kill_at) run.process->Signal(SIGKILL);
  }
  wake = wake ? std::min(*wake, *replica.kill_at) : *replica.kill_at;
  return true;
}

void NodeAgent::NoteActivity(const std::string& key) {
  auto it = replicas_.find(key);
  if (it != replicas_.end() && it->second.Active()) {
    active_.insert(key);
  } else {
    active_.erase(key);
  }
}

void NodeAgent::StopOrphans(std::optional<TimePoint>& wake) {
  for (auto key = gone_.begin(); key != gone_.end();) {
    auto it = replicas_.find(*key);
    Replica* replica = it == replicas_.end() ? nullptr : &it->second;
    if (replica != nullptr) TakeDeletionGrace(*key, *replica);
    if (replica == nullptr || !Stopping(*replica, wake)) {
      if (replica != nullptr) {
        RemovePodFiles(*replica);  // the pod is gone: so are its emptyDirs and logs
        replicas_.erase(it);
      }
      active_.erase(*key);
      key = gone_.erase(key);
      continue;
    }
    ++key;
  }
}

bool NodeAgent::Claimable(const std::string& exit_path) {
  // "<exits>/<namespace>/<pod>_<container>.<uid>.<run>.exit"; pod names
  // never hold '_'.
  fs::path path(exit_path);
  std::string file = path.filename().string();
  store::ObjectKey key{"Pod", path.parent_path().filename().string(),
                       file.substr(0, file.find('_'))};
  Result<api::Json> doc = options_.store->Get(key);
  if (!doc.ok()) return false;
  Result<const api::Pod*> pod = Decoded(*doc);
  if (!pod.ok() || api::HasFinished(**pod)) return false;
  std::string prefix = ExitPrefixOf(exit_path);
  for (const Slot& slot : SlotsOf(**pod)) {
    if (ExitPrefix(exits_dir_, **pod, slot.spec->name) == prefix) return true;
  }
  return false;
}

void NodeAgent::StopStrays() {
  for (auto it = strays_.begin(); it != strays_.end();) {
    if (Claimable(it->first)) {
      ++it;
      continue;
    }
    const ShimProcess& shim = it->second;
    Result<runtime::Process> adopted =
        runtime::Process::Adopt(shim.pid, shim.start_time, it->first);
    if (adopted.ok()) {
      fmt::print(stderr, "trainyard: stopping a replica of no stored pod (shim {}, {})\n", shim.pid,
                 it->first);
      // Under a key no pod has: StopOrphans stops it, as a deleted pod's.
      Replica stray{.grace = options_.default_grace};
      stray.runs["stray"].process = std::move(*adopted);
      replicas_["stray " + it->first] = std::move(stray);
      gone_.insert("stray " + it->first);
    }
    it = strays_.erase(it);
  }
}

Result<const api::Pod*> NodeAgent::Decoded(const api::Json& doc) {
  const api::Json& meta = doc["metadata"];
  std::string key = meta.value("namespace", "") + "/" + meta.value("name", "");
  std::string rv = meta.value("resourceVersion", "");
  auto it = decoded_.find(key);
  if (it != decoded_.end() && it->second.first == rv) return &it->second.second;
  ASSIGN_OR_RETURN(api::Pod pod, api::DecodePod(doc));
  auto& entry = decoded_[key];
  entry = {rv, std::move(pod)};
  return &entry.second;
}

Result<std::optional<Duration>> NodeAgent::Sync() {
  if (!strays_found_) {
    strays_found_ = true;
    if (!options_.shim.empty()) {
      for (ShimProcess& shim : FindShims(exits_dir_)) strays_.emplace(shim.exit_path, shim);
    }
    if (options_.cgroups != nullptr) options_.cgroups->RemoveStale();
  }
  // Pods are decoded only when their resourceVersion moved; syncing
  // writes, so it comes after. (Pointers into decoded_, whose entries stay
  // where they are until a pod is gone.)
  std::vector<const api::Pod*> pods;
  // Until a Sync has gone through, the next looks at every pod again: the
  // changed pods it took but did not reach must not be forgotten.
  bool was_full = std::exchange(full_sync_, true);
  RETURN_IF_ERROR(was_full ? ReadAllPods(pods) : ReadChangedPods(pods));
  std::optional<TimePoint> wake;
  for (const api::Pod* pod : pods) {
    Status synced = SyncPod(*pod, wake);
    NoteActivity(KeyOf(*pod));  // even after an error: a process it started is watched
    RETURN_IF_ERROR(synced);
  }
  full_sync_ = false;
  StopStrays();
  StopOrphans(wake);
  if (!wake) return std::optional<Duration>();
  return std::optional<Duration>(std::max(Duration::zero(), *wake - options_.clock->Now()));
}

void NodeAgent::AddPod(const api::Json& doc, std::vector<const api::Pod*>& pods) {
  Result<const api::Pod*> pod = Decoded(doc);
  if (pod.ok()) {
    pods.push_back(*pod);
    return;
  }
  // A pod that cannot be decoded is left as it is, said once, and never
  // stops the others (nor, as an orphan, loses a process it has).
  std::string key =
      api::StringAt(doc["metadata"], "namespace") + "/" + api::StringAt(doc["metadata"], "name");
  if (unreadable_.insert(key + "@" + api::StringAt(doc["metadata"], "resourceVersion")).second) {
    fmt::print(stderr, "trainyard: pod {} cannot be decoded, left alone: {}\n", key,
               pod.status().message());
  }
}

Status NodeAgent::ReadAllPods(std::vector<const api::Pod*>& pods) {
  {
    std::lock_guard lock(changed_mu_);
    changed_.clear();  // every pod is looked at now
  }
  std::set<std::string> live;
  // In place, without copying any pod's JSON.
  RETURN_IF_ERROR(options_.store->Scan("Pod", "", [&](const api::Json& doc) {
    live.insert(api::StringAt(doc["metadata"], "namespace") + "/" +
                api::StringAt(doc["metadata"], "name"));
    AddPod(doc, pods);
  }));
  std::erase_if(decoded_, [&](const auto& entry) { return !live.contains(entry.first); });
  for (const auto& [key, replica] : replicas_) {
    if (!live.contains(key)) gone_.insert(key);
  }
  std::lock_guard lock(changed_mu_);  // a grace no replica here will take
  std::erase_if(deletion_grace_, [&](const auto& entry) {
    return !live.contains(entry.first) && !replicas_.contains(entry.first);
  });
  return OkStatus();
}

Status NodeAgent::ReadChangedPods(std::vector<const api::Pod*>& pods) {
  std::set<std::string> keys;
  {
    std::lock_guard lock(changed_mu_);
    keys.swap(changed_);
  }
  for (const std::string& key : active_) {
    if (!gone_.contains(key)) keys.insert(key);
  }
  for (const std::string& key : keys) {
    size_t slash = key.find('/');
    Result<api::Json> doc =
        options_.store->Get({"Pod", key.substr(0, slash), key.substr(slash + 1)});
    if (doc.ok()) {
      AddPod(*doc, pods);
      continue;
    }
    if (doc.status().code() != StatusCode::kNotFound) return doc.status();
    decoded_.erase(key);
    if (replicas_.contains(key)) {
      gone_.insert(key);
    } else {
      std::lock_guard lock(changed_mu_);  // a grace no replica here will take
      deletion_grace_.erase(key);
    }
  }
  return OkStatus();
}

void NodeAgent::StopAll() {
  // Every process is told at once; each gets its own pod's grace period
  // from then (a replica saving a checkpoint on SIGTERM has all of it).
  for (auto& [key, replica] : replicas_) {
    for (auto& [name, run] : replica.runs) {
      if (run.process) run.process->Signal(SIGTERM);
    }
  }
  auto told = std::chrono::steady_clock::now();
  for (auto& [key, replica] : replicas_) {
    for (auto& [name, run] : replica.runs) {
      if (!run.process) continue;
      auto left = std::chrono::ceil<std::chrono::milliseconds>(
          std::max(told + replica.grace - std::chrono::steady_clock::now(),
                   std::chrono::steady_clock::duration::zero()));
      run.process->Stop(left);
    }
  }
  RemoveMemoryVolumes();
}

}  // namespace trainyard::node
