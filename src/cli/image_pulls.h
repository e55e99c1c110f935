// `trainyard run --root image`: the images its manifests' containers name,
// pulled before anything runs, as each container's imagePullPolicy says
// (Kubernetes' default when unset), with the credentials of its pod's
// imagePullSecrets (Secrets among the manifests) over the host's, and
// progress on the terminal.
#pragma once

#include <iosfwd>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "cli/manifests.h"
#include "common/status.h"
#include "image/image_store.h"

namespace trainyard::cli {

struct ImageNeed {
  // Always wins over IfNotPresent, which wins over Never.
  std::string policy;
  // The imagePullSecrets of the pods that run it: (namespace, name).
  std::set<std::pair<std::string, std::string>> secrets;
};

// Each image reference the manifests' containers (and init containers, and
// TrainJobs' trainer) name.
std::map<std::string, ImageNeed> ImagesOf(const LoadedManifests& loaded);

// Pulls what `images` needs into `store`, with the Secrets `loaded` holds:
// FAILED_PRECONDITION for a Never image that is not here (the kubelet's
// ErrImageNeverPull); ErrImagePull with the pull's own error otherwise.
Status PullImages(image::ImageStore& store, const LoadedManifests& loaded,
                  const std::map<std::string, ImageNeed>& images, std::ostream& progress);

}  // namespace trainyard::cli
