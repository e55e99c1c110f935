// The images this machine holds, under one folder (`<home>/images`):
//   oci/      an OCI image layout: every blob once, by digest, and
//             index.json naming each pulled reference (skopeo writes it);
//   layers/   each layer blob unpacked once (`sha256-<hex>/`), to be a
//             read-only lower layer of a pod's overlay root;
//   used/     a file per image (its manifest's hex) whose mtime is when
//             it was last pulled or started a container (image_gc.h);
//   staging/  a layout per pull in progress (its index.json alone: its
//             blobs go straight to oci/blobs), merged into oci/ when done;
//   lock      flock'd over index.json: exclusive while a finished pull is
//             merged or a prune rewrites it (milliseconds), shared by
//             readers;
//   use.lock  flock'd: shared by pulls and unpacks for their whole length,
//             exclusive by a prune while it moves what goes into trash/;
//   trash/    what a prune removes, once it has let the locks go.
// Both locks are taken use.lock first, and hold across processes, so that
// two trainyards (a server and `trainyard images`) agree; a reader never
// waits for a pull.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/status.h"
#include "image/image_config.h"
#include "image/layer_unpack.h"
#include "image/reference.h"

namespace trainyard::image {

struct LayerBlob {
  std::string digest;  // "sha256:<hex>" of the blob as stored (compressed)
  std::string media_type;
  uint64_t size = 0;
};

struct StoredImage {
  std::string reference;        // normalized, as pulled: "docker.io/library/busybox:latest"
  std::string manifest_digest;  // of the manifest as stored (skopeo may convert it to OCI's)
  std::string config_digest;
  std::vector<LayerBlob> layers;  // base first
  uint64_t size = 0;              // its blobs' sizes, in all
};

struct PruneResult {
  std::vector<std::string> removed;  // references
  uint64_t freed_bytes = 0;          // blobs and unpacked layers
};

class ImageStore {
 public:
  ImageStore(std::string root, UnpackOptions unpack);

  const std::string& root() const { return root_; }
  std::string LayoutDir() const;    // <root>/oci
  std::string LockPath() const;     // <root>/lock
  std::string UseLockPath() const;  // <root>/use.lock
  std::string BlobsDir() const;     // <root>/oci/blobs, skopeo's shared blob dir
  std::string StagingDir() const;   // <root>/staging

  // The image pulled as `reference`, or nullopt.
  Result<std::optional<StoredImage>> Find(const ImageReference& reference) const;
  // Every image held, in the order they were pulled.
  Result<std::vector<StoredImage>> List() const;
  Result<ImageConfig> ConfigOf(const StoredImage& image) const;
  // Its layers' unpacked directories, top first (overlayfs's lowerdir
  // order), unpacking those not yet unpacked.
  Result<std::vector<std::string>> UnpackedLayers(const StoredImage& image) const;
  // Records that a container starts in `image` now (the kubelet's
  // lastUsed), for the collector (image/image_gc.h); a pull is a use too.
  void MarkUsed(const StoredImage& image) const;
  // When `image` was last pulled or used.
  std::chrono::system_clock::time_point LastUsed(const StoredImage& image) const;
  // Names in the store the images a finished pull's layout (under
  // StagingDir(), its blobs in BlobsDir()) names, replacing those of the
  // same references.
  Status AddPulled(const std::string& staging_layout) const;
  // Forgets each image that is not in `keep` (references) and removes the
  // blobs and unpacked layers no image left uses, and what crashed pulls
  // and unpacks left.
  Result<PruneResult> Prune(const std::set<std::string>& keep) const;

 private:
  Result<std::vector<StoredImage>> ListLocked() const;
  // Prune's part under the locks: the index rewritten, and what goes moved
  // into `trash` (removed once the locks are let go).
  Result<PruneResult> ForgetUnkept(const std::set<std::string>& keep,
                                   const std::filesystem::path& trash) const;
  std::string BlobPath(const std::string& digest) const;
  std::string UsedPath(const std::string& manifest_digest) const;
  void Touch(const std::string& path) const;

  std::string root_;
  UnpackOptions unpack_;
};

// Holds the store's lock (flock) while it lives.
class StoreLock {
 public:
  static Result<StoreLock> Take(const std::string& path, bool exclusive);
  StoreLock(StoreLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  StoreLock(const StoreLock&) = delete;
  StoreLock& operator=(const StoreLock&) = delete;
  StoreLock& operator=(StoreLock&&) = delete;
  ~StoreLock();

 private:
  explicit StoreLock(int fd) : fd_(fd) {}
  int fd_;
};

}  // namespace trainyard::image
