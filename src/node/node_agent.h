// The node agent: what a kubelet does, for this machine. It runs every pod
// in the store as local processes, one per container: the init containers
// first, in order, each to its end (a sidecar, an init container with
// restartPolicy Always, is started and kept running beside the rest), then
// every container at once. Each is restarted in place as its pod's
// restartPolicy says (Always, OnFailure; an init container only on
// failure, a sidecar always) after a growing back-off. It reports the
// pod's phase and each container's state, stops a pod's sidecars once its
// containers have ended, and stops the processes of a pod that was
// deleted.
//
// Sync() is level-triggered and never blocks on a process: it starts what
// should run, looks at what exited, and says when it next has work (a
// restart back-off or a grace period running out). A caller polls
// PollFds() to learn of exits in between. It looks at every pod only the
// first time; then at the pods written since (a store watch tells it) and
// those with a process or a restart pending: an idle node agent costs the
// same however many finished pods the store holds.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "api/pod_object.h"
#include "common/clock.h"
#include "common/mutex.h"
#include "node/cgroups.h"
#include "node/container_env.h"
#include "node/container_spec.h"
#include "node/node_agent_options.h"
#include "node/pod_events.h"
#include "node/run_as.h"
#include "node/sandbox.h"
#include "node/stray_shims.h"
#include "node/volumes.h"
#include "runtime/local/process.h"
#include "store/object_store.h"

namespace trainyard::node {

class NodeAgent {
 public:
  explicit NodeAgent(NodeAgentOptions options);
  ~NodeAgent();                          // every process it started is killed
  NodeAgent(const NodeAgent&) = delete;  // its spec builder refers to its options
  NodeAgent& operator=(const NodeAgent&) = delete;

  // Returns how long until it next has work without any event, if ever.
  Result<std::optional<Duration>> Sync();
  // Makes the next Sync look at every pod: the store changed without
  // telling its watchers (it took back a failed commit's writes).
  void Resync() { full_sync_ = true; }
  // Where the API serving this node's store is, for the MLflow variables
  // every replica of a job is given (node/tracking_env.h); unset: none.
  // Call before the first Sync.
  void SetTrackingApi(std::string url, std::string ca_file) {
    spec_builder_.SetTrackingApi(std::move(url), std::move(ca_file));
  }
  std::vector<int> PollFds() const;
  // Stops every process: SIGTERM to all at once, SIGKILL to each after its
  // pod's grace period. Blocks.
  void StopAll();
  size_t running() const;

  // The log file of a pod's container.
  std::string LogPath(const std::string& namespace_, const std::string& pod,
                      const std::string& container) const;
  // Where the shim of a run of a pod's container (0 first, then one per
  // restart) records how it ended: named by the pod's uid, the container
  // and the run, so that a shim names the very run it is, for a later node
  // agent.
  std::string ExitPath(const api::Pod& pod, const std::string& container, int32_t run) const;

 private:
  // One container of a pod, as it runs here.
  struct ContainerRun {
    std::optional<runtime::Process> process;
    std::optional<TimePoint> restart_at;  // waiting to restart
    // The run (restartCount) and container id its status must show: a
    // write the store took back (a failed commit) is made again.
    int32_t run = 0;
    std::string container_id;
    std::optional<runtime::ExitStatus> exit;  // how that run ended, once it has
    bool init = false;                        // an init container's
    // Its image was pulled (or found, its policy asking no pull) for the
    // start under way; and how many pulls for it failed in a row.
    bool image_pulled = false;
    int32_t pull_failures = 0;
  };
  struct Replica {
    std::string uid;  // of the pod it runs
    std::string namespace_;
    std::string name;
    std::map<std::string, ContainerRun> runs;  // by container name
    std::optional<TimePoint> kill_at;          // stopping: SIGKILL then
    // Its containers have ended (or an init container failed for good):
    // what still runs (its sidecars) is being stopped; nothing restarts.
    bool ending = false;
    PodVolumeDirs volumes;  // set when it first starts
    // Its containers' logs and the start of their exit files' paths
    // (ExitPath without the run), by container: removed with the pod.
    std::map<std::string, std::string> log_paths;
    std::map<std::string, std::string> exit_prefixes;
    // Its pod's terminationGracePeriodSeconds, kept for when the pod is
    // gone from the store.
    Duration grace{};
    bool Running() const;  // a process of it runs
    bool Active() const;   // a process, or a restart pending
  };
  // A container of a pod and its place.
  struct Slot {
    const api::Container* spec;
    bool init = false;
    bool sidecar = false;  // an init container with restartPolicy Always
  };

