// What the node agent does for a pod whose replicas run as a user of their
// own (runtime/local/credentials.h), and for namespaces whose Pod Security
// level is baseline (api/pod_security.h): it refuses the host's files to
// them, and hands them theirs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "api/pod_object.h"
#include "node/container_env.h"
#include "node/volumes.h"
#include "runtime/local/credentials.h"
#include "store/object_store.h"

namespace trainyard::node {

// Where a namespace's pods may reach on this machine.
struct HostAccess {
  // Namespaces are baseline unless labelled privileged: no hostPath volume
  // outside `own_dirs`.
  bool baseline_namespaces = false;
  // trainyard's own directories that it mounts into pods as hostPath
  // volumes (trials' metrics and checkpoint folders): <dir>/<namespace>/...
  // belongs to that namespace, is allowed it under baseline, and is handed
  // to its user.
  std::vector<std::string> own_dirs;
};

// FAILED_PRECONDITION naming the volume when the pod may not start for a
// hostPath volume its namespace forbids.
Status CheckHostPaths(const api::Pod& pod, const HostAccess& access,
                      const store::ObjectStore& store);

// Opens the way for `user` to what its pod uses: the pod's own folder
// (under `pods_dir`, trainyard's; its volumes were handed over as they
// were made), and hands it its claims' folders and trainyard's own
// folders it mounts; the folders above them become traversable (0711),
// never listable.
Status GivePodFiles(const api::Pod& pod, const PodVolumeDirs& dirs, const std::string& pods_dir,
                    const HostAccess& access, const runtime::Credentials& user);

// Hands `user` a job's output folder (api::ArtifactsDirOf) under `root`:
// the folder itself, and a way to it (0711) from above `root`.
Status GiveOutputDir(const std::string& root, const std::string& dir,
                     const runtime::Credentials& user);

// Whom the files a pod's volumes hold are handed to: `user`, unless it is
// trainyard's own (or none).
std::optional<FileOwner> FileOwnerOf(const std::optional<runtime::Credentials>& user);

// HOME as the image would have it for `user` (its home in the user
// database), unless the container sets HOME itself.
void UseHomeOf(const runtime::Credentials& user, const api::Container& container, EnvList& env);

}  // namespace trainyard::node
