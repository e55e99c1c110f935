#include "image/image_gc.h"

#include <fmt/format.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

namespace trainyard::image {
namespace {

int UsedPercent(const DiskUsage& usage) {
  if (usage.capacity == 0) return 0;
  uint64_t used = usage.capacity - std::min(usage.available, usage.capacity);
  return static_cast<int>(used * 100 / usage.capacity);
}

}  // namespace

Status CheckImageGcPolicy(const ImageGcPolicy& policy) {
  for (auto [flag, value] : {std::pair{"--image-gc-high-threshold", policy.high_percent},
                             std::pair{"--image-gc-low-threshold", policy.low_percent}}) {
    if (value < 0 || value > 100) {
      return InvalidArgumentError(fmt::format("{} {}: want a percentage, 0 to 100", flag, value));
    }
  }
  if (policy.low_percent > policy.high_percent) {
    return InvalidArgumentError(fmt::format(
        "--image-gc-low-threshold {} is above --image-gc-high-threshold {}: want low <= high",
        policy.low_percent, policy.high_percent));
  }
  if (policy.min_age.count() < 0) {
    return InvalidArgumentError("--image-minimum-gc-age: want a duration of 0s or more");
  }
  return OkStatus();
}

Result<DiskUsage> FilesystemUsage(const std::string& path) {
  struct statvfs st;
  if (statvfs(path.c_str(), &st) != 0) {
    return UnavailableError(fmt::format("cannot read the size of the filesystem of {}: {}", path,
                                        std::strerror(errno)));
  }
  return DiskUsage{.capacity = static_cast<uint64_t>(st.f_blocks) * st.f_frsize,
                   .available = static_cast<uint64_t>(st.f_bavail) * st.f_frsize};
}

Result<GcResult> CollectImages(const ImageStore& store, const ImageGcPolicy& policy,
                               const ImagesInUseOf& in_use_of,
                               std::chrono::system_clock::time_point now,
                               const DiskUsageOf& usage) {
  GcResult result;
  if (policy.high_percent >= 100) return result;  // the kubelet's "never"
  ASSIGN_OR_RETURN(DiskUsage before, usage(store.root()));
  result.used_percent = UsedPercent(before);
  if (result.used_percent < policy.high_percent) return result;
  // As the kubelet: free down to the low threshold.
  uint64_t used = before.capacity - std::min(before.available, before.capacity);
  uint64_t target = before.capacity / 100 * static_cast<uint64_t>(policy.low_percent);
  uint64_t to_free = used > target ? used - target : 0;
  ASSIGN_OR_RETURN(std::set<std::string> in_use, in_use_of());
  ASSIGN_OR_RETURN(std::vector<StoredImage> images, store.List());
  std::set<std::string> keep;
  std::vector<std::pair<std::chrono::system_clock::time_point, std::string>> candidates;
  for (const StoredImage& image : images) {
    keep.insert(image.reference);
    std::chrono::system_clock::time_point last_used = store.LastUsed(image);
    if (in_use.contains(image.reference) || now - last_used < policy.min_age) continue;
    candidates.emplace_back(last_used, image.reference);
  }
  std::sort(candidates.begin(), candidates.end());
  for (const auto& [last_used, reference] : candidates) {
    if (result.pruned.freed_bytes >= to_free) break;
    keep.erase(reference);
    ASSIGN_OR_RETURN(PruneResult pruned, store.Prune(keep));
    result.pruned.freed_bytes += pruned.freed_bytes;
    result.pruned.removed.insert(result.pruned.removed.end(), pruned.removed.begin(),
                                 pruned.removed.end());
  }
  return result;
}

std::string DescribeRemoval(const std::string& reference, const GcResult& result,
                            const ImageGcPolicy& policy) {
  return fmt::format(
      "Removed image {} (image garbage collection: the image store's disk was {}% used, above "
      "--image-gc-high-threshold {}%)",
      reference, result.used_percent, policy.high_percent);
}

}  // namespace trainyard::image
