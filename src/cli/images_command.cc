#include "cli/images_command.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <ostream>
#include <set>

#include "cli/run_command.h"
#include "common/strings.h"
#include "image/image_store.h"
#include "image/pull_progress.h"
#include "image/puller.h"

namespace trainyard::cli {
namespace {

std::string ShortDigest(const std::string& digest) {
  return digest.substr(0, std::min<size_t>(digest.size(), 7 + 12));
}

int List(const image::ImageStore& store, std::ostream& out, std::ostream& err) {
  Result<std::vector<image::StoredImage>> images = store.List();
  if (!images.ok()) {
    err << "error: " << images.status().message() << "\n";
    return 1;
  }
  out << fmt::format("{:<60} {:<20} {:>7} {:>10}\n", "IMAGE", "DIGEST", "LAYERS", "SIZE");
  for (const image::StoredImage& i : *images) {
    out << fmt::format("{:<60} {:<20} {:>7} {:>10}\n", i.reference, ShortDigest(i.manifest_digest),
                       i.layers.size(), HumanBytes(i.size));
  }
  return 0;
}

int Pull(image::ImageStore& store, const ImagesOptions& options, std::ostream& out,
         std::ostream& err) {
  image::Puller puller(store);
  for (const std::string& text : options.images) {
    Result<image::ImageReference> ref = image::ParseImageReference(text);
    if (!ref.ok()) {
      err << "error: " << ref.status().message() << "\n";
      return 1;
    }
    out << fmt::format("Pulling {}\n", ref->String()) << std::flush;
    image::PullProgress shown(store);
    auto start = std::chrono::steady_clock::now();
    Result<image::StoredImage> pulled = puller.Pull(
        {.reference = *ref, .auth_file = options.auth_file, .on_progress = [&](std::string_view l) {
           std::string said = shown.Line(l);
           if (!said.empty()) out << "  " << said << "\n" << std::flush;
         }});
    if (!pulled.ok()) {
      err << "error: " << pulled.status().message() << "\n";
      return 1;
    }
    Result<std::vector<std::string>> layers = store.UnpackedLayers(*pulled);
    if (!layers.ok()) {
      err << "error: " << layers.status().message() << "\n";
      return 1;
    }
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    out << fmt::format("Pulled {} ({}: {})\n", pulled->reference,
                       ShortDigest(pulled->manifest_digest), shown.Summary(*pulled, seconds));
  }
  return 0;
}

int Remove(const image::ImageStore& store, const ImagesOptions& options, std::ostream& out,
           std::ostream& err) {
  Result<std::vector<image::StoredImage>> images = store.List();
  if (!images.ok()) {
    err << "error: " << images.status().message() << "\n";
    return 1;
  }
  std::set<std::string> keep;
  for (const image::StoredImage& i : *images) keep.insert(i.reference);
  std::set<std::string> removed;
  for (const std::string& text : options.images) {
    Result<image::ImageReference> ref = image::ParseImageReference(text);
    if (!ref.ok()) {
      err << "error: " << ref.status().message() << "\n";
      return 1;
    }
    if (options.action == "rm" && !keep.contains(ref->String())) {
      err << fmt::format("error: no image {} here (trainyard images lists them)\n", ref->String());
      return 1;
    }
    keep.erase(ref->String());
  }
  Result<image::PruneResult> pruned = store.Prune(keep);
  if (!pruned.ok()) {
    err << "error: " << pruned.status().message() << "\n";
    return 1;
  }
  for (const std::string& reference : pruned->removed) out << "Removed " << reference << "\n";
  out << fmt::format("Freed {}\n", HumanBytes(pruned->freed_bytes));
  return 0;
}

}  // namespace

int RunImages(const ImagesOptions& options, std::ostream& out, std::ostream& err) {
  std::string home = options.home.empty() ? DefaultHome() : options.home;
  image::ImageStore store(home + "/images", {.privileged = geteuid() == 0});
  if (options.action == "list") return List(store, out, err);
  if (options.action == "pull") return Pull(store, options, out, err);
  return Remove(store, options, out, err);  // rm, or prune: what no image uses
}

}  // namespace trainyard::cli
