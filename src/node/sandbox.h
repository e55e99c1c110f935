// Replicas in namespaces of their own, through bubblewrap (bwrap): each
// sees its volumes at the very mountPath its manifest names, read-only
// where the manifest says so, and its pod's name as its host name, as in a
// container; the machine's other files it sees as they are.
//
// bwrap 0.8 (Debian 12's) mounts over what exists and creates what does
// not. Created on the machine's own filesystem, a mount point would stay
// there after the replica (or be refused, unprivileged). So a directory
// that lacks the next element of a mount path is shadowed: a tmpfs over it
// inside the namespace, each of its entries bound back, and the mount
// point made in the tmpfs. "/" is shadowed so when a mount path's first
// element is new ("/data").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "api/pod_object.h"
#include "common/mutex.h"
#include "common/status.h"
#include "node/volumes.h"
#include "runtime/local/process.h"

namespace trainyard::node {

// How many entries trainyard binds back into shadowed directories, in all,
// for one replica: each is a mount and three arguments.
inline constexpr size_t kMaxShadowedEntries = 1024;

struct SandboxSpec {
  std::string hostname;
  Mounts mounts;
  // The pod's hosts file, bound read-only at /etc/hosts unless a mount
  // already covers it; "" none.
  std::string hosts_file;
  // The container's securityContext.readOnlyRootFilesystem: "/" remounted
  // read-only once everything is bound (volumes stay as they are).
  bool read_only_root = false;
};

// Whether `container` asks for a read-only root (securityContext).
bool ReadOnlyRoot(const api::Container& container);

// bwrap's command line up to its program (runtime::ProcessSpec::sandbox).
// An error names the mount path it cannot make.
Result<std::vector<std::string>> SandboxArgs(const std::string& bwrap, const SandboxSpec& spec);

// The pod's /etc/hosts, as the kubelet writes it: localhost, and the pod's
// host name (with its FQDN when it has a subdomain) at `ip`, then its
// hostAliases.
std::string HostsFileOf(const api::Pod& pod, const std::string& ip);

// The path of bwrap on PATH, or "".
std::string FindBwrap();

// Whether replicas can run in a sandbox here: found out once, by starting
// one. bwrap runs as trainyard's own user whoever the replica runs as
// (runtime::ProcessSpec::sandbox).
class Sandboxes {
 public:
  // `bwrap`: its path, or "" with `why_none` saying why there is none.
  Sandboxes(std::string bwrap, std::string why_none);
  ~Sandboxes();
  Sandboxes(const Sandboxes&) = delete;
  Sandboxes& operator=(const Sandboxes&) = delete;
  const std::string& bwrap() const { return bwrap_; }
  // Why replicas cannot be sandboxed here, or "" when they can.
  std::string Problem() const;
  // The user namespace every sandbox joins (runtime::ProcessSpec::userns),
  // as a path trainyard itself can open, when trainyard is not root; ""
  // when it is (bwrap then makes none). Set once Problem() says "".
  std::string userns() const;

 private:
  // Starts the holder of the shared user namespace; why it cannot.
  std::string HoldUserNamespace() const TRAINYARD_REQUIRES(mu_);

  std::string bwrap_;
  std::string why_none_;
  mutable Mutex mu_;
  mutable std::optional<std::string> problem_ TRAINYARD_GUARDED_BY(mu_);
  // `unshare --user --map-current-user sleep infinity`: the namespace's
  // holder, which dies with trainyard (replicas keep it alive after).
  mutable std::optional<runtime::Process> holder_ TRAINYARD_GUARDED_BY(mu_);
  mutable std::string userns_ TRAINYARD_GUARDED_BY(mu_);  // /proc/self/fd/<userns_fd_>
  mutable int userns_fd_ TRAINYARD_GUARDED_BY(mu_) = -1;
};

}  // namespace trainyard::node
