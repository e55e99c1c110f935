// The node agent: what a kubelet does, for this machine. It runs every pod
// in the store as a local process (the pod's default container: the first
// one), restarts it in place as the pod's restartPolicy says (Always,
// OnFailure) after a growing back-off, reports the pod's phase and
// container state, and stops the process of a pod that was deleted.
//
// Sync() is level-triggered and never blocks on a process: it starts what
// should run, looks at what exited, and says when it next has work (a
// restart back-off or a grace period running out). A caller polls
// PollFds() to learn of exits in between.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "api/pod_object.h"
#include "common/clock.h"
#include "node/container_env.h"
#include "node/volumes.h"
#include "runtime/local/process.h"
#include "store/object_store.h"

namespace trainyard::node {

struct NodeAgentOptions {
  store::ObjectStore* store = nullptr;
  const Clock* clock = nullptr;
  std::string host = "127.0.0.1";
  // What resourceFieldRef limits default to: this machine's CPUs and memory.
  NodeFacts facts;
  // Runs only pods bound to this node (spec.nodeName); empty: every pod.
  std::string node_name;
  // Runs pods bound to any node, and only those: a declared inventory of
  // nodes that all run on this machine.
  bool any_node = false;
  // The machine has GPUs: every replica gets CUDA_VISIBLE_DEVICES, the
  // indices of its pod's trainyard.dev/gpus annotation or none at all, as
  // a container on Kubernetes sees only the GPUs it was given.
  bool pin_gpus = false;
  std::string logs_dir;  // <logs_dir>/<namespace>/<pod>_<container>.log
  // <pods_dir>/<namespace>/<pod>/volumes/: the pod's emptyDir and
  // configMap volumes.
  std::string pods_dir;
  std::string default_working_dir;  // for containers without workingDir
  // What a container's image would give it: PATH, HOME, LANG, ...
  std::vector<std::pair<std::string, std::string>> base_env;
  // trainyard-shim's path: each replica runs under it, and everything a
  // replica starts ends with it (the shim is their subreaper). Empty:
  // replicas are trainyard's children, and only their process group is
  // killed.
  std::string shim;
  // With a shim: replicas outlive a crash of trainyard and are adopted by
  // the next node agent (`trainyard server`); otherwise they die with it.
  bool detach = false;
  Duration restart_backoff = std::chrono::seconds(1);  // doubled per restart
  Duration max_restart_backoff = std::chrono::seconds(30);
  // SIGTERM to SIGKILL for a pod without terminationGracePeriodSeconds:
  // Kubernetes' default.
  Duration default_grace = std::chrono::seconds(30);
};

class NodeAgent {
 public:
  explicit NodeAgent(NodeAgentOptions options) : options_(std::move(options)) {}
  ~NodeAgent();  // every process it started is killed

  // Returns how long until it next has work without any event, if ever.
  Result<std::optional<Duration>> Sync();
  std::vector<int> PollFds() const;
  // Stops every process: SIGTERM to all at once, SIGKILL to each after its
  // pod's grace period. Blocks.
  void StopAll();
  size_t running() const;

  // The log file of a pod's container.
  std::string LogPath(const std::string& namespace_, const std::string& pod,
                      const std::string& container) const;

 private:
  struct Replica {
    std::string uid;  // of the pod it runs
    std::optional<runtime::Process> process;
    std::optional<TimePoint> restart_at;  // waiting to restart
    std::optional<TimePoint> kill_at;     // stopping: SIGKILL then
    PodVolumeDirs volumes;                // set when it first starts
    // Its pod's terminationGracePeriodSeconds, kept for when the pod is
    // gone from the store.
    Duration grace{};
  };

  Status SyncPod(const api::Pod& pod, std::optional<TimePoint>& wake);
  // What the pod's default container runs, its volumes made ready: env,
  // argv and workingDir with mount paths translated, within the bounds of
  // runtime/local/expand.h.
  Result<runtime::ProcessSpec> SpecOf(const api::Pod& pod, Replica& replica);
  Status Start(api::Pod& pod, Replica& replica);
  // Records an exit; restarts per the pod's policy or ends the pod.
  Status OnExit(api::Pod& pod, Replica& replica, const runtime::ExitStatus& status,
                const std::string& reason = "", const std::string& message = "");
  void StopOrphans(const std::map<std::string, bool>& live, std::optional<TimePoint>& wake);
  // Stops `replica` without blocking: SIGTERM, then SIGKILL once its grace
  // period is over. True while its process still runs.
  bool Stopping(Replica& replica, std::optional<TimePoint>& wake);
  Duration GraceOf(const api::Pod& pod) const;
  Status WriteStatus(const api::Pod& pod);
  // A pod the store says runs, with no process here: an earlier node
  // agent's. Adopts its shim if it still runs; else records how it ended.
  Status Recover(api::Pod& pod, Replica& replica);
  PodVolumeDirs VolumeDirsOf(const api::Pod& pod) const;
  // After every process is gone: no memory volume is left behind.
  void RemoveMemoryVolumes();

  // The pod as last decoded, by resourceVersion: Sync() runs on every loop
  // turn, and decoding every pod each time was most of a launch's cost.
  Result<const api::Pod*> Decoded(const api::Json& doc);

  NodeAgentOptions options_;
  std::map<std::string, Replica> replicas_;                          // by "<namespace>/<pod>"
  std::map<std::string, std::pair<std::string, api::Pod>> decoded_;  // key -> (rv, pod)
  std::set<std::string> unreadable_;  // "<key>@<rv>" of pods already reported undecodable
};

}  // namespace trainyard::node
