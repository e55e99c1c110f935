#include "node/image_puller.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>

#include "image/pull_auth.h"
#include "image/puller.h"

namespace trainyard::node {

Result<std::set<std::string>> ImagesInUse(const store::ObjectReader& pods) {
  std::set<std::string> out;
  RETURN_IF_ERROR(pods.Scan("Pod", "", [&](const api::Json& pod) {
    for (const char* list : {"containers", "initContainers"}) {
      for (const api::Json& container : api::ArrayRefAt(pod, {"spec", list})) {
        Result<image::ImageReference> ref =
            image::ParseImageReference(api::StringAt(container, "image"));
        if (ref.ok()) out.insert(ref->String());
      }
    }
  }));
  return out;
}

ImagePuller::ImagePuller(const image::ImageStore& store, Collection collection)
    : store_(store), collection_(std::move(collection)), worker_([this] { Work(); }) {}

ImagePuller::~ImagePuller() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  queued_.NotifyAll();
  worker_.join();
}

void ImagePuller::Request(const image::ImageReference& ref, api::Json auths) {
  {
    MutexLock lock(mu_);
    if (!pending_.insert(ref.String()).second) return;
    ended_.erase(ref.String());
    queue_.push_back({ref, std::move(auths)});
  }
  queued_.NotifyOne();
}

bool ImagePuller::Pending(const std::string& ref) const {
  MutexLock lock(mu_);
  return pending_.contains(ref);
}

std::optional<ImagePuller::Outcome> ImagePuller::Take(const std::string& ref) {
  MutexLock lock(mu_);
  auto it = ended_.find(ref);
  if (it == ended_.end()) return std::nullopt;
  Outcome outcome = std::move(it->second);
  ended_.erase(it);
  return outcome;
}

Result<image::StoredImage> ImagePuller::Pull(const image::Puller& puller, const Queued& next) {
  if (next.auths.is_null()) return puller.Pull({.reference = next.ref});
  ASSIGN_OR_RETURN(image::AuthFile auth,
                   image::AuthFile::Write(
                       fmt::format("{}/auth-puller-{}.json", store_.root(), getpid()), next.auths));
  return puller.Pull({.reference = next.ref, .auth_file = auth.path()});
}

void ImagePuller::Work() {
  image::Puller puller(store_);
  for (;;) {
    Queued next;
    {
      MutexLock lock(mu_);
      queued_.Wait(mu_, [&]() TRAINYARD_REQUIRES(mu_) { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      next = std::move(queue_.front());
      queue_.pop_front();
    }
    const image::ImageReference& ref = next.ref;
    auto start = std::chrono::steady_clock::now();
    Outcome outcome;
    Result<image::StoredImage> pulled = Pull(puller, next);
    if (pulled.ok()) {
      outcome.bytes = pulled->size;
      outcome.status = store_.UnpackedLayers(*pulled).status();
    } else {
      outcome.status = pulled.status();
    }
    outcome.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    bool pulled_ok = outcome.status.ok();
    {
      MutexLock lock(mu_);
      pending_.erase(ref.String());
      ended_[ref.String()] = std::move(outcome);
    }
    // What was just pulled is kept by the minimum age until a pod uses it.
    if (pulled_ok) Collect();
  }
}

void ImagePuller::Collect() {
  if (!collection_.in_use) return;
  // Unread, any image might be in use: none is collected (CollectImages
  // fails with the reading's error).
  auto keep = [&]() -> Result<std::set<std::string>> {
    ASSIGN_OR_RETURN(std::set<std::string> in_use, collection_.in_use());
    MutexLock lock(mu_);
    in_use.insert(pending_.begin(), pending_.end());
    return in_use;
  };
  Result<image::GcResult> collected =
      image::CollectImages(store_, collection_.policy, keep, std::chrono::system_clock::now());
  if (!collection_.report) return;
  if (!collected.ok()) {
    collection_.report(
        fmt::format("image garbage collection failed: {}", collected.status().message()));
    return;
  }
  for (const std::string& reference : collected->pruned.removed) {
    collection_.report(image::DescribeRemoval(reference, *collected, collection_.policy));
  }
}

}  // namespace trainyard::node
