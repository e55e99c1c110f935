// A container's root when it runs in its image: the image's layers,
// unpacked in the image store, stacked read-only under a writable layer of
// the run's own (overlayfs, mounted by trainyard-shim in the replica's
// mount namespace), bound as "/" by bubblewrap, with the pod's volumes,
// hosts file and the machine's resolv.conf mounted into it at their paths.
// Each run of a container (a restart too) starts from a fresh writable
// layer, as a container on Kubernetes does.
#pragma once

#include <string>
#include <vector>

#include "api/pod.h"
#include "common/status.h"
#include "image/image_config.h"
#include "image/image_store.h"
#include "node/sandbox.h"

namespace trainyard::node {

// Where the shim is bound inside an image root: bwrap's own /dev, so
// that nothing is added to the image's files.
inline constexpr std::string_view kShimInRoot = "/dev/.trainyard-shim";

// Whether `pod` asks for this machine's files rather than its images'
// (api::kRootAnnotation: host), where trainyard runs containers in images.
bool AsksForHostRoot(const api::Pod& pod);

struct ImageRoot {
  image::ImageConfig config;
  std::vector<std::string> layers;  // unpacked, top first
  std::string upper;                // the run's writable layer
  std::string work;                 // overlayfs's work directory
  std::string merged;               // where the shim mounts the root
  // overlayfs's mount data: lowerdir=...,upperdir=...,workdir=...
  std::string OverlayData() const;
};

// The container's image from `store`, its layers unpacked, with fresh
// directories for the run under `dir`. FAILED_PRECONDITION, naming the
// image and how to get it, when the store does not hold it.
Result<ImageRoot> PrepareImageRoot(const image::ImageStore& store, const api::Container& container,
                                   const std::string& dir);

// Makes, in the run's writable layer, each directory on the way to a
// mount that no layer of the image has: 0755, root's, as a container
// runtime makes them (bwrap would make them 0700, where a replica of
// another user could not pass).
Status MakeMountParents(const ImageRoot& root, const Mounts& mounts);

// bwrap's arguments for a sandbox whose root is `root.merged`: /proc, a
// /dev of its own (with the shim at kShimInRoot), /sys read-only, the
// hosts file and the machine's resolv.conf, and the volumes at their
// mountPath, shallowest first.
Result<std::vector<std::string>> ImageSandboxArgs(const std::string& bwrap, const std::string& shim,
                                                  const SandboxSpec& spec, const ImageRoot& root);

}  // namespace trainyard::node
