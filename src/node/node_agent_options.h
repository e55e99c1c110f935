// What a node agent is given: its store and clock, where this machine keeps
// pods' logs, volumes and output, and how replicas run here (users,
// sandboxes, control groups, GPUs, restart back-off).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/log.h"
#include "image/image_store.h"
#include "node/cdi.h"
#include "node/cgroups.h"
#include "node/container_env.h"
#include "node/image_puller.h"
#include "node/run_as.h"
#include "node/sandbox.h"
#include "node/service_account.h"
#include "runtime/local/credentials.h"
#include "store/object_store.h"

namespace trainyard::node {

struct NodeAgentOptions {
  store::ObjectStore* store = nullptr;
  const Clock* clock = nullptr;
  // Where what is neither a status nor an event is said.
  Logger* log = &StderrLog();
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
  // Where PersistentVolumeClaims keep their data (PodVolumeDirs::claims).
  std::string claims_dir;
  // Where jobs' output folders are (api::ArtifactsDirOf); empty: none.
  std::string artifacts_dir;
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
  // A deleted pod's log goes with it, as on Kubernetes; `trainyard run`
  // keeps them: its run directory is the record of the run, and what a
  // replica stopped with its job said is still printed after it is gone.
  bool keep_logs = false;
  // A container whose ConfigMap, Secret or claim is missing waits for it
  // (CreateContainerConfigError, tried again with the restart back-off),
  // as on a cluster where it may come later; otherwise it fails to start
  // (`trainyard run`, which stored everything it was given first).
  bool wait_for_config = false;
  // Who each namespace's replicas run as; empty: trainyard's own user.
  runtime::RunAsPolicy run_as;
  // Which host files a namespace's pods may mount (node/run_as.h).
  HostAccess host_access;
  Duration restart_backoff = std::chrono::seconds(1);  // doubled per restart
  Duration max_restart_backoff = std::chrono::seconds(30);
  // SIGTERM to SIGKILL for a pod without terminationGracePeriodSeconds:
  // Kubernetes' default.
  Duration default_grace = std::chrono::seconds(30);
  // Where containers' memory and CPU limits are enforced; none, or one
  // with a problem: they are not (said once).
  const Cgroups* cgroups = nullptr;
  // The tasks a pod may have at once (the kubelet's --pod-max-pids), where
  // control groups are made; 0 or less: no bound.
  int64_t pod_max_pids = 0;
  // Where replicas run in namespaces of their own, with their volumes at
  // their mountPath; none, or one with a problem (said once): they reach
  // their volumes through path rewriting.
  const Sandboxes* sandboxes = nullptr;
  // Set: containers run in their images' roots (node/image_root.h), which
  // this store holds; unset: on the machine's own files.
  const image::ImageStore* images = nullptr;
  // With `images`: whether a pod may ask for the machine's files instead
  // (api::kRootAnnotation); refused, its containers fail to start.
  bool host_root_allowed = true;
  // With `images`: where the CDI specs that put a pod's GPUs into its root
  // are (node/cdi.h), and whether the GPUs pods are given are this
  // machine's (false: a simulated inventory's, which no spec need name).
  std::vector<std::string> cdi_spec_dirs = DefaultCdiSpecDirs();
  bool machine_gpus = false;
  // With `images`: pulls what a container's imagePullPolicy asks for, in
  // the background, while the container waits (ContainerCreating,
  // ErrImagePull, ImagePullBackOff), as the kubelet does.
  ImagePuller* image_puller = nullptr;
  // Set: pods reach this API server as their service account would
  // (node/service_account.h); unset: they are given none.
  std::optional<ApiAccess> api_access;
};

}  // namespace trainyard::node