  static std::vector<Slot> SlotsOf(const api::Pod& pod);
  // The container's status, made if it has none.
  static api::ContainerStatus& StatusOf(api::Pod& pod, const Slot& slot);
  static void EnsureStatuses(api::Pod& pod);
  static bool Started(const api::ContainerStatus& status, const ContainerRun& run);
  // Waiting for a ConfigMap, Secret or claim (WaitForConfig), or for its
  // image (WaitForImage): its next try is a start, not a restart.
  static bool WaitingForConfig(const api::ContainerStatus& status);

  Status SyncPod(const api::Pod& pod, std::optional<TimePoint>& wake);
  // The container waits for a ConfigMap, Secret or claim (`why`).
  void WaitForConfig(api::Pod& pod, Replica& replica, const Slot& slot, const Status& why);
  // With image roots: whether the container's image is here as its
  // imagePullPolicy wants it; if not, the pull is asked for (or its
  // failure said) and the container waits, with the kubelet's reasons and
  // events (node_agent_images.cc).
  Result<bool> ImageReady(api::Pod& pod, Replica& replica, const Slot& slot);
  // The pod's imagePullSecrets over the host's credentials ({"auths":
  // ...}), or null when it names none that can be read (said in an event).
  Result<api::Json> PullAuthsOf(const api::Pod& pod, const Replica& replica,
                                const std::string& container);
  void WaitForImage(api::Pod& pod, Replica& replica, const Slot& slot, const std::string& reason,
                    const std::string& message, Duration retry_after);
  // Takes exits, restarts what is due, starts what comes next and sets the
  // phase: the pod's status edited, not written.
  Status Advance(api::Pod& pod, Replica& replica, std::optional<TimePoint>& wake);
  // The pod's activeDeadlineSeconds, counted from its start, has passed:
  // it ends, Failed with the kubelet's DeadlineExceeded. Else `wake` is
  // set for when it will.
  static std::string FailureOutput(const Replica& replica, const api::Container& container);
  bool PastDeadline(const api::Pod& pod, TimePoint now, std::optional<TimePoint>& wake) const;
  // Records how a container's process ended, or what the store took back
  // of it, or a run of an earlier trainyard.
  void TakeExit(api::Pod& pod, Replica& replica, const Slot& slot, TimePoint now);
  // Whether the pod ends: its containers all ended for good, or an init
  // container failed for good.
  bool Ends(api::Pod& pod, Replica& replica, const std::vector<Slot>& slots);
  // Init containers in order (each to its end, a sidecar once started),
  // then every container.
  Status StartNext(api::Pod& pod, Replica& replica, const std::vector<Slot>& slots);
  // Succeeded or Failed once its containers have ended and nothing of it
  // runs (its sidecars are stopped first); Running once a container has
  // started; Pending while it initialises.
  void UpdatePhase(api::Pod& pod, Replica& replica, const std::vector<Slot>& slots,
                   std::optional<TimePoint>& wake);
  // What a container runs (ContainerSpecBuilder), its volumes made ready.
  Result<runtime::ProcessSpec> SpecOf(const api::Pod& pod, Replica& replica,
                                      const api::Container& container, int32_t run);
  Status Start(api::Pod& pod, Replica& replica, const Slot& slot);
  // A run an earlier node agent started without the store recording it
  // (it crashed first): adopts its shim if it still runs, or records how
  // it ended. False when there is no such run: then it is started.
  Result<bool> ResumeUnrecordedRun(api::Pod& pod, Replica& replica, const Slot& slot);
  // Records the container's process as running.
  void MarkRunning(api::Pod& pod, Replica& replica, const Slot& slot);
  // The shims of an earlier node agent that belong to no pod that may still
  // claim them (a stored, unfinished one): stopped as orphans are.
  void StopStrays();
  bool Claimable(const std::string& exit_path);
  // Records a kubelet's event about a container of `replica`'s pod.
  void Event(const Replica& replica, const std::string& container, const std::string& type,
             const std::string& reason, const std::string& message);
  // Records an exit (OOMKilled when its group's memory ran out); restarts
  // per the policy, or leaves it ended.
  void OnExit(api::Pod& pod, Replica& replica, const Slot& slot, const runtime::ExitStatus& status,
              const std::string& reason = "", const std::string& message = "");
  // Every pod, decoded (or reported once as undecodable); replicas of pods
  // no longer stored are marked gone.
  Status ReadAllPods(std::vector<const api::Pod*>& pods);
  // The pods written since the last Sync, and those with a process or a
  // restart pending.
  Status ReadChangedPods(std::vector<const api::Pod*>& pods);
  // Adds a stored pod to `pods`, unless it cannot be decoded (then it is
  // left alone, said once).
  void AddPod(const api::Json& doc, std::vector<const api::Pod*>& pods);
  // Keeps active_ in step with the replica of `key` after a sync.
  void NoteActivity(const std::string& key);
  // Stops the replicas of pods no longer stored, and forgets them once
  // their processes are gone.
  void StopOrphans(std::optional<TimePoint>& wake);
  // Stops `replica` without blocking: SIGTERM, then SIGKILL once its grace
  // period is over. True while a process of it still runs.
  bool Stopping(Replica& replica, std::optional<TimePoint>& wake);
  // The grace period its delete gave the pod of `key`, in place of its
  // own: a shorter one ends a stop already under way sooner.
  void TakeDeletionGrace(const std::string& key, Replica& replica);
  Duration GraceOf(const api::Pod& pod) const;
  Status WriteStatus(const api::Pod& pod);
  // A container the store says runs, with no process here: an earlier node
  // agent's. Adopts its shim if it still runs; else records how it ended.
  void Recover(api::Pod& pod, Replica& replica, const Slot& slot);
  PodVolumeDirs VolumeDirsOf(const api::Pod& pod) const;
  // A deleted pod's files, once its processes are gone: its volumes, its
  // logs (a new pod under its name must not show them as its `--previous`)
  // and its shims' exit files. The kubelet, too, removes a deleted pod's
  // logs.
  void RemovePodFiles(const Replica& replica);
  // After every process is gone: no memory volume is left behind.
  void RemoveMemoryVolumes();

