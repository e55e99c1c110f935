// Image garbage collection as the kubelet does it: when the filesystem
// holding the store is fuller than the high threshold, the images no pod
// uses are removed, least recently used first, until it is below the low
// one; an image pulled or used within the minimum age is kept, so that a
// pod about to start in it does not lose it.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <set>
#include <string>

#include "common/status.h"
#include "image/image_store.h"

namespace trainyard::image {

struct ImageGcPolicy {
  int high_percent = 85;              // the kubelet's --image-gc-high-threshold; 100: never
  int low_percent = 80;               // --image-gc-low-threshold
  std::chrono::seconds min_age{120};  // imageMinimumGCAge
};

// INVALID_ARGUMENT naming the flag when the thresholds are outside 0-100
// or the low one is above the high one, as the kubelet refuses them.
Status CheckImageGcPolicy(const ImageGcPolicy& policy);

struct DiskUsage {
  uint64_t capacity = 0;   // bytes
  uint64_t available = 0;  // to an unprivileged user, as df's
};
using DiskUsageOf = std::function<Result<DiskUsage>(const std::string& path)>;

// statvfs(3) of the filesystem that holds `path`.
Result<DiskUsage> FilesystemUsage(const std::string& path);

struct GcResult {
  int used_percent = 0;  // before
  PruneResult pruned;    // what went, and the bytes it freed
};

// The images pods use (normalized references), asked for only once the
// disk is over the high threshold (reading every pod is not free).
using ImagesInUseOf = std::function<Result<std::set<std::string>>()>;

// Collects what `policy` says from `store`, keeping the images `in_use`
// names whatever their age.
Result<GcResult> CollectImages(const ImageStore& store, const ImageGcPolicy& policy,
                               const ImagesInUseOf& in_use,
                               std::chrono::system_clock::time_point now,
                               const DiskUsageOf& usage = FilesystemUsage);

// What `trainyard run` and a server's log say of an image `result` removed.
std::string DescribeRemoval(const std::string& reference, const GcResult& result,
                            const ImageGcPolicy& policy);

}  // namespace trainyard::image
