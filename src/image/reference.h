// Image references as the kubelet reads a container's `image`: Docker's
// grammar, `[domain[:port]/]path[:tag][@digest]`, normalized as Docker Hub
// defaults them (`busybox` is `docker.io/library/busybox:latest`).
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace trainyard::image {

inline constexpr std::string_view kDockerHub = "docker.io";

struct ImageReference {
  std::string domain;  // "docker.io", "registry.example:5000"
  std::string path;    // "library/busybox"
  std::string tag;     // "latest" when neither a tag nor a digest is given
  std::string digest;  // "sha256:<64 hex>", or ""

  // "docker.io/library/busybox"
  std::string Repository() const;
  // The whole normalized reference: "docker.io/library/busybox:latest",
  // "host:5000/team/train@sha256:..." (both tag and digest when both given).
  std::string String() const;
  bool operator==(const ImageReference&) const = default;
};

// Parses `text` as the kubelet does; INVALID_ARGUMENT says what is wrong
// with it (the kubelet's InvalidImageName).
Result<ImageReference> ParseImageReference(std::string_view text);

// Kubernetes' default imagePullPolicy for an image that sets none: Always
// for `:latest` or no tag (without a digest), IfNotPresent otherwise.
std::string DefaultPullPolicy(const ImageReference& reference);

}  // namespace trainyard::image
