// A pod's volumes on this machine, without containers: each volume a
// container mounts is made ready as a directory (hostPath as is, emptyDir
// per pod, medium Memory under /dev/shm, configMap as files, secret as
// files in memory), and the container sees it through path translation,
// since creating the mount path itself would need root or a mount
// namespace: where a mount path starts a path in the command, args, env
// values or workingDir, it is replaced by the directory that backs the
// volume.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/pod_object.h"
#include "common/held_dir.h"
#include "common/status.h"
#include "store/object_store.h"

namespace trainyard::node {

struct Mount {
  std::string mount_path;  // where the container expects it: "/etc/mpi"
  std::string host_path;   // where it is on this machine
  // Mounted read-only in a sandbox: readOnly, a claim's readOnly, and
  // configMap and secret volumes always, as the kubelet mounts them.
  bool read_only = false;
  bool devices = false;  // a hostPath: device files in it work
};
using Mounts = std::vector<Mount>;

// Where a pod's emptyDir, configMap and secret volumes live.
struct PodVolumeDirs {
  std::string disk;    // <volumes>/<namespace>/<pod>
  std::string memory;  // /dev/shm/trainyard-<pod uid>: medium Memory and secrets
  // Where claims keep their data, outliving pods, jobs and runs:
  // <claims>/<namespace>/<claim> (ClaimDir). Empty: no claim can be used.
  std::string claims;
  // <pod dir>/etc-hosts: the pod's /etc/hosts, in a sandbox (sandbox.h).
  std::string hosts_file;
  // <pod dir>/roots: its containers' image roots (image_root.h).
  std::string roots;
};

// The directory a PersistentVolumeClaim is bound to; an error naming the
// claim when its name could lead elsewhere.
Result<std::string> ClaimDir(const std::string& claims, const std::string& namespace_,
                             const std::string& claim);
// ClaimDir, made when missing: the owner's alone (0700), as a claim is its
// namespace's, below folders others may pass through but not list (0711).
Result<std::string> MakeClaimDir(const std::string& claims, const std::string& namespace_,
                                 const std::string& claim);

// Makes every volume `container` mounts ready, and says where each is. The
// error names the volume and what to change; NOT_FOUND when what it needs
// from the store (a ConfigMap, a Secret, a claim, a key of one) is not
// there yet.
// The pod's folders are trainyard's alone (0711), written as held_dir.h
// says: an emptyDir is handed to `owner` (the replica's user, when it is
// not trainyard's) as it is made, and trainyard never writes in it; a
// configMap's or secret's files are made anew, whole, on each start, then
// handed to `owner`.
Result<Mounts> PrepareVolumes(const api::Pod& pod, const api::Container& container,
                              const PodVolumeDirs& dirs, const std::optional<FileOwner>& owner,
                              const store::ObjectStore& store);

// Writes the pod's hosts file (dirs.hosts_file), trainyard's and readable
// by all, in the pod's folder, which is made trainyard's alone.
Status WriteHostsFile(const PodVolumeDirs& dirs, std::string_view content);

// `text` with every mount path that is a path or starts one replaced by
// the host directory; the longest mount path wins. "--data=/data/x" ->
// "--data=/srv/vol/x". A path starts at the start of `text` or after
// whitespace, a quote, a backtick, '=', ':', ',', ';', '|', '&', '<', '>',
// '(', ')', '{' or '}', and the mount path must end there, at the end, or
// before a '/' or one of those: shell scripts are translated too, and
// /data2 is no path under /data.
// Nullopt when the result would be longer than `max_bytes`: a short mount
// path may stand for a long host path many times over, so nothing beyond
// the bound is ever allocated.
std::optional<std::string> TranslatePaths(std::string_view text, const Mounts& mounts,
                                          size_t max_bytes = SIZE_MAX);

// Removes a pod's emptyDir, configMap and secret volumes (never a
// hostPath), and its hosts file, following no link a replica made.
void RemoveVolumes(const PodVolumeDirs& dirs);

}  // namespace trainyard::node
