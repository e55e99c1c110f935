// What a container of a pod runs: its process spec, built from the pod,
// its volumes and this node's settings. The env as the kubelet gives it
// (with the pod's GPUs pinned and the MLflow variables of its job), its
// volumes and output folder made ready, a sandbox with them at their
// mountPath or, without one, mount paths translated in env, argv and
// workingDir (within the bounds of runtime/local/expand.h), the user it
// runs as, torchrun adapted to one host, and the control groups of its
// limits. The node agent starts what this builds.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "api/pod.h"
#include "common/status.h"
#include "node/image_root.h"
#include "node/node_agent_options.h"
#include "node/volumes.h"
#include "runtime/local/process.h"

namespace trainyard::node {

// The control group of a container's run, in its pod's: named by the
// pod's uid, so that a later node agent finds it.
std::string RunGroupName(const std::string& pod_uid, const std::string& container, int32_t run);

class ContainerSpecBuilder {
 public:
  // Records a kubelet's event about the container: type, reason, message.
  using EventSink = std::function<void(const std::string&, const std::string&, const std::string&)>;

  struct Run {
    const api::Pod& pod;
    const api::Container& container;
    int32_t run;  // 0 first, then one per restart
    const PodVolumeDirs& volumes;
    std::string log_path;
    std::string exit_path;
    EventSink event;
  };

  // `options` outlives the builder.
  explicit ContainerSpecBuilder(const NodeAgentOptions& options) : options_(options) {}

  // Where the API serving this node's store is, for the MLflow variables
  // every replica of a job is given (node/tracking_env.h); unset: none.
  void SetTrackingApi(std::string url, std::string ca_file) {
    tracking_url_ = std::move(url);
    tracking_ca_ = std::move(ca_file);
  }

  Result<runtime::ProcessSpec> Build(const Run& run);

 private:
  // What a run needs wherever its root is: its env over `base`, its user
  // (in an image's `root`, as node/image_run_as.h says; null: on the
  // machine's files), and its volumes (the output folder among them) made
  // ready.
  struct Prepared {
    EnvList env;
    std::optional<runtime::Credentials> user;
    Mounts mounts;
  };
  Result<Prepared> Prepare(const Run& run, const EnvList& base, const ImageRoot* root);
  // The spec's parts that are the same wherever the root is.
  runtime::ProcessSpec SpecOf(const Run& run, std::vector<std::string> argv, Prepared prepared);
  // A run whose root is its image's (NodeAgentOptions::images).
  Result<runtime::ProcessSpec> BuildInImage(const Run& run);
  // The pod's GPUs in its image's root, as the CDI specs say: their
  // devices and the driver's files among `prepared`'s mounts, its env, and
  // the specs' symlinks made in the root.
  Status AddGpus(const Run& run, const ImageRoot& root, Prepared& prepared);
  // The sandbox's arguments for a container of `pod` with `mounts`, its
  // hosts file written.
  Result<std::vector<std::string>> SandboxFor(const Run& run, const Mounts& mounts) const;
  // Says, once, that replicas run without sandboxes, and why; and, with
  // events, that the container's readOnly mounts are not enforced and its
  // pod's hostAliases not applied.
  void WarnPathRewriting(const std::string& why, const Run& run);
  // The control groups a container's run joins, made with its limits;
  // none when it has none or they cannot be enforced (said once).
  std::vector<std::string> CgroupsFor(const Run& run);

  const NodeAgentOptions& options_;
  std::string tracking_url_;
  std::string tracking_ca_;
  bool said_no_limits_ = false;         // that limits are not enforced, said once
  bool said_path_rewriting_ = false;    // that replicas run without sandboxes, said once
  bool said_torchrun_adapted_ = false;  // that torchrun commands are adapted, said once
};

}  // namespace trainyard::node
