// Pulls images into the store through skopeo (Debian's, the containers
// ecosystem's own client): it speaks the registry protocol, picks the
// host's platform from a multi-arch index, verifies every digest, reads
// credentials from the auth file given or the host's
// (`$REGISTRY_AUTH_FILE`, `~/.docker/config.json`, ...) and mirrors and
// insecure registries from containers-registries.conf(5). trainyard writes
// only the glue: which reference, which credentials, and what failed.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "common/status.h"
#include "image/image_store.h"
#include "image/reference.h"

namespace trainyard::image {

struct PullRequest {
  ImageReference reference;
  // A containers-auth.json(5) file with the pod's pull secrets (and the
  // host's credentials merged in: see pull_auth.h); "" for skopeo's
  // default places.
  std::string auth_file;
  // Each line skopeo prints ("Copying blob sha256:..."), for progress.
  std::function<void(std::string_view)> on_progress;
};

class Puller {
 public:
  // `skopeo`: its path or name on PATH.
  Puller(const ImageStore& store, std::string skopeo = "skopeo");

  // Copies the image into the store and returns it. UNAVAILABLE when the
  // registry could not be reached, UNAUTHENTICATED when it refused the
  // credentials, NOT_FOUND when it has no such image; each message names
  // the image and says skopeo's reason.
  Result<StoredImage> Pull(const PullRequest& request) const;

 private:
  const ImageStore& store_;
  std::string skopeo_;
};

// The status a failed skopeo run stands for, from what it printed.
Status PullFailure(const ImageReference& reference, int exit_code, std::string_view output);

}  // namespace trainyard::image
