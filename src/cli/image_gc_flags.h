// The kubelet's image garbage collection flags, as `trainyard run` and
// `trainyard server` take them (image/image_gc.h).
#pragma once

#include <string>

#include "common/status.h"
#include "image/image_gc.h"

namespace trainyard::cli {

struct ImageGcFlags {
  int high_percent = 85;       // --image-gc-high-threshold
  int low_percent = 80;        // --image-gc-low-threshold
  std::string min_age = "2m";  // --image-minimum-gc-age, a Go duration
  // INVALID_ARGUMENT naming the flag when one is out of range.
  Result<image::ImageGcPolicy> Policy() const;
};

}  // namespace trainyard::cli
