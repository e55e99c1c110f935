// The flags `trainyard run` and `trainyard server` share about images: the
// kubelet's image garbage collection (image/image_gc.h) and where CDI specs
// are (node/cdi.h).
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "image/image_gc.h"

namespace trainyard::cli {

struct ImageFlags {
  int high_percent = 85;                   // --image-gc-high-threshold
  int low_percent = 80;                    // --image-gc-low-threshold
  std::string min_age = "2m";              // --image-minimum-gc-age, a Go duration
  std::vector<std::string> cdi_spec_dirs;  // --cdi-spec-dir; empty: the default
  // INVALID_ARGUMENT naming the flag when one is out of range.
  Result<image::ImageGcPolicy> Policy() const;
};

}  // namespace trainyard::cli
