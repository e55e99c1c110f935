// RFC 6902 JSON patch, applied in place with kube-apiserver's bounds: at
// most 10,000 operations, and `copy` operations that together add no more
// than 3 MiB (its --json-patch-max-copy-bytes default). Without them a
// 1 KB patch of 26 copies doubles a value 26 times. nlohmann's own
// `patch()` copies the whole document per call and has neither bound.
#pragma once

#include <cstdint>

#include "api/json.h"
#include "common/status.h"

namespace trainyard::server {

struct JsonPatchLimits {
  size_t max_operations = 10'000;
  int64_t max_copy_bytes = 3 * 1024 * 1024;
};

// kResourceExhausted: too many operations (Kubernetes' 413); kInvalidArgument:
// a malformed patch or operation (400); kFailedPrecondition: an operation
// that does not apply to `doc` (a missing path, a failed test, the copy
// limit: 422). On any error `doc` may be partly patched: patch a copy.
Status ApplyJsonPatch(api::Json& doc, const api::Json& patch, const JsonPatchLimits& limits = {});

// The bytes `value` takes as compact JSON, counted without writing it and
// at most about `cap`: counting stops once past it.
int64_t JsonSize(const api::Json& value, int64_t cap);

}  // namespace trainyard::server
