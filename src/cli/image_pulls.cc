#include "cli/image_pulls.h"

#include <fmt/format.h>

#include <chrono>
#include <ostream>

#include "image/puller.h"
#include "image/reference.h"

namespace trainyard::cli {
namespace {

int Rank(const std::string& policy) {
  return policy == "Always" ? 2 : policy == "IfNotPresent" ? 1 : 0;
}

void Note(const api::Json& container, std::map<std::string, std::string>& out) {
  std::string image = api::StringAt(container, "image");
  if (image.empty()) return;
  std::string policy = api::StringAt(container, "imagePullPolicy");
  if (policy.empty()) {
    Result<image::ImageReference> ref = image::ParseImageReference(image);
    policy = ref.ok() ? image::DefaultPullPolicy(*ref) : "IfNotPresent";
  }
  auto [it, added] = out.try_emplace(image, policy);
  if (!added && Rank(policy) > Rank(it->second)) it->second = policy;
}

// Every container list anywhere in `doc` (pod templates, a runtime's
// JobSet template, an Experiment's trial template), and a TrainJob's
// trainer, which names an image of its own. Depth is bounded by the
// decoder's.
void Walk(const api::Json& doc, std::map<std::string, std::string>& out) {
  if (doc.is_array()) {
    for (const api::Json& item : doc) Walk(item, out);
    return;
  }
  if (!doc.is_object()) return;
  for (const auto& [key, value] : doc.items()) {
    if ((key == "containers" || key == "initContainers") && value.is_array()) {
      for (const api::Json& container : value) {
        if (container.is_object()) Note(container, out);
      }
    } else if (key == "trainer" && value.is_object()) {
      Note(value, out);
    }
    Walk(value, out);
  }
}

}  // namespace

std::map<std::string, std::string> ImagesOf(const LoadedManifests& loaded) {
  std::map<std::string, std::string> out;
  for (const LoadedObject& object : loaded.objects) Walk(object.document, out);
  return out;
}

Status PullImages(image::ImageStore& store, const std::map<std::string, std::string>& images,
                  std::ostream& progress) {
  image::Puller puller(store);
  for (const auto& [text, policy] : images) {
    ASSIGN_OR_RETURN(image::ImageReference ref, image::ParseImageReference(text));
    ASSIGN_OR_RETURN(std::optional<image::StoredImage> held, store.Find(ref));
    if (held && policy != "Always") {
      progress << fmt::format("Container image \"{}\" already present on machine\n", text);
      continue;
    }
    if (!held && policy == "Never") {
      return FailedPreconditionError(fmt::format(
          "ErrImageNeverPull: container image \"{}\" is not present with pull policy of Never",
          text));
    }
    progress << fmt::format("Pulling image \"{}\"\n", text) << std::flush;
    auto start = std::chrono::steady_clock::now();
    ASSIGN_OR_RETURN(
        image::StoredImage pulled,
        puller.Pull({.reference = ref, .auth_file = "", .on_progress = [&](std::string_view l) {
                       if (l.starts_with("Copying")) progress << "  " << l << "\n" << std::flush;
                     }}));
    ASSIGN_OR_RETURN(std::vector<std::string> layers, store.UnpackedLayers(pulled));
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    progress << fmt::format("Successfully pulled image \"{}\" in {:.3f}s. Image size: {} bytes.\n",
                            text, seconds, pulled.size);
  }
  return OkStatus();
}

}  // namespace trainyard::cli
