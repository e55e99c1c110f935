#include "image/pull_progress.h"

#include <fmt/format.h>

#include <filesystem>

#include "common/strings.h"

namespace trainyard::image {
namespace {

// skopeo 1.9 writes "Copying blob sha256:<hex>" for each layer.
constexpr std::string_view kBlob = "Copying blob ";

std::string HexOf(std::string_view digest) {
  if (digest.starts_with("sha256:")) digest.remove_prefix(7);
  return std::string(digest.substr(0, digest.find(' ')));
}

}  // namespace

PullProgress::PullProgress(const ImageStore& store) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(store.BlobsDir() + "/sha256", ec)) {
    here_.insert(entry.path().filename().string());
  }
}

std::string PullProgress::Line(std::string_view line) {
  line = Trim(line);
  if (!line.starts_with(kBlob)) {
    return line.starts_with("Copying config") ? std::string(line) : std::string();
  }
  std::string hex = HexOf(line.substr(kBlob.size()));
  if (here_.contains(hex)) return fmt::format("Layer sha256:{:.12} here already", hex);
  return fmt::format("Fetching layer sha256:{:.12}", hex);
}

std::string PullProgress::Summary(const StoredImage& image, double seconds) const {
  uint64_t fetched_bytes = 0;
  size_t fetched = 0;
  for (const LayerBlob& layer : image.layers) {
    if (here_.contains(HexOf(layer.digest))) continue;
    ++fetched;
    fetched_bytes += layer.size;
  }
  size_t layers = image.layers.size();
  return fmt::format("{} layer{}, {} ({} layer{}, {} fetched) in {:.3f}s", layers,
                     layers == 1 ? "" : "s", HumanBytes(image.size), fetched,
                     fetched == 1 ? "" : "s", HumanBytes(fetched_bytes), seconds);
}

}  // namespace trainyard::image
