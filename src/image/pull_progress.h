// What a pull shows on a terminal: a line per layer as skopeo copies it
// (fetched, or here already, from another image: skopeo says which only
// on a terminal of its own, so the store's blobs are looked at before the
// pull), then the layers and bytes in all, how many were fetched, and how
// long it took.
#pragma once

#include <set>
#include <string>
#include <string_view>

#include "image/image_store.h"

namespace trainyard::image {

class PullProgress {
 public:
  // `store`'s blobs before the pull.
  explicit PullProgress(const ImageStore& store);

  // One line skopeo printed; what to show for it ("" for nothing).
  std::string Line(std::string_view skopeo_line);
  // After the pull: "2 layers, 1.0 MiB (1 layer, 512.0 KiB fetched) in
  // 0.066s".
  std::string Summary(const StoredImage& image, double seconds) const;

 private:
  std::set<std::string> here_;  // the blobs' hex digests before the pull
};

}  // namespace trainyard::image
