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
#include "node/image_root.h"
#include "node/node_agent_internal.h"
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

}  // namespace

std::string internal::ExitPrefix(const std::string& exits_dir, const api::Pod& pod,
                                 const std::string& container) {
  return (fs::path(exits_dir) / pod.metadata.namespace_ /
          fmt::format("{}_{}.{}.", pod.metadata.name, container, pod.metadata.uid))
      .string();
}

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
  if (!status.state.waiting) return false;
  const std::string& reason = status.state.waiting->reason;
  return reason == api::kConfigWaitReason || IsImageWait(reason, status.state.waiting->message);
}

NodeAgent::NodeAgent(NodeAgentOptions options) : options_(std::move(options)) {
  std::error_code ec;
  exits_dir_ = fs::absolute(options_.logs_dir, ec).string();
  // Called in the writing thread, under the store's lock: it only notes.
  Result<store::WatchId> watch = options_.store->Watch(0, [this](const store::WatchEvent& e) {
    if (!api::IsPodObject(e.object)) return;
    const api::Json& meta = e.object["metadata"];
    std::string key = api::StringAt(meta, "namespace") + "/" + api::StringAt(meta, "name");
    MutexLock lock(changed_mu_);
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
          .hosts_file = (pod_dir / "etc-hosts").string(),
          .roots = (pod_dir / "roots").string()};
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
    options_.log->Warning("trainyard: event {} of pod {}/{}: {}", reason, replica.namespace_,
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
  return internal::ExitPrefix(exits_dir_, pod, container) + std::to_string(run) +
         std::string(internal::kExitSuffix);
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
  replica.volumes = VolumeDirsOf(pod);
  auto event = [&](const std::string& type, const std::string& reason, const std::string& message) {
    Event(replica, container.name, type, reason, message);
  };
  return spec_builder_.Build({.pod = pod,
                              .container = container,
                              .run = run,
                              .volumes = replica.volumes,
                              .log_path = replica.log_paths.at(container.name),
                              .exit_path = ExitPath(pod, container.name, run),
                              .event = event});
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
  if (options_.image_puller != nullptr && !AsksForHostRoot(pod)) {
    ASSIGN_OR_RETURN(bool ready, ImageReady(pod, replica, slot));
    if (!ready) return OkStatus();
  }
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
  run.image_pulled = false;  // a later start (Always) pulls again
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
      api::StringAt(container.extra, "terminationMessagePolicy") == "File") {
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
    std::string group = RunGroupName(pod.metadata.uid, slot.spec->name, run.run);
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
      replica.exit_prefixes[name] = internal::ExitPrefix(exits_dir_, pod, name);
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

void NodeAgent::NoteActivity(const std::string& key) {
  auto it = replicas_.find(key);
  if (it != replicas_.end() && it->second.Active()) {
    active_.insert(key);
  } else {
    active_.erase(key);
  }
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

}  // namespace trainyard::node
