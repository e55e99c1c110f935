#include "cli/image_pulls.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ostream>

#include "api/registry.h"
#include "api/well_known.h"
#include "image/pull_auth.h"
#include "image/pull_progress.h"
#include "image/puller.h"
#include "image/reference.h"

namespace trainyard::cli {
namespace {

int Rank(const std::string& policy) {
  return policy == "Always" ? 2 : policy == "IfNotPresent" ? 1 : 0;
}

struct PodContext {
  std::string namespace_;
  std::set<std::pair<std::string, std::string>> secrets;
  // A TrainJob's trainer runs in a pod its runtime's template makes, which
  // may ask for the machine's files.
  bool trainer_on_host = false;
};

// A pod template (or pod) that asks for the machine's files: its
// containers' images are not run, so not pulled.
bool OnHost(const api::Json& doc) {
  return doc.contains("spec") && api::FindAt(doc, {"spec", "containers"}) != nullptr &&
         api::StringAt(doc, {"metadata", "annotations",
                             std::string(api::kRootAnnotation).c_str()}) == api::kHostRoot;
}

bool AnyOnHost(const api::Json& doc) {
  if (OnHost(doc)) return true;
  if (!doc.is_object() && !doc.is_array()) return false;
  for (const api::Json& item : doc) {
    if (AnyOnHost(item)) return true;
  }
  return false;
}

// Whether `doc`'s trainer (a TrainJob's) runs on the machine's files: a
// pod template of its own (a runtime patch) or of its runtime, among the
// manifests, asks for them.
bool TrainerOnHost(const api::Json& doc, const LoadedManifests& loaded) {
  const api::Json* ref = api::FindAt(doc, {"spec", "runtimeRef"});
  if (ref == nullptr) return false;
  if (AnyOnHost(doc)) return true;
  std::string name = api::StringAt(*ref, "name");
  std::string kind = api::StringAt(*ref, "kind");
  return std::any_of(loaded.objects.begin(), loaded.objects.end(), [&](const LoadedObject& o) {
    const api::Json& runtime = o.document;
    return api::StringAt(runtime, {"metadata", "name"}) == name &&
           (kind.empty() || api::StringAt(runtime, "kind") == kind) && AnyOnHost(runtime);
  });
}

void Note(const api::Json& container, const PodContext& pod,
          std::map<std::string, ImageNeed>& out) {
  std::string image = api::StringAt(container, "image");
  if (image.empty()) return;
  std::string policy = api::StringAt(container, "imagePullPolicy");
  if (policy.empty()) {
    Result<image::ImageReference> ref = image::ParseImageReference(image);
    policy = ref.ok() ? image::DefaultPullPolicy(*ref) : "IfNotPresent";
  }
  ImageNeed& need = out[image];
  if (need.policy.empty() || Rank(policy) > Rank(need.policy)) need.policy = policy;
  need.secrets.insert(pod.secrets.begin(), pod.secrets.end());
}

// Every container list anywhere in `doc` (pod templates, a runtime's
// JobSet template, an Experiment's trial template), with its pod spec's
// imagePullSecrets, and a TrainJob's trainer, which names an image of its
// own. Depth is bounded by the decoder's.
void Walk(const api::Json& doc, PodContext pod, std::map<std::string, ImageNeed>& out) {
  if (doc.is_array()) {
    for (const api::Json& item : doc) Walk(item, pod, out);
    return;
  }
  if (!doc.is_object() || OnHost(doc)) return;
  if (const api::Json* secrets = api::FindAt(doc, {"imagePullSecrets"});
      secrets && secrets->is_array() && doc.contains("containers")) {
    for (const api::Json& ref : *secrets) {
      std::string name = api::StringAt(ref, "name");
      if (!name.empty()) pod.secrets.emplace(pod.namespace_, name);
    }
  }
  for (const auto& [key, value] : doc.items()) {
    if ((key == "containers" || key == "initContainers") && value.is_array()) {
      for (const api::Json& container : value) {
        if (container.is_object()) Note(container, pod, out);
      }
    } else if (key == "trainer" && value.is_object() && !pod.trainer_on_host) {
      Note(value, pod, out);
    }
    Walk(value, pod, out);
  }
}

std::string NamespaceOf(const api::Json& object) {
  std::string ns = api::StringAt(object, {"metadata", "namespace"});
  return ns.empty() ? "default" : ns;
}

// The credentials for `need`'s pull: its pods' pull secrets over the
// host's, in a file removed when the pull is done; none when its pods name
// no secret (skopeo then reads the host's itself).
Result<std::optional<image::AuthFile>> AuthFor(const image::ImageStore& store,
                                               const LoadedManifests& loaded, const ImageNeed& need,
                                               std::ostream& progress) {
  if (need.secrets.empty()) return std::optional<image::AuthFile>();
  std::vector<api::Json> auths;
  std::vector<std::string> missing;
  for (const auto& [ns, name] : need.secrets) {
    const api::Json* found = nullptr;
    for (const LoadedObject& o : loaded.objects) {
      // The kind that holds secrets: a Secret.
      if (api::HoldsSecrets(api::StringAt(o.document, "kind")) && NamespaceOf(o.document) == ns &&
          api::StringAt(o.document, {"metadata", "name"}) == name) {
        found = &o.document;
      }
    }
    if (found == nullptr) {
      missing.push_back(ns + "/" + name);
      continue;
    }
    ASSIGN_OR_RETURN(api::Json secret_auths, image::AuthsOfSecret(*found));
    auths.push_back(std::move(secret_auths));
  }
  if (!missing.empty()) {
    progress << fmt::format(
        "warning: Unable to retrieve some image pull secrets ({}); attempting to pull the image "
        "may not succeed.\n",
        fmt::join(missing, ", "));
  }
  ASSIGN_OR_RETURN(api::Json merged, image::MergedAuths(auths, image::HostAuthFile()));
  ASSIGN_OR_RETURN(
      image::AuthFile file,
      image::AuthFile::Write(fmt::format("{}/auth-{}.json", store.root(), getpid()), merged));
  return std::optional<image::AuthFile>(std::move(file));
}

}  // namespace

std::map<std::string, ImageNeed> ImagesOf(const LoadedManifests& loaded) {
  std::map<std::string, ImageNeed> out;
  for (const LoadedObject& object : loaded.objects) {
    Walk(object.document,
         {.namespace_ = NamespaceOf(object.document),
          .secrets = {},
          .trainer_on_host = TrainerOnHost(object.document, loaded)},
         out);
  }
  return out;
}

Status PullImages(image::ImageStore& store, const LoadedManifests& loaded,
                  const std::map<std::string, ImageNeed>& images, std::ostream& progress) {
  image::Puller puller(store);
  for (const auto& [text, need] : images) {
    ASSIGN_OR_RETURN(image::ImageReference ref, image::ParseImageReference(text));
    ASSIGN_OR_RETURN(std::optional<image::StoredImage> held, store.Find(ref));
    if (held && need.policy != "Always") {
      progress << fmt::format("Container image \"{}\" already present on machine\n", text);
      continue;
    }
    if (!held && need.policy == "Never") {
      return FailedPreconditionError(fmt::format(
          "ErrImageNeverPull: container image \"{}\" is not present with pull policy of Never",
          text));
    }
    ASSIGN_OR_RETURN(std::optional<image::AuthFile> auth, AuthFor(store, loaded, need, progress));
    std::string auth_file = auth ? auth->path() : "";
    progress << fmt::format("Pulling image \"{}\"\n", text) << std::flush;
    auto start = std::chrono::steady_clock::now();
    image::PullProgress shown(store);
    auto on_progress = [&](std::string_view line) {
      std::string said = shown.Line(line);
      if (!said.empty()) progress << "  " << said << "\n" << std::flush;
    };
    Result<image::StoredImage> pulled =
        puller.Pull({.reference = ref, .auth_file = auth_file, .on_progress = on_progress});
    if (!pulled.ok()) {
      return Status(pulled.status().code(), "ErrImagePull: " + pulled.status().message());
    }
    ASSIGN_OR_RETURN(std::vector<std::string> layers, store.UnpackedLayers(*pulled));
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    progress << fmt::format("  {}\n", shown.Summary(*pulled, seconds))
             << fmt::format("Successfully pulled image \"{}\" in {:.3f}s. Image size: {} bytes.\n",
                            text, seconds, pulled->size);
  }
  return OkStatus();
}

}  // namespace trainyard::cli
