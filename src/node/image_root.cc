#include "node/image_root.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "api/well_known.h"
#include "common/strings.h"

namespace trainyard::node {
namespace {

namespace fs = std::filesystem;

// overlayfs splits its options at ',' and lower directories at ':'.
Status UsableInOverlay(const std::string& path) {
  if (path.find_first_of(",:") != std::string::npos) {
    return FailedPreconditionError(fmt::format(
        "{} holds ',' or ':', which overlayfs's options cannot: use a --home without them", path));
  }
  return OkStatus();
}

size_t Depth(const std::string& path) { return SplitNonEmpty(path, '/').size(); }

}  // namespace

std::string ImageRoot::OverlayData() const {
  return fmt::format("lowerdir={},upperdir={},workdir={}", Join(layers, ":"), upper, work);
}

bool AsksForHostRoot(const api::Pod& pod) {
  auto it = pod.metadata.annotations.find(std::string(api::kRootAnnotation));
  return it != pod.metadata.annotations.end() && it->second == api::kHostRoot;
}

Result<ImageRoot> PrepareImageRoot(const image::ImageStore& store, const api::Container& container,
                                   const std::string& dir) {
  ASSIGN_OR_RETURN(image::ImageReference ref, image::ParseImageReference(container.image));
  ASSIGN_OR_RETURN(std::optional<image::StoredImage> stored, store.Find(ref));
  if (!stored) {
    return FailedPreconditionError(
        fmt::format("image \"{}\" is not on this machine: pull it (trainyard images pull {})",
                    ref.String(), container.image));
  }
  store.MarkUsed(*stored);  // the collector keeps what was just used
  ImageRoot root;
  ASSIGN_OR_RETURN(root.config, store.ConfigOf(*stored));
  ASSIGN_OR_RETURN(root.layers, store.UnpackedLayers(*stored));
  if (root.layers.empty()) {
    return FailedPreconditionError(fmt::format("image \"{}\" has no layers", ref.String()));
  }
  root.upper = dir + "/upper";
  root.work = dir + "/work";
  root.merged = dir + "/merged";
  std::error_code ec;
  fs::remove_all(dir, ec);  // a restart's root is a fresh one
  for (const std::string& made : {root.upper, root.work, root.merged}) {
    RETURN_IF_ERROR(UsableInOverlay(made));
    fs::create_directories(made, ec);
    if (ec) return InternalError(fmt::format("cannot make {}: {}", made, ec.message()));
  }
  // The root directory's own mode is the upper layer's: every user's to pass.
  fs::permissions(root.upper, fs::perms(0755), ec);
  for (const std::string& layer : root.layers) RETURN_IF_ERROR(UsableInOverlay(layer));
  return root;
}

Status MakeMountParents(const ImageRoot& root, const Mounts& mounts) {
  std::vector<std::string> paths = {"/etc/hosts", "/etc/resolv.conf"};
  for (const Mount& m : mounts) paths.push_back(m.mount_path);
  for (const std::string& path : paths) {
    fs::path relative = fs::path(path).lexically_normal().relative_path();
    fs::path at;
    for (auto part = relative.begin(); part != relative.end() && std::next(part) != relative.end();
         ++part) {
      at /= *part;
      fs::path made = fs::path(root.upper) / at;
      struct stat st;
      if (lstat(made.c_str(), &st) == 0) continue;
      // The image's own directory: a copy in the writable layer keeps its
      // mode and owner, as overlayfs's copy-up does (/tmp stays 1777).
      auto layer = std::find_if(root.layers.begin(), root.layers.end(), [&](const auto& l) {
        return lstat((fs::path(l) / at).c_str(), &st) == 0;
      });
      bool in_image = layer != root.layers.end() && S_ISDIR(st.st_mode);
      mode_t mode = in_image ? st.st_mode & 07777 : 0755;
      if (mkdir(made.c_str(), mode) != 0 || chmod(made.c_str(), mode) != 0 ||
          (in_image && chown(made.c_str(), st.st_uid, st.st_gid) != 0)) {
        return InternalError(
            fmt::format("cannot make {}: {}", made.string(), std::strerror(errno)));
      }
    }
  }
  return OkStatus();
}

Result<std::vector<std::string>> ImageSandboxArgs(const std::string& bwrap, const std::string& shim,
                                                  const SandboxSpec& spec, const ImageRoot& root) {
  std::vector<std::string> args = {bwrap,
                                   "--bind",
                                   root.merged,
                                   "/",
                                   "--proc",
                                   "/proc",
                                   "--dev",
                                   "/dev",
                                   "--ro-bind",
                                   shim,
                                   std::string(kShimInRoot),
                                   "--ro-bind-try",
                                   "/sys",
                                   "/sys"};
  Mounts mounts = spec.mounts;
  bool hosts_mounted = std::any_of(mounts.begin(), mounts.end(),
                                   [](const Mount& m) { return m.mount_path == "/etc/hosts"; });
  if (!spec.hosts_file.empty() && !hosts_mounted) {
    mounts.push_back({.mount_path = "/etc/hosts", .host_path = spec.hosts_file, .read_only = true});
  }
  // Names resolve as on the machine (the kubelet gives a pod the node's
  // resolver unless a cluster DNS is set).
  args.insert(args.end(), {"--ro-bind-try", "/etc/resolv.conf", "/etc/resolv.conf"});
  std::stable_sort(mounts.begin(), mounts.end(), [](const Mount& a, const Mount& b) {
    return Depth(a.mount_path) < Depth(b.mount_path);
  });
  for (const Mount& m : mounts) {
    fs::path at(m.mount_path);
    if (!at.is_absolute() || at.lexically_normal() != at ||
        std::find(at.begin(), at.end(), "..") != at.end() || at == "/") {
      return InvalidArgumentError(
          fmt::format("mountPath {} must be an absolute path other than /", m.mount_path));
    }
    const char* kind = m.read_only ? "--ro-bind" : m.devices ? "--dev-bind" : "--bind";
    args.insert(args.end(), {kind, m.host_path, m.mount_path});
  }
  if (spec.read_only_root) args.insert(args.end(), {"--remount-ro", "/"});
  args.insert(args.end(), {"--unshare-uts", "--hostname", spec.hostname, "--die-with-parent"});
  return args;
}

}  // namespace trainyard::node
