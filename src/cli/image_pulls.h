// `trainyard run --root image`: the images its manifests' containers name,
// pulled before anything runs, as each container's imagePullPolicy says
// (Kubernetes' default when unset), with progress on the terminal.
#pragma once

#include <iosfwd>
#include <map>
#include <string>

#include "cli/manifests.h"
#include "common/status.h"
#include "image/image_store.h"

namespace trainyard::cli {

// Each image reference the manifests' containers (and init containers, and
// TrainJobs' trainer) name, with the policy that pulls it: Always wins
// over IfNotPresent, which wins over Never.
std::map<std::string, std::string> ImagesOf(const LoadedManifests& loaded);

// Pulls what `images` needs into `store`: FAILED_PRECONDITION for a Never
// image that is not here (the kubelet's ErrImageNeverPull); a pull's own
// error otherwise, naming the image.
Status PullImages(image::ImageStore& store, const std::map<std::string, std::string>& images,
                  std::ostream& progress);

}  // namespace trainyard::cli
