// One image layer (a tar, compressed or not) unpacked into a directory of
// its own, ready to be a lower layer of an overlay mount: the OCI
// whiteouts (`.wh.<name>`, `.wh..wh..opq`) become overlayfs's (a 0:0
// character device, an opaque directory's xattr).
//
// A layer is not trusted: an entry that would land outside the directory
// (an absolute path, "..", a write through a symlink the layer made) is
// refused and nothing of the layer is kept.
#pragma once

#include <string>

#include "common/status.h"

namespace trainyard::image {

struct UnpackOptions {
  // Keep the files' owners and extended attributes (trainyard is root).
  // Otherwise every file is trainyard's own user's and opaque directories
  // are marked with the `user.` xattr that an unprivileged overlay mount
  // (`userxattr`) reads.
  bool privileged = false;
};

struct UnpackedLayer {
  uint64_t bytes = 0;  // regular files' sizes, in all
  uint64_t entries = 0;
};

// Unpacks `blob` into `dest`, which must not exist yet: the layer goes into
// a sibling temporary directory first and is renamed there whole, so a
// crash never leaves half a layer under `dest`.
Result<UnpackedLayer> UnpackLayer(const std::string& blob, const std::string& dest,
                                  const UnpackOptions& options);

// The xattr that marks an opaque directory for an overlay mount of this kind.
const char* OpaqueXattr(bool privileged);

}  // namespace trainyard::image
