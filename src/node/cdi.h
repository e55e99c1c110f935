// GPUs in a container's image root, as the Container Device Interface
// says (https://github.com/cncf-tags/container-device-interface, specs
// 0.3-0.8): the spec files a vendor's toolkit writes (`nvidia-ctk cdi
// generate` writes /etc/cdi/nvidia.yaml) name, per device and for all of a
// kind, the edits a runtime makes to a container given that device: device
// nodes, mounts (the driver's libraries), env, and hooks.
//
// trainyard applies the edits itself, in bubblewrap's arguments: device
// nodes are bound (`--dev-bind`), mounts bound at their container paths
// (read-only unless the spec says rw), env set; of the hooks, the NVIDIA
// toolkit's `create-symlinks` is made in the run's writable layer and
// `update-ldcache` becomes LD_LIBRARY_PATH (there is no OCI runtime to run
// them); any other hook is refused, naming it, rather than skipped.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "node/image_root.h"
#include "node/volumes.h"

namespace trainyard::node {

// Where CDI spec files are looked for, as container runtimes look: a file
// in a later folder replaces an earlier one's device of the same name.
inline const std::vector<std::string>& DefaultCdiSpecDirs() {
  static const std::vector<std::string> dirs = {"/etc/cdi", "/var/run/cdi"};
  return dirs;
}

struct CdiDeviceNode {
  std::string path;       // in the container
  std::string host_path;  // on the machine ("" : the same)
};

struct CdiMount {
  std::string host_path;
  std::string container_path;
  bool read_only = true;
};

struct CdiEdits {
  std::vector<std::pair<std::string, std::string>> env;
  std::vector<CdiDeviceNode> device_nodes;
  std::vector<CdiMount> mounts;
  // create-symlinks: (target, link) pairs, the link a path in the container.
  std::vector<std::pair<std::string, std::string>> symlinks;
  // update-ldcache: folders for LD_LIBRARY_PATH.
  std::vector<std::string> library_dirs;
};

// The edits for `devices` (names in `kind`, "0" or a UUID) from the specs
// in `dirs`. NOT_FOUND when no spec names the kind (the message says how
// to make one) or a device; INVALID_ARGUMENT naming the file for a spec
// that does not parse, and FAILED_PRECONDITION naming a hook trainyard
// does not run.
Result<CdiEdits> CdiEditsFor(const std::vector<std::string>& dirs, const std::string& kind,
                             const std::vector<std::string>& devices);

// `edits`' device nodes (bound with their device files working) and
// mounts, as the sandbox's other mounts.
Mounts CdiMounts(const CdiEdits& edits);

// Makes `edits`' symlinks in the run's writable layer of `root`, their
// folders as a mount's (MakeMountParents). INVALID_ARGUMENT for a link
// that is not a plain absolute path.
Status MakeCdiSymlinks(const CdiEdits& edits, const ImageRoot& root);

// `edits`' env, and its library folders before any LD_LIBRARY_PATH the
// container has, into `env`.
void ApplyCdiEnv(const CdiEdits& edits, std::vector<std::pair<std::string, std::string>>& env);

}  // namespace trainyard::node