  // The pod as last decoded, by resourceVersion: Sync() runs on every loop
  // turn, and decoding every pod each time was most of a launch's cost.
  Result<const api::Pod*> Decoded(const api::Json& doc);

  NodeAgentOptions options_;
  ContainerSpecBuilder spec_builder_{options_};
  std::string exits_dir_;  // logs_dir made absolute: shims are found by it
  // Shims found running at the first Sync that no pod has claimed yet, by
  // exit path.
  std::map<std::string, ShimProcess> strays_;
  bool strays_found_ = false;
  std::map<std::string, Replica> replicas_;                          // by "<namespace>/<pod>"
  std::map<std::string, std::pair<std::string, api::Pod>> decoded_;  // key -> (rv, pod)
  std::set<std::string> unreadable_;  // "<key>@<rv>" of pods already reported undecodable
  // Keys of replicas_ with a process or a restart pending (looked at on
  // every Sync), and of those whose pod is no longer stored: what Sync
  // visits besides changed pods, so that finished ones cost nothing.
  std::set<std::string> active_;
  std::set<std::string> gone_;
  bool full_sync_ = true;     // the next Sync looks at every pod
  store::WatchId watch_ = 0;  // tells changed_ of pod writes
  Mutex changed_mu_;
  // Pods written since the last Sync.
  std::set<std::string> changed_ TRAINYARD_GUARDED_BY(changed_mu_);
  // The grace period a delete gave a pod (metadata.deletionGracePeriodSeconds,
  // as `kubectl delete --grace-period` sets it), by key, with the pod's uid.
  std::map<std::string, std::pair<std::string, Duration>> deletion_grace_
      TRAINYARD_GUARDED_BY(changed_mu_);
};

}  // namespace trainyard::node
